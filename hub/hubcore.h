#pragma once

#include "common/result.h"

#include <chrono>
#include <memory>

namespace cloop::hub {

class AccessPolicy;
class ApiTokenStore;
class BindingService;
class BindingStore;
class Clock;
class Database;
class EventBus;
class ForwarderService;
class ExecutorStore;
class ForwarderStore;
class ProjectStore;
class RequestStore;
class RunService;
class RunStore;
class VirtualExecutorStore;

// The hub without its network: the database, the stores over it, who may
// do what, the services that change things, and the event bus they report
// on. The Hub adds the TLS port; tests use this alone.
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

    Database &database() { return *m_database; }
    const Clock &clock() const { return m_clock; }
    ApiTokenStore &tokens() { return *m_tokens; }
    ForwarderStore &forwarderStore() { return *m_forwarderStore; }
    ExecutorStore &executorStore() { return *m_executorStore; }
    ProjectStore &projects() { return *m_projects; }
    BindingStore &bindingStore() { return *m_bindingStore; }
    RequestStore &requestStore() { return *m_requestStore; }
    RunStore &runStore() { return *m_runStore; }
    VirtualExecutorStore &virtualExecutors() { return *m_virtualExecutors; }
    RunService &runs() { return *m_runs; }
    const AccessPolicy &policy() const { return *m_policy; }
    EventBus &events() { return *m_events; }
    BindingService &bindings() { return *m_bindings; }
    ForwarderService &forwarders() { return *m_forwarders; }

private:
    std::unique_ptr<Database> m_database;
    const Clock &m_clock;
    std::unique_ptr<ApiTokenStore> m_tokens;
    std::unique_ptr<ForwarderStore> m_forwarderStore;
    std::unique_ptr<ExecutorStore> m_executorStore;
    std::unique_ptr<ProjectStore> m_projects;
    std::unique_ptr<BindingStore> m_bindingStore;
    std::unique_ptr<RequestStore> m_requestStore;
    std::unique_ptr<RunStore> m_runStore;
    std::unique_ptr<VirtualExecutorStore> m_virtualExecutors;
    std::unique_ptr<AccessPolicy> m_policy;
    std::unique_ptr<EventBus> m_events;
    std::unique_ptr<BindingService> m_bindings;
    std::unique_ptr<ForwarderService> m_forwarders;
    std::unique_ptr<RunService> m_runs;
};

} // namespace cloop::hub
