#pragma once

#include "common/util/jsonwriter.h"
#include "hub/server/api/apirouter.h"

#include <QList>
#include <QUrl>

namespace cloop::hub {

class DaemonGateway;
class DeviceTester;
class ForwarderService;
class ForwarderTraffic;
class ForwarderStates;
class SessionHolders;
struct ForwarderRecord;

// How records and events name a hub as the holder of a daemon's session:
// its public host:port, which tells cluster members apart too.
inline QString hubMemberName(const QUrl &publicUrl)
{
    return publicUrl.authority();
}

// What bundles tell daemons: where the hub is and which key it has.
struct HubIdentity
{
    QUrl publicUrl; // wss://host:port
    QString pin; // the TLS key's SPKI pin
    QString software;
    // The daemon URLs of the hub's cluster, in the order a new daemon tries
    // them; empty for a lone hub, whose bundles name publicUrl alone.
    QList<QUrl> clusterUrls {};
    QString member() const { return hubMemberName(publicUrl); }
    // The hub URLs a bundle carries.
    QList<QUrl> bundleUrls() const
    {
        return clusterUrls.isEmpty() ? QList<QUrl> { publicUrl } : clusterUrls;
    }
};

// /api/forwarders: enroll, list, read, revoke, test, and the traffic of each.
class DeviceUpgrades;
class ReleaseCatalog;

class ForwarderRoutes
{
public:
    // `holders` is read at each call: the hub sets it once it joined its
    // cluster; `traffic` too, once its device streams exist.
    ForwarderRoutes(ForwarderService &service, const DaemonGateway &gateway,
        const SessionHolders *const &holders, const ForwarderTraffic *const &traffic,
        const ForwarderStates &states, const HubIdentity &identity, DeviceTester &tester,
        DeviceUpgrades &upgrades, ReleaseCatalog *releases);
    void registerIn(ApiRouter &router);

    void writeForwarder(util::JsonWriter &out, const ForwarderRecord &record) const;
    QJsonObject forwarderJson(const ForwarderRecord &record) const;

private:
    ApiResponse traffic(const ApiCall &call) const;

    ForwarderService &m_service;
    const DaemonGateway &m_gateway;
    const SessionHolders *const &m_holders;
    const ForwarderTraffic *const &m_traffic;
    const ForwarderStates &m_states;
    const HubIdentity &m_identity;
    DeviceTester &m_tester;
    DeviceUpgrades &m_upgrades;
    ReleaseCatalog *m_releases;
};

} // namespace cloop::hub
