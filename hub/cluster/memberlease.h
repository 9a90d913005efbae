#pragma once

#include "common/result.h"
#include "hub/storage/memberstore.h"

#include <QObject>
#include <QTimer>

#include <chrono>

namespace cloop {
class Clock;
}

namespace cloop::hub {

// This process's membership of the hub cluster: it joins with a lease,
// renews it on a timer (one small write every few seconds: an idle member
// writes almost nothing), and ends it when it stops. Other members judge
// it dead once the lease lapses, so a member killed without a word is
// noticed within one lease.
class MemberLease final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MemberLease)

public:
    struct Options
    {
        std::chrono::milliseconds lease { 15'000 };
        // A third of the lease: two renewals may fail before it lapses.
        std::chrono::milliseconds renewEvery { 5'000 };
    };

    MemberLease(MemberStore &store, const Clock &clock, Options options, QObject *parent = nullptr);
    // Leaves: the others see at once that it stopped.
    ~MemberLease() override;

    Status join(const MemberStore::Joining &member);
    const MemberRecord &record() const { return m_record; }
    bool isMember() const { return m_member; }
    // Whether the last renewal reached the records; when not, since when.
    // /api/health says so, without a query of its own for every caller.
    bool databaseReachable() const { return !m_unreachableSince.isValid(); }
    QDateTime unreachableSince() const { return m_unreachableSince; }
    // Whether this member's view of the others can be trusted: the records
    // answered for at least one lease, so every live member has renewed
    // since (a member judges the others dead only after that).
    bool viewIsSettled() const;

Q_SIGNALS:
    // A newer start of this member (its data folder) took the record over.
    void superseded(const QString &why);

private:
    void renew();

    MemberStore &m_store;
    const Clock &m_clock;
    Options m_options;
    MemberRecord m_record;
    bool m_member = false;
    QDateTime m_unreachableSince;
    // The last renewal was refused for want of space.
    bool m_refusedForSpace = false;
    QDateTime m_reachableSince;
    QTimer m_renewal;
};

} // namespace cloop::hub
