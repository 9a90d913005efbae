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

class DaemonGateway;
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
    // Records the sessions of `gateway`'s daemons from now on.
    void watch(DaemonGateway &gateway, protocol::PeerRole role);

    // The other live member holding that daemon's session, by name.
    std::optional<QString> otherHolderOf(protocol::PeerRole role, qint64 daemonId) const;

private:
    void claim(protocol::PeerRole role, qint64 daemonId);
    void release(protocol::PeerRole role, qint64 daemonId);

    SessionHolderStore &m_store;
    const MemberLease &m_lease;
    const Clock &m_clock;
    // Read again when older than kViewFreshnessMs.
    mutable QHash<QString, QString> m_others; // "kind/id" -> member name
    mutable QElapsedTimer m_othersRead;
};

} // namespace cloop::hub
