#include "hub/hubcluster.h"

#include "common/logging.h"
#include "hub/cluster/clusterbus.h"
#include "hub/cluster/clustermembers.h"
#include "hub/cluster/directstreamdoor.h"
#include "hub/cluster/memberlease.h"
#include "hub/cluster/peerlinks.h"
#include "hub/cluster/peerlistener.h"
#include "hub/cluster/peerrelay.h"
#include "hub/cluster/peerrelayopen.h"
#include "hub/hubcore.h"
#include "hub/server/daemongateway.h"
#include "hub/server/forwarderreach.h"
#include "hub/server/holdingscheck.h"
#include "hub/server/hubgateways.h"
#include "hub/server/peerforwarderaccess.h"
#include "hub/storage/clustereventstore.h"
#include "hub/storage/database.h"
#include "hub/storage/notificationlistener.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

HubCluster::HubCluster(Parts parts, Options options, const TlsIdentity &tls, QObject *parent)
    : QObject(parent)
    , m_parts(parts)
    , m_options(std::move(options))
    , m_tls(tls)
    , m_members(std::make_unique<ClusterMembers>(
          parts.members, parts.lease, parts.clock, m_options.refreshEvery))
{
    connect(m_members.get(), &ClusterMembers::changed, this, &HubCluster::membersChanged);
}

HubCluster::~HubCluster()
{
    // What relays and checks goes before what it uses; the forwarders'
    // reach, which outlives this, no longer opens through the links.
    if (m_links) {
        m_parts.gateways.forwarderReach().setCluster(nullptr, {});
        m_parts.gateways.executors().setStreamDoor({});
    }
    m_holdingsCheck.reset();
    m_bus.reset();
    m_relay.reset();
    m_door.reset();
    m_links.reset();
    m_listener.reset();
}

Result<std::unique_ptr<HubCluster>> HubCluster::listen(
    Parts parts, Options options, const TlsIdentity &tls, QObject *parent)
{
    std::unique_ptr<HubCluster> cluster(new HubCluster(parts, std::move(options), tls, parent));
    PeerListener::Options peer;
    peer.address = cluster->m_options.peerAddress;
    peer.port = cluster->m_options.peerPort;
    // The members' view answers for nobody until the member joined.
    auto listener = PeerListener::listen(peer, *cluster->m_members, tls.chain, tls.key);
    if (!listener)
        return listener.error();
    cluster->m_listener = std::move(*listener);
    cluster->m_peerUrl = cluster->m_options.peerUrl;
    if (cluster->m_peerUrl.isEmpty()) {
        cluster->m_peerUrl.setScheme(u"wss"_s);
        cluster->m_peerUrl.setHost(cluster->m_options.publicUrl.host());
        cluster->m_peerUrl.setPort(cluster->m_listener->port());
    }
    qCInfo(lcHubCluster).noquote()
        << "the other members reach this one at" << cluster->m_peerUrl.toString()
        << u"(mutual TLS, peer port %1)"_s.arg(cluster->m_listener->port());
    return cluster;
}

Status HubCluster::start(SessionHolders &holders)
{
    m_members->start();

    // The peer channel: this member's links to the others, and the relay
    // that serves theirs on the forwarders held here.
    PeerLinks::Options links;
    links.selfId = m_parts.lease.record().id;
    m_links = std::make_unique<PeerLinks>(*m_members, m_tls.chain, m_tls.key, links);
    m_access = std::make_unique<PeerForwarderAccess>(m_parts.core, m_parts.gateways.forwarders());
    m_relay = std::make_unique<PeerRelay>(
        [access = m_access.get()](qint64 forwarderId, const QJsonObject &open, const PeerMember &) {
            return access->open(forwarderId, open);
        });
    connect(m_listener.get(), &PeerListener::peerConnected, m_relay.get(),
        [relay = m_relay.get()](const PeerMember &member, tunnel::TunnelConnection *connection) {
            relay->adopt(member, connection);
        });
    // Agents of the other members come here for the streams of the
    // forwarders held here, with the tickets their members asked for.
    m_door = std::make_unique<DirectStreamDoor>();
    m_relay->setDirectStreamDoor(m_door.get());
    m_parts.gateways.executors().setStreamDoor(
        [door = m_door.get()](qint64 executorId, const QString &ticket,
            const std::function<tunnel::TunnelConnection *()> &open) {
            return door->admit(executorId, ticket, open);
        });
    // A forwarder another member holds is reached through it, or straight
    // at it by this member's agent.
    m_parts.gateways.forwarderReach().setCluster(
        &holders,
        [links = m_links.get()](
            qint64 memberId, qint64 forwarderId, const protocol::ChannelOpen &open) {
            return links->openChannel(memberId, PeerRelayOpen::of(forwarderId, open).toMetadata());
        },
        [links = m_links.get(), members = m_members.get()](qint64 memberId, qint64 forwarderId,
            const protocol::ChannelOpen &open,
            const ForwarderReach::DirectLegAsk &ask) -> Result<ForwarderReach::DirectLegOpened> {
            const auto member = members->other(memberId);
            if (!member || member->daemonUrl.isEmpty())
                return Error::make(QString(ForwarderReach::kNoDirectLeg),
                    u"hub member %1 names no address for daemons"_s.arg(memberId));
            const PeerDirectLeg leg { ask.ticket, ask.executorId, ask.agentOpen };
            auto handle = links->openChannel(
                memberId, PeerRelayOpen::of(forwarderId, open, leg).toMetadata());
            if (!handle)
                return handle.error();
            return ForwarderReach::DirectLegOpened { *handle, member->daemonUrl };
        });

    // The bus: the other members' events, woken by notifications.
    Database &database = m_parts.core.stores().database;
    m_events = std::make_unique<ClusterEventStore>(database);
    auto listener = NotificationListener::open(database, QString(ClusterEventStore::kChannel));
    if (!listener)
        qCWarning(lcHubCluster).noquote()
            << listener.error().message << "- the cluster's events are polled only";
    ClusterBus::Options bus;
    bus.poll = m_options.busPoll;
    m_bus = std::make_unique<ClusterBus>(*m_events, m_parts.core.events(), m_parts.lease,
        m_parts.clock, listener ? std::move(*listener) : nullptr, bus);

    // What this member holds is checked against the records every few
    // seconds, and at once when the bus may have missed events.
    m_holdingsCheck = std::make_unique<HoldingsCheck>(m_parts.core, m_parts.gateways.forwarders(),
        m_parts.gateways.executors(), m_parts.devices, m_options.holdingsCheck);
    connect(m_bus.get(), &ClusterBus::resynchronise, m_holdingsCheck.get(),
        [check = m_holdingsCheck.get()](const QString &why) { check->checkNow(why); });
    m_holdingsCheck->start();
    return m_bus->start();
}

void HubCluster::setIdentity(const TlsIdentity &tls)
{
    m_tls = tls;
    m_listener->setIdentity(tls.chain, tls.key);
    if (m_links)
        m_links->setIdentity(tls.chain, tls.key);
}

} // namespace cloop::hub
