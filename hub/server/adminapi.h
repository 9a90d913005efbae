#pragma once

#include "hub/server/api/apirouter.h"
#include "hub/server/api/bindingroutes.h"
#include "hub/server/api/executorroutes.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/api/peopleroutes.h"
#include "hub/server/api/runroutes.h"
#include "hub/server/devicetester.h"

namespace cloop::hub {

class HubGateways;
class RunLogStore;
class HubCore;

// The admin REST API (JSON). Every route but /api/health needs a user's API
// token as a bearer token; errors are {"error": {"code", "message"}}.
// Routes live in small modules by resource; this class authenticates,
// parses the body and dispatches.
class AdminApi
{
public:
    // Without a log store (tests without a data folder), run logs are not served.
    AdminApi(HubCore &core, HubGateways &gateways, HubIdentity identity, RunLogStore *runLogs = nullptr);

    ApiResponse handle(const ApiRequest &request);
    void setIdentity(HubIdentity identity) { m_identity = std::move(identity); }

    static constexpr qsizetype kMaxBodySize = 1024 * 1024;

private:
    HubCore &m_core;
    HubIdentity m_identity;
    DeviceTester m_deviceTester;
    ForwarderRoutes m_forwarderRoutes;
    ExecutorRoutes m_executorRoutes;
    BindingRoutes m_bindingRoutes;
    PeopleRoutes m_peopleRoutes;
    AuditRoutes m_auditRoutes;
    RunRoutes m_runRoutes;
    ApiRouter m_router;
};

} // namespace cloop::hub
