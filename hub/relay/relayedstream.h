#pragma once

#include "common/protocol/channelframe.h"
#include "hub/relay/legjoin.h"
#include "hub/relay/relaythreads.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <memory>

namespace cloop::tunnel {
class TunnelConnection;
struct SpliceCounters;
} // namespace cloop::tunnel

namespace cloop::hub {

// The main thread's hold on one device stream carried on legs. It waits,
// at most the tickets' lifetime, for the forwarder's and the agent's leg
// connections (authenticated, their tickets checked by RelayLegDoor), then
// hands both to a relay thread (LegJoin) and follows the stream from here:
// joined() when both ends took their channels, ended() when it ended other
// than by end(), and legsFailed() instead when it ended before it joined.
// The bytes it carried are readable here at any time.
class RelayedStream final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RelayedStream)

public:
    enum class Side
    {
        Forwarder,
        Agent
    };
    struct Plan
    {
        qint64 forwarderId = 0;
        qint64 executorId = 0;
        LegJoin::Openings openings;
    };

    RelayedStream(RelayThreads &threads, Plan plan, std::chrono::milliseconds ticketLifetime,
        QObject *parent = nullptr);
    // Ends the stream as lost unless it ended.
    ~RelayedStream() override;

    const Plan &plan() const { return m_plan; }
    qint64 daemonOf(Side side) const
    {
        return side == Side::Forwarder ? m_plan.forwarderId : m_plan.executorId;
    }
    // The leg of `side` came, its ticket good: the connection (open,
    // welcomed) is this stream's from now on.
    void take(Side side, tunnel::TunnelConnection *connection);
    // Ends the stream (both legs, wherever they are) with this code and
    // reason; no ended() after it.
    void end(protocol::CloseCode code, const QString &reason);
    // The same for a cause found here (a ticket shown by another daemon):
    // ended() follows, as for an end that came from a leg.
    void abort(protocol::CloseCode code, const QString &reason);

    bool isJoined() const { return m_joined; }
    bool isOver() const { return m_over; }
    // Bytes carried from the forwarder to the agent and back.
    quint64 bytesToAgent() const;
    quint64 bytesToForwarder() const;

Q_SIGNALS:
    void joined();
    void ended(cloop::protocol::CloseCode code, const QString &reason);
    // The legs never carried the stream: a daemon did not come for its leg
    // within the tickets' lifetime, a leg was lost before the other came, a
    // daemon refused the stream on its leg (its dial had just given up), or
    // another daemon showed a ticket. Its holder carries it otherwise.
    void legsFailed(const QString &reason);

private:
    void handOverIfReady();
    void handOver();
    void finish(protocol::CloseCode code, const QString &reason, bool quietly);
    std::unique_ptr<tunnel::TunnelConnection> &slotOf(Side side)
    {
        return side == Side::Forwarder ? m_forwarderLeg : m_agentLeg;
    }

    RelayThreads &m_threads;
    Plan m_plan;
    QTimer m_expiry;
    std::chrono::milliseconds m_ticketLifetime;
    std::unique_ptr<tunnel::TunnelConnection> m_forwarderLeg;
    std::unique_ptr<tunnel::TunnelConnection> m_agentLeg;
    std::shared_ptr<tunnel::SpliceCounters> m_counters;
    RelayThreads::Handle m_join;
    bool m_handOverQueued = false;
    bool m_joined = false;
    bool m_over = false;
};

} // namespace cloop::hub
