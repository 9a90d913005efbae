#include "hub/server/forwarderreach.h"

#include "common/tunnel/channelmultiplexer.h"
#include "hub/cluster/sessionholders.h"
#include "hub/server/daemongateway.h"
#include "hub/server/forwarderstates.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

ForwarderReach::ForwarderReach(
    DaemonGateway &forwarders, const ForwarderStates &states, QObject *parent)
    : QObject(parent)
    , m_forwarders(forwarders)
    , m_states(states)
{ }

void ForwarderReach::setCluster(
    const SessionHolders *holders, RemoteOpener opener, DirectOpener directOpener)
{
    m_holders = holders;
    m_remoteOpener = std::move(opener);
    m_directOpener = std::move(directOpener);
}

int ForwarderReach::protocolHere(qint64 forwarderId) const
{
    return m_forwarders.protocolOf(forwarderId);
}

bool ForwarderReach::isHeldHere(qint64 forwarderId) const
{
    return m_forwarders.isConnected(forwarderId);
}

bool ForwarderReach::isReachable(qint64 forwarderId) const
{
    return isHeldHere(forwarderId) || otherHolder(forwarderId).has_value();
}

std::optional<QString> ForwarderReach::otherHolder(qint64 forwarderId) const
{
    if (!m_holders)
        return std::nullopt;
    return m_holders->otherHolderOf(protocol::PeerRole::Forwarder, forwarderId);
}

std::optional<protocol::DeviceState> ForwarderReach::deviceState(qint64 forwarderId) const
{
    if (isHeldHere(forwarderId) || !m_holders)
        return m_states.stateOf(forwarderId);
    if (!otherHolder(forwarderId))
        return std::nullopt;
    const auto holder = m_holders->otherHolderNow(protocol::PeerRole::Forwarder, forwarderId);
    if (!holder)
        return std::nullopt;
    return ForwarderStates::fromJson(holder->deviceState);
}

Result<tunnel::Channel *> ForwarderReach::openChannel(
    qint64 forwarderId, const protocol::ChannelOpen &open)
{
    if (tunnel::TunnelConnection *session = m_forwarders.session(forwarderId))
        return session->channels()->openChannel(open);
    if (m_holders) {
        if (const auto holder
            = m_holders->otherHolderNow(protocol::PeerRole::Forwarder, forwarderId)) {
            if (!m_remoteOpener)
                return Error::make(u"forwarder_offline"_s,
                    u"forwarder %1 is connected to hub member %2, which this member cannot "
                    "reach (no peer channel is configured)"_s.arg(
                        QString::number(forwarderId), holder->memberName));
            return m_remoteOpener(holder->memberId, forwarderId, open);
        }
    }
    return Error::make(u"forwarder_offline"_s,
        u"forwarder %1 has no live session anywhere in the hub cluster"_s.arg(forwarderId));
}

Result<ForwarderReach::DirectLegOpened> ForwarderReach::openDirectLeg(
    qint64 forwarderId, const protocol::ChannelOpen &open, const DirectLegAsk &ask)
{
    if (isHeldHere(forwarderId) || !m_holders || !m_directOpener)
        return Error::make(QString(kNoDirectLeg),
            u"forwarder %1 is held here, or this member has no direct legs"_s.arg(forwarderId));
    const auto holder = m_holders->otherHolderNow(protocol::PeerRole::Forwarder, forwarderId);
    if (!holder)
        return Error::make(QString(kNoDirectLeg),
            u"forwarder %1 has no live session anywhere in the hub cluster"_s.arg(forwarderId));
    return m_directOpener(holder->memberId, forwarderId, open, ask);
}

} // namespace cloop::hub
