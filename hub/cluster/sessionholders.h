#pragma once

#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "hub/storage/sessionholderstore.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>

#include <optional>

namespace cloop {
class Clock;
}

namespace cloop::hub {

class MemberLease;

// This member's part of the shared record of who holds which daemon's
// session: a claim written when a daemon connects here, released when it
// goes (two writes per session, none while it is idle); and what the other
// live members hold, for the views that list every daemon of the cluster.
class SessionHolders final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SessionHolders)

public:
    // How old the other members' holdings shown may be.
    static constexpr qint64 kViewFreshnessMs = 500;

    SessionHolders(SessionHolderStore &store, const MemberLease &lease, const Clock &clock,
        QObject *parent = nullptr);

    // Claims of this member's earlier starts go: their sessions ended.
    Status forgetEarlierStarts();
    // The daemon's session is this member's from now (it just connected),
    // or no longer (it went). Written before the event that says so, so a
    // member that reads the event finds the holder.
    void claim(protocol::PeerRole role, qint64 daemonId);
    void release(protocol::PeerRole role, qint64 daemonId);

    // The other live member holding that daemon's session, by name, as
    // read at most kViewFreshnessMs ago.
    std::optional<QString> otherHolderOf(protocol::PeerRole role, qint64 daemonId) const;
    // The daemons of that kind other live members hold, as read at most
    // kViewFreshnessMs ago.
    QList<qint64> heldElsewhere(protocol::PeerRole role) const;
    // The same, read now, with what the holder knows of the daemon.
    std::optional<SessionHolderStore::Holder> otherHolderNow(
        protocol::PeerRole role, qint64 daemonId) const;
    // The live member holding it now, this one included, by name.
    std::optional<QString> currentHolderOf(protocol::PeerRole role, qint64 daemonId) const;
    QString memberName() const;
    // Another member said a session came or went: the next question reads
    // the record again.
    void invalidateView() { m_othersRead.invalidate(); }
    // What a forwarder held here said of its device, for the members that
    // plan runs with it.
    void recordDeviceState(qint64 forwarderId, const QJsonObject &state);

private:
    // Reads the other members' holdings when the view is older than kViewFreshnessMs.
    void refreshView() const;
    SessionHolderStore &m_store;
    const MemberLease &m_lease;
    const Clock &m_clock;
    // Read again when older than kViewFreshnessMs.
    mutable QHash<QString, QString> m_others; // "kind/id" -> member name
    mutable QElapsedTimer m_othersRead;
};

} // namespace cloop::hub
