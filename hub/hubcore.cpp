#include "hub/hubcore.h"

#include "hub/domain/accesspolicy.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/clock.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/forwarderservice.h"
#include "hub/domain/runservice.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/bindingstore.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"
#include "hub/storage/requeststore.h"
#include "hub/storage/runstore.h"
#include "hub/storage/virtualexecutorstore.h"

namespace cloop::hub {

HubCore::HubCore(std::unique_ptr<Database> database, const Clock &clock, Options options)
    : m_database(std::move(database))
    , m_clock(clock)
    , m_tokens(std::make_unique<ApiTokenStore>(*m_database))
    , m_forwarderStore(std::make_unique<ForwarderStore>(*m_database))
    , m_executorStore(std::make_unique<ExecutorStore>(*m_database))
    , m_projects(std::make_unique<ProjectStore>(*m_database))
    , m_bindingStore(std::make_unique<BindingStore>(*m_database))
    , m_requestStore(std::make_unique<RequestStore>(*m_database))
    , m_runStore(std::make_unique<RunStore>(*m_database))
    , m_virtualExecutors(std::make_unique<VirtualExecutorStore>(*m_database))
    , m_policy(std::make_unique<AccessPolicy>(*m_projects))
    , m_events(std::make_unique<EventBus>())
    , m_bindings(
          std::make_unique<BindingService>(BindingService::Stores { *m_database, *m_forwarderStore,
                                               *m_projects, *m_bindingStore, *m_requestStore },
              *m_policy, *m_events, m_clock, options.requestLifetime))
    , m_forwarders(std::make_unique<ForwarderService>(
          *m_database, *m_forwarderStore, *m_bindings, *m_policy, *m_events))
    , m_runs(std::make_unique<RunService>(*m_runStore, *m_projects, *m_executorStore,
          *m_virtualExecutors, *m_policy, *m_events, m_clock))
{ }

HubCore::~HubCore() = default;

} // namespace cloop::hub
