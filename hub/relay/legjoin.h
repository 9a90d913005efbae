#pragma once

#include "common/protocol/channelframe.h"
#include "common/protocol/channelopen.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace cloop::tunnel {
class Channel;
class ChannelSplice;
class TunnelConnection;
struct SpliceCounters;
} // namespace cloop::tunnel

namespace cloop::hub {

// The relay thread's half of one device stream carried on legs: the
// forwarder's and the agent's own connections to this hub (their tickets
// checked on the main thread), each given its stream channel, spliced with
// their flow control as a stream on the tunnels is. Nothing here waits on
// the hub's database, API or sessions: that is why it runs elsewhere.
//
// Made on the main thread and moved, whole, with both connections (its
// children) to a relay thread, where start() and end() are called. Once
// over, it deletes itself when both legs finished closing (their close
// handshakes bounded as every tunnel's), so that each daemon reads why its
// stream ended. ended() comes once, unless end() came first.
class LegJoin final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LegJoin)

public:
    struct Openings
    {
        // The forwarder's opening and the agent's, without their legs.
        protocol::ChannelOpen toForwarder;
        protocol::AgentDeviceOpen toAgent;
        // The agent keeps what it attached when the forwarder's end goes
        // (ChannelSplice::setAResumable).
        bool agentResumable = false;
    };

    // Takes both connections (open, welcomed, their heartbeats on).
    LegJoin(tunnel::TunnelConnection *forwarder, tunnel::TunnelConnection *agent, Openings openings,
        std::shared_ptr<tunnel::SpliceCounters> counters, QObject *parent = nullptr);
    ~LegJoin() override;

    // Opens both stream channels; joined() once both are accepted.
    void start();
    // Ends the stream and both legs with this code and reason; no ended().
    void end(protocol::CloseCode code, const QString &reason);

Q_SIGNALS:
    void joined();
    void ended(cloop::protocol::CloseCode code, const QString &reason);

private:
    void joinIfReady();
    // Closes what is left, then says ended() unless `quietly`.
    void finish(protocol::CloseCode code, const QString &reason, bool quietly);
    void deleteWhenClosed();

    QPointer<tunnel::TunnelConnection> m_forwarderLeg;
    QPointer<tunnel::TunnelConnection> m_agentLeg;
    Openings m_openings;
    std::shared_ptr<tunnel::SpliceCounters> m_counters;
    QPointer<tunnel::Channel> m_forwarder;
    QPointer<tunnel::Channel> m_agent;
    tunnel::ChannelSplice *m_splice = nullptr;
    bool m_over = false;
    bool m_destroying = false;
};

} // namespace cloop::hub
