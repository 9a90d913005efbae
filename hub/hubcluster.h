#pragma once

#include "common/result.h"
#include "hub/tls/devcertificate.h"

#include <QHostAddress>
#include <QObject>
#include <QUrl>

#include <chrono>
#include <memory>

namespace cloop {
class Clock;
}

namespace cloop::hub {

class ClusterBus;
class ClusterEventStore;
class ClusterMembers;
class DeviceStreams;
class HoldingsCheck;
class HubCore;
class HubGateways;
class MemberLease;
class MemberStore;
class PeerForwarderAccess;
class PeerLinks;
class PeerListener;
class PeerRelay;
class DirectStreamDoor;
class SessionHolders;

// A hub as a member of a cluster (its records in PostgreSQL): the view of
// the other members, the peer channel to them, the cluster bus, and the
// periodic check of what it holds, wired to the hub's own parts. The Hub
// makes one before its member joins (the peer port's URL is recorded with
// the join) and starts it once joined.
class HubCluster final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HubCluster)

public:
    struct Parts
    {
        HubCore &core;
        HubGateways &gateways;
        DeviceStreams &devices;
        MemberStore &members;
        const MemberLease &lease;
        const Clock &clock;
    };
    struct Options
    {
        QHostAddress peerAddress = QHostAddress::Any;
        quint16 peerPort = 7444;
        QUrl peerUrl; // derived from the public URL's host when empty
        QUrl publicUrl;
        std::chrono::milliseconds refreshEvery { 5'000 };
        std::chrono::milliseconds busPoll { 250 };
        std::chrono::milliseconds holdingsCheck { 3'000 };
    };

    // Listens on the peer port; nobody is admitted before start().
    static Result<std::unique_ptr<HubCluster>> listen(
        Parts parts, Options options, const TlsIdentity &tls, QObject *parent = nullptr);
    ~HubCluster() override;

    QUrl peerUrl() const { return m_peerUrl; }
    ClusterMembers &members() { return *m_members; }
    // Where this member's agents' direct legs to other members end up, and
    // the other members' agents' legs to the forwarders held here.
    const DirectStreamDoor *directStreamDoor() const { return m_door.get(); }

    // Once joined: links to the others, the relay for theirs, the bus.
    Status start(SessionHolders &holders);
    // A reloaded certificate, for the peer connections made from now on.
    void setIdentity(const TlsIdentity &tls);

Q_SIGNALS:
    // Who the other live members are, or where they are reached, changed.
    void membersChanged();

private:
    HubCluster(Parts parts, Options options, const TlsIdentity &tls, QObject *parent);

    Parts m_parts;
    Options m_options;
    TlsIdentity m_tls;
    QUrl m_peerUrl;
    std::unique_ptr<ClusterMembers> m_members;
    std::unique_ptr<PeerListener> m_listener;
    std::unique_ptr<PeerLinks> m_links;
    std::unique_ptr<PeerForwarderAccess> m_access;
    std::unique_ptr<PeerRelay> m_relay;
    std::unique_ptr<DirectStreamDoor> m_door;
    std::unique_ptr<ClusterEventStore> m_events;
    std::unique_ptr<ClusterBus> m_bus;
    std::unique_ptr<HoldingsCheck> m_holdingsCheck;
};

} // namespace cloop::hub
