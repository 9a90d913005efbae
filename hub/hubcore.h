#pragma once

#include "common/util/clock.h"

#include "common/result.h"

#include <chrono>
#include <memory>

namespace cloop::hub {

class AccessPolicy;
class ApiTokenStore;
class AuditService;
class BindingService;
class BindingStore;
class Database;
class EventBus;
class ExecutorService;
class ExecutorStore;
class ForwarderService;
class ForwarderStore;
class PeopleService;
class ProjectStore;
class RequestStore;
class RunLifecycle;
class RunService;
class RunStore;
class TokenService;
class VirtualExecutorStore;

// The hub without its network: the database and the stores over it, who
// may do what, the domain services that read and change the records, and
// the event bus they report on. The Hub adds the TLS port; tests use this
// alone.
//
// The server layer (routes, gateways, the dispatcher, the event stream)
// calls the services, which apply the access policy and publish what
// changed. The stores are for the services themselves, the hub's own start
// (its first administrator, its own executor) and tests.
class HubCore
{
    Q_DISABLE_COPY_MOVE(HubCore)

public:
    struct Options
    {
        std::chrono::seconds requestLifetime { 7 * 24 * 3600 };
    };

    HubCore(std::unique_ptr<Database> database, const Clock &clock, Options options);
    ~HubCore();

    const Clock &clock() const { return m_clock; }
    const AccessPolicy &policy() const { return *m_policy; }
    EventBus &events() { return *m_events; }

    ForwarderService &forwarders() { return *m_forwarders; }
    ExecutorService &executors() { return *m_executors; }
    BindingService &bindings() { return *m_bindings; }
    RunService &runs() { return *m_runs; }
    // A run's life after it was queued: the dispatcher's side of runs.
    RunLifecycle &runLifecycle() { return *m_runLifecycle; }
    PeopleService &people() { return *m_people; }
    TokenService &tokens() { return *m_tokens; }
    AuditService &audit() { return *m_audit; }

    struct Stores
    {
        Database &database;
        ApiTokenStore &tokens;
        ForwarderStore &forwarders;
        ExecutorStore &executors;
        ProjectStore &projects;
        BindingStore &bindings;
        RequestStore &requests;
        RunStore &runs;
        VirtualExecutorStore &virtualExecutors;
    };
    // Below the services; see above for whom.
    Stores stores();

private:
    std::unique_ptr<Database> m_database;
    const Clock &m_clock;
    std::unique_ptr<ApiTokenStore> m_tokenStore;
    std::unique_ptr<ForwarderStore> m_forwarderStore;
    std::unique_ptr<ExecutorStore> m_executorStore;
    std::unique_ptr<ProjectStore> m_projectStore;
    std::unique_ptr<BindingStore> m_bindingStore;
    std::unique_ptr<RequestStore> m_requestStore;
    std::unique_ptr<RunStore> m_runStore;
    std::unique_ptr<VirtualExecutorStore> m_virtualExecutorStore;
    std::unique_ptr<AccessPolicy> m_policy;
    std::unique_ptr<EventBus> m_events;
    std::unique_ptr<BindingService> m_bindings;
    std::unique_ptr<ForwarderService> m_forwarders;
    std::unique_ptr<ExecutorService> m_executors;
    std::unique_ptr<RunLifecycle> m_runLifecycle;
    std::unique_ptr<RunService> m_runs;
    std::unique_ptr<PeopleService> m_people;
    std::unique_ptr<TokenService> m_tokens;
    std::unique_ptr<AuditService> m_audit;
};

} // namespace cloop::hub
