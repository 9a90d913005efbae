#pragma once

#include "common/protocol/channelopen.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"

#include <QObject>

#include <functional>
#include <optional>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::hub {

class DaemonGateway;
class ForwarderStates;
class SessionHolders;

// Where each forwarder can be reached in the hub cluster: its session on
// this member, or the session another live member holds (through which
// its device's streams and tests go). A single hub is a cluster of one:
// without the cluster set, only this member's sessions count.
class ForwarderReach final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderReach)

public:
    // Opens a channel to a forwarder another member holds, through it.
    using RemoteOpener = std::function<Result<tunnel::Channel *>(
        qint64 memberId, qint64 forwarderId, const protocol::ChannelOpen &open)>;
    // What the member holding a forwarder needs to wait for an agent of
    // this member that comes for the device's bytes itself.
    struct DirectLegAsk
    {
        qint64 executorId = 0;
        protocol::AgentDeviceOpen agentOpen;
        QString ticket;
    };
    struct DirectLegOpened
    {
        tunnel::Channel *handle = nullptr; // the stream's handle, to the holder
        QString memberUrl; // where the agent dials the holder
    };
    // Asks the holder for a direct leg; refused with kNoDirectLeg when the
    // member cannot say where daemons reach the holder.
    using DirectOpener = std::function<Result<DirectLegOpened>(qint64 memberId, qint64 forwarderId,
        const protocol::ChannelOpen &open, const DirectLegAsk &ask)>;
    static constexpr QLatin1StringView kNoDirectLeg { "no_direct_leg" };

    ForwarderReach(
        DaemonGateway &forwarders, const ForwarderStates &states, QObject *parent = nullptr);

    // Once this member joined its cluster.
    void setCluster(
        const SessionHolders *holders, RemoteOpener opener, DirectOpener directOpener = {});

    bool isHeldHere(qint64 forwarderId) const;
    // The protocol of its session here; 0 when it is not held here.
    int protocolHere(qint64 forwarderId) const;
    // Held here or by another live member.
    bool isReachable(qint64 forwarderId) const;
    // The other live member holding it, by name.
    std::optional<QString> otherHolder(qint64 forwarderId) const;
    // What the forwarder last said of its device, wherever it is held.
    std::optional<protocol::DeviceState> deviceState(qint64 forwarderId) const;

    // A channel to the forwarder: on its tunnel when it is held here, else
    // through the member that holds it.
    Result<tunnel::Channel *> openChannel(qint64 forwarderId, const protocol::ChannelOpen &open);
    // A direct leg to a forwarder another member holds; kNoDirectLeg when
    // it is held here, by nobody, or the holder cannot be named to agents.
    Result<DirectLegOpened> openDirectLeg(
        qint64 forwarderId, const protocol::ChannelOpen &open, const DirectLegAsk &ask);

private:
    DaemonGateway &m_forwarders;
    const ForwarderStates &m_states;
    const SessionHolders *m_holders = nullptr;
    RemoteOpener m_remoteOpener;
    DirectOpener m_directOpener;
};

} // namespace cloop::hub
