#include "hub/cluster/peerrelay.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "common/tunnel/tunnelconnection.h"
#include "hub/cluster/directstreamdoor.h"
#include "hub/cluster/peerrelayopen.h"

namespace cloop::hub {

using tunnel::Channel;
using tunnel::ChannelSplice;

PeerRelay::PeerRelay(OpenAtForwarder openAtForwarder, QObject *parent)
    : QObject(parent)
    , m_openAtForwarder(std::move(openAtForwarder))
    , m_refusalLog(lcHubCluster(), QStringLiteral("refused relay channels"))
{ }

PeerRelay::~PeerRelay()
{
    const auto splices = m_relays.keys();
    m_relays.clear();
    for (ChannelSplice *splice : splices) {
        splice->disconnect(this);
        // Not a normal close: neither end may take it for the device's own end.
        splice->end(protocol::CloseCode::ConnectionLost,
            QStringLiteral("the hub member holding the forwarder stopped relaying"));
    }
}

void PeerRelay::adopt(const PeerMember &from, tunnel::TunnelConnection *connection)
{
    adopt(from, connection->channels());
}

void PeerRelay::adopt(const PeerMember &from, tunnel::ChannelMultiplexer *channels)
{
    connect(channels, &tunnel::ChannelMultiplexer::channelRequested, this,
        [this, from](Channel *channel) { onRequested(from, channel); });
}

quint64 PeerRelay::bytesToForwarders() const
{
    quint64 total = m_endedToForwarders;
    for (auto it = m_relays.cbegin(); it != m_relays.cend(); ++it)
        total += it.key()->bytesAToB();
    return total;
}

quint64 PeerRelay::bytesToPeers() const
{
    quint64 total = m_endedToPeers;
    for (auto it = m_relays.cbegin(); it != m_relays.cend(); ++it)
        total += it.key()->bytesBToA();
    return total;
}

void PeerRelay::onRequested(const PeerMember &from, Channel *channel)
{
    const auto request = PeerRelayOpen::fromMetadata(channel->metadata());
    if (!request) {
        refuse(from, channel, request.error().message);
        return;
    }
    if (request->direct && !m_door) {
        refuse(from, channel, QStringLiteral("this member takes no direct legs"));
        return;
    }
    const auto target = m_openAtForwarder(request->forwarderId, request->open, from);
    if (!target) {
        refuse(from, channel, target.error().message);
        return;
    }
    if (*target == nullptr) {
        refuse(from, channel,
            QStringLiteral("forwarder %1 gave no channel").arg(request->forwarderId));
        return;
    }
    channel->accept();
    if (request->direct) {
        m_door->expect(from, request->forwarderId, *request->direct, channel, *target);
        return;
    }
    // The peer's channel is side A: A to B is toward the forwarder.
    auto *splice = new ChannelSplice(channel, *target, this);
    m_relays.insert(splice, Relay { from, request->forwarderId });
    connect(splice, &ChannelSplice::ended, this,
        [this, splice](
            protocol::CloseCode code, const QString &reason) { onEnded(splice, code, reason); });
    qCDebug(lcHubCluster).noquote() << "relaying a channel of" << describeMember(from)
                                    << "to forwarder" << request->forwarderId;
    Q_EMIT relayStarted(from, request->forwarderId);
}

void PeerRelay::refuse(const PeerMember &from, Channel *channel, const QString &reason)
{
    ++m_refused;
    if (m_refusalLog.admit())
        qCInfo(lcHubCluster).noquote()
            << "refused a relay channel of" << describeMember(from) << ":" << reason.left(200);
    channel->refuse(reason);
    Q_EMIT relayRefused(from, reason);
}

void PeerRelay::onEnded(ChannelSplice *splice, protocol::CloseCode code, const QString &reason)
{
    const auto it = m_relays.find(splice);
    if (it == m_relays.end())
        return;
    const Relay relay = *it;
    m_relays.erase(it);
    m_endedToForwarders += splice->bytesAToB();
    m_endedToPeers += splice->bytesBToA();
    splice->deleteLater();
    qCDebug(lcHubCluster).noquote()
        << "relay of" << describeMember(relay.from) << "to forwarder" << relay.forwarderId
        << "ended:" << tunnel::describeClose(code, reason);
    Q_EMIT relayEnded(relay.from, relay.forwarderId, code, reason);
}

} // namespace cloop::hub
