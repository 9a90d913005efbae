#pragma once

#include "common/crypto/secrets.h"
#include "hub/server/api/apirouter.h"
#include "hub/server/api/auditroutes.h"
#include "hub/server/api/bindingroutes.h"
#include "hub/server/api/executorroutes.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/api/peopleroutes.h"
#include "hub/server/api/releaseroutes.h"
#include "hub/server/api/runroutes.h"
#include "hub/server/api/tokenroutes.h"
#include "hub/server/devicetester.h"

namespace cloop::hub {

class ForwarderTraffic;
class HubGateways;
class MemberLease;
class SessionHolders;
class RunLogStore;
class HubCore;

// What the API decides from a request's method, path and Authorization
// header alone, before a byte of its body is read.
struct ApiAdmission
{
    // Answer this at once (401, 404, 405): the body is never read.
    std::optional<ApiResponse> refusal;
    // Who is calling; empty for the routes anyone may call (/api/health).
    std::optional<ApiPrincipal> caller;
    qsizetype bodyLimit = 0;
};

// The admin REST API (JSON). Every route but /api/health needs a user's API
// token as a bearer token; errors are {"error": {"code", "message"}}.
// Routes live in small modules by resource, each over the domain service
// that checks the caller and makes the change (HubCore); this class
// authenticates, parses the body and dispatches.
class AdminApi
{
public:
    // Without a log store (tests without a data folder), run logs are not served.
    // Without a catalogue the hub offers no releases.
    AdminApi(HubCore &core, HubGateways &gateways, HubIdentity identity,
        RunLogStore *runLogs = nullptr, ReleaseCatalog *releases = nullptr);

    // Authentication first, so that nobody without a token learns which
    // routes exist or makes the hub read a body.
    ApiAdmission admit(
        const QByteArray &method, const QString &path, const QByteArray &authorization);
    // A request whose head admit() let through.
    // The route pattern of a request, for metrics; empty when none.
    QString routeOf(const QByteArray &method, const QString &path) const
    {
        return m_router.patternOf(method, path);
    }
    ApiResponse handleAdmitted(
        const ApiRequest &request, const std::optional<ApiPrincipal> &caller);
    // Both steps at once, for a request already read whole.
    ApiResponse handle(const ApiRequest &request);
    void setIdentity(HubIdentity identity) { m_identity = std::move(identity); }
    // Who holds the daemons the other members hold; not owned.
    void setSessionHolders(const SessionHolders *holders) { m_sessionHolders = holders; }
    // This hub's membership, whose renewals tell /api/health whether the
    // records answer; not owned.
    void setMemberLease(const MemberLease *lease) { m_memberLease = lease; }
    // What each forwarder's streams carried lately; not owned. Without it
    // GET /api/forwarders/traffic answers 503.
    void setForwarderTraffic(const ForwarderTraffic *traffic) { m_forwarderTraffic = traffic; }

    static constexpr qsizetype kMaxBodySize = 1024 * 1024;

private:
    ApiAdmission admitDevice(const QByteArray &method, const QString &path,
        const QString &credential, secrets::SecretKind kind);

    HubCore &m_core;
    HubIdentity m_identity;
    const SessionHolders *m_sessionHolders = nullptr;
    const MemberLease *m_memberLease = nullptr;
    const ForwarderTraffic *m_forwarderTraffic = nullptr;
    DeviceTester m_deviceTester;
    ForwarderRoutes m_forwarderRoutes;
    ExecutorRoutes m_executorRoutes;
    BindingRoutes m_bindingRoutes;
    PeopleRoutes m_peopleRoutes;
    TokenRoutes m_tokenRoutes;
    AuditRoutes m_auditRoutes;
    RunRoutes m_runRoutes;
    ReleaseRoutes m_releaseRoutes;
    ApiRouter m_router;
};

} // namespace cloop::hub
