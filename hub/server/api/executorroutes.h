#pragma once

#include "common/util/jsonwriter.h"
#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class DaemonGateway;
class DeviceUpgrades;
class ExecutorService;
class ReleaseCatalog;
class SessionHolders;
struct ExecutorRecord;
struct HubIdentity;

// /api/executors and /api/virtual-executors over ExecutorService: enroll
// an agent, list and read them, revoke (the live session ends); virtual
// executors listed and created.
class ExecutorRoutes
{
public:
    // `holders` is read at each call: the hub sets it once it joined its cluster.
    ExecutorRoutes(ExecutorService &service, const DaemonGateway &gateway,
        const SessionHolders *const &holders, const HubIdentity &identity, DeviceUpgrades &upgrades,
        ReleaseCatalog *releases)
        : m_service(service)
        , m_gateway(gateway)
        , m_holders(holders)
        , m_identity(identity)
        , m_upgrades(upgrades)
        , m_releases(releases)
    { }
    void registerIn(ApiRouter &router);

    void writeExecutor(util::JsonWriter &out, const ExecutorRecord &record) const;

private:
    void registerVirtualExecutorRoutes(ApiRouter &router);

    ExecutorService &m_service;
    const DaemonGateway &m_gateway;
    const SessionHolders *const &m_holders;
    const HubIdentity &m_identity;
    DeviceUpgrades &m_upgrades;
    ReleaseCatalog *m_releases;
};

} // namespace cloop::hub
