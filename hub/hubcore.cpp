#include "hub/hubcore.h"

#include "common/util/clock.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/auditservice.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/executorservice.h"
#include "hub/domain/forwarderservice.h"
#include "hub/domain/peopleservice.h"
#include "hub/domain/runlifecycle.h"
#include "hub/domain/runservice.h"
#include "hub/domain/tokenservice.h"
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
    , m_tokenStore(std::make_unique<ApiTokenStore>(*m_database))
    , m_forwarderStore(std::make_unique<ForwarderStore>(*m_database))
    , m_executorStore(std::make_unique<ExecutorStore>(*m_database))
    , m_projectStore(std::make_unique<ProjectStore>(*m_database))
    , m_bindingStore(std::make_unique<BindingStore>(*m_database))
    , m_requestStore(std::make_unique<RequestStore>(*m_database))
    , m_runStore(std::make_unique<RunStore>(*m_database))
    , m_virtualExecutorStore(std::make_unique<VirtualExecutorStore>(*m_database))
    , m_policy(std::make_unique<AccessPolicy>(*m_projectStore))
    , m_events(std::make_unique<EventBus>(*m_database))
    , m_bindings(
          std::make_unique<BindingService>(BindingService::Stores { *m_database, *m_forwarderStore,
                                               *m_projectStore, *m_bindingStore, *m_requestStore },
              *m_policy, *m_events, m_clock, options.requestLifetime))
    , m_forwarders(std::make_unique<ForwarderService>(
          *m_database, *m_forwarderStore, *m_bindings, *m_policy, *m_events))
    , m_executors(std::make_unique<ExecutorService>(
          *m_database, *m_executorStore, *m_virtualExecutorStore, *m_policy, *m_events))
    , m_runLifecycle(std::make_unique<RunLifecycle>(*m_runStore, *m_events, m_clock))
    , m_runs(std::make_unique<RunService>(*m_runStore, *m_runLifecycle, *m_projectStore,
          *m_executorStore, *m_virtualExecutorStore, *m_policy, *m_events, m_clock))
    , m_people(std::make_unique<PeopleService>(
          *m_database, *m_projectStore, *m_policy, *m_events, m_clock))
    , m_tokens(std::make_unique<TokenService>(
          *m_database, *m_tokenStore, *m_projectStore, *m_policy, *m_events, m_clock))
    , m_audit(std::make_unique<AuditService>(*m_database, *m_policy, m_clock))
{ }

HubCore::~HubCore() = default;

HubCore::Stores HubCore::stores()
{
    return Stores { *m_database, *m_tokenStore, *m_forwarderStore, *m_executorStore,
        *m_projectStore, *m_bindingStore, *m_requestStore, *m_runStore, *m_virtualExecutorStore };
}

} // namespace cloop::hub
