#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class AccessPolicy;
class DaemonGateway;
class EventBus;
class ExecutorStore;
class VirtualExecutorStore;
struct ExecutorRecord;
struct HubIdentity;

// /api/executors: enroll an agent (hub administrators), list and read them
// (anyone with a role), revoke (hub administrators; the live session ends).
class ExecutorRoutes
{
public:
    ExecutorRoutes(ExecutorStore &store, VirtualExecutorStore &virtualExecutors,
        const DaemonGateway &gateway, const AccessPolicy &policy, EventBus &events,
        const HubIdentity &identity)
        : m_store(store)
        , m_virtualExecutors(virtualExecutors)
        , m_gateway(gateway)
        , m_policy(policy)
        , m_events(events)
        , m_identity(identity)
    { }
    void registerIn(ApiRouter &router);

    QJsonObject executorJson(const ExecutorRecord &record) const;

private:
    void registerVirtualExecutorRoutes(ApiRouter &router);

    ExecutorStore &m_store;
    VirtualExecutorStore &m_virtualExecutors;
    const DaemonGateway &m_gateway;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    const HubIdentity &m_identity;
};

} // namespace cloop::hub
