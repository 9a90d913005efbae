#pragma once

#include "hub/cluster/peerdirectory.h"
#include "hub/storage/memberstore.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <QUrl>

#include <chrono>
#include <functional>
#include <optional>

namespace cloop {
class Clock;
}

namespace cloop::hub {

class MemberLease;

// This member's view of the cluster's other live members, read from the
// members table every few seconds (a read, never a write) and whenever
// someone asks for a member it does not know yet: where daemons and peers
// reach each one and the key each one serves. Daemons are told every
// member's address and key, so that they can move to another member when
// theirs dies; peers are admitted by the keys listed here.
class ClusterMembers final : public QObject, public PeerDirectory
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ClusterMembers)

public:
    ClusterMembers(MemberStore &store, const MemberLease &lease, const Clock &clock,
        std::chrono::milliseconds refreshEvery, QObject *parent = nullptr);

    // Once this member joined: reads the table now and every few seconds.
    void start();
    // Reads the table now; changed() follows when the view changed.
    void refresh();

    // PeerDirectory: the peers this member admits and dials.
    std::optional<PeerMember> liveMemberWithPin(const QString &pin) override;
    std::optional<PeerMember> liveMember(qint64 id) override;

    // The other live members, by id.
    const QList<MemberRecord> &others() const { return m_others; }
    std::optional<MemberRecord> otherWithPin(const QString &pin);
    std::optional<MemberRecord> other(qint64 id);
    // The keys the other live members serve.
    QStringList otherPins() const;
    // Where daemons reach the cluster: this member first, then the others.
    QList<QUrl> daemonUrls() const;

Q_SIGNALS:
    void changed();

private:
    MemberStore &m_store;
    const MemberLease &m_lease;
    const Clock &m_clock;
    QList<MemberRecord> m_others;
    QTimer m_refresh;
    // A lookup that misses reads the table again at most this often: a
    // stranger's certificate costs no more than that.
    QElapsedTimer m_lastMissRead;
    bool refreshOnMiss();
    std::optional<MemberRecord> find(const std::function<bool(const MemberRecord &)> &matches);
};

} // namespace cloop::hub
