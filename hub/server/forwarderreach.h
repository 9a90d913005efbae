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

    ForwarderReach(
        DaemonGateway &forwarders, const ForwarderStates &states, QObject *parent = nullptr);

    // Once this member joined its cluster.
    void setCluster(const SessionHolders *holders, RemoteOpener opener);

    bool isHeldHere(qint64 forwarderId) const;
    // Held here or by another live member.
    bool isReachable(qint64 forwarderId) const;
    // The other live member holding it, by name.
    std::optional<QString> otherHolder(qint64 forwarderId) const;
    // What the forwarder last said of its device, wherever it is held.
    std::optional<protocol::DeviceState> deviceState(qint64 forwarderId) const;

    // A channel to the forwarder: on its tunnel when it is held here, else
    // through the member that holds it.
    Result<tunnel::Channel *> openChannel(qint64 forwarderId, const protocol::ChannelOpen &open);

private:
    DaemonGateway &m_forwarders;
    const ForwarderStates &m_states;
    const SessionHolders *m_holders = nullptr;
    RemoteOpener m_remoteOpener;
};

} // namespace cloop::hub
