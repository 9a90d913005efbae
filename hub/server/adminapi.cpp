#include "hub/server/adminapi.h"

#include "common/util/duration.h"

#include "hub/cluster/memberlease.h"

#include "common/crypto/secrets.h"
#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "hub/domain/executorservice.h"
#include "hub/domain/forwarderservice.h"
#include "hub/domain/tokenservice.h"
#include "hub/hubcore.h"
#include "hub/server/hubgateways.h"
#include "hub/storage/database.h"

#include <QJsonDocument>

namespace cloop::hub {

AdminApi::AdminApi(HubCore &core, HubGateways &gateways, HubIdentity identity, RunLogStore *runLogs,
    ReleaseCatalog *releases)
    : m_core(core)
    , m_identity(std::move(identity))
    , m_deviceTester(gateways.forwarderReach())
    , m_forwarderRoutes(core.forwarders(), gateways.forwarders(), m_sessionHolders,
          m_forwarderTraffic, gateways.forwarderStates(), m_identity, m_deviceTester,
          gateways.forwarderUpgrades(), releases)
    , m_executorRoutes(core.executors(), gateways.executors(), m_sessionHolders, m_identity,
          gateways.executorUpgrades(), releases)
    , m_bindingRoutes(core.bindings(), core.clock())
    , m_peopleRoutes(core.people())
    , m_tokenRoutes(core.tokens())
    , m_auditRoutes(core.audit())
    , m_runRoutes(core.runs(), runLogs)
    , m_releaseRoutes(releases, core.policy())
{
    m_forwarderRoutes.registerIn(m_router);
    m_executorRoutes.registerIn(m_router);
    m_bindingRoutes.registerIn(m_router);
    m_peopleRoutes.registerIn(m_router);
    m_tokenRoutes.registerIn(m_router);
    m_auditRoutes.registerIn(m_router);
    m_runRoutes.registerIn(m_router);
    m_releaseRoutes.registerIn(m_router);
}

namespace {
const QLatin1StringView kHealthPath { "/api/health" };
} // namespace

ApiAdmission AdminApi::admit(
    const QByteArray &method, const QString &path, const QByteArray &authorization)
{
    if (path == kHealthPath) {
        if (method != "GET" && method != "HEAD")
            return { ApiResponse::error(
                         405, QStringLiteral("method_not_allowed"), QStringLiteral("use GET")),
                {}, 0 };
        return { std::nullopt, std::nullopt, 0 };
    }
    if (!authorization.startsWith("Bearer "))
        return { ApiResponse::error(401, QStringLiteral("unauthorized"),
                     QStringLiteral("an API token is required (Authorization: Bearer …)")),
            {}, 0 };
    const QString bearer = QString::fromUtf8(authorization.mid(7)).trimmed();
    if (const auto kind = secrets::kindOf(bearer); kind == secrets::SecretKind::ForwarderCredential
        || kind == secrets::SecretKind::AgentCredential)
        return admitDevice(method, path, bearer, kind);
    auto caller = m_core.tokens().authenticate(bearer);
    if (!caller)
        return { ApiResponse::fromError(caller.error()), {}, 0 };
    if (!path.startsWith(QLatin1String("/api/")))
        return { ApiResponse::error(404, QStringLiteral("not_found"),
                     QStringLiteral("no such page: %1").arg(path)),
            *caller, 0 };
    if (auto unrouted = m_router.refusal(method, path))
        return { std::move(unrouted), *caller, 0 };
    return { std::nullopt, *caller, kMaxBodySize };
}

ApiAdmission AdminApi::admitDevice(const QByteArray &method, const QString &path,
    const QString &credential, secrets::SecretKind kind)
{
    // A device's credential opens the release downloads and nothing else:
    // whatever else it asks is refused before the credential is even looked up.
    if (!ReleaseRoutes::isDevicePath(method, path))
        return { ApiResponse::error(401, QStringLiteral("wrong_credential_type"),
                     QStringLiteral("%1 cannot be used on the admin API, except to fetch "
                                    "releases; it takes a user's API token")
                         .arg(secrets::describe(kind))),
            {}, 0 };
    const bool forwarder = kind == secrets::SecretKind::ForwarderCredential;
    qint64 id = 0;
    std::optional<Error> refusal;
    if (forwarder) {
        auto record = m_core.forwarders().authenticate(credential);
        record ? void(id = record->id) : void(refusal = record.error());
    } else {
        auto record = m_core.executors().authenticate(credential);
        record ? void(id = record->id) : void(refusal = record.error());
    }
    if (refusal)
        return { ApiResponse::error(401, QStringLiteral("unauthorized"), refusal->message), {}, 0 };
    ApiPrincipal device;
    device.device = QStringLiteral("%1:%2")
                        .arg(forwarder ? QStringLiteral("forwarder") : QStringLiteral("executor"))
                        .arg(id);
    device.userName = device.device;
    return { std::nullopt, device, 0 };
}

ApiResponse AdminApi::handle(const ApiRequest &request)
{
    ApiAdmission admission = admit(request.method, request.path, request.authorization);
    if (admission.refusal)
        return *admission.refusal;
    if (request.body.size() > admission.bodyLimit)
        return ApiResponse::error(413, QStringLiteral("body_too_large"),
            QStringLiteral("request body over %1 bytes").arg(admission.bodyLimit));
    return handleAdmitted(request, admission.caller);
}

ApiResponse AdminApi::handleAdmitted(
    const ApiRequest &request, const std::optional<ApiPrincipal> &caller)
{
    const QString &path = request.path;
    if (!caller) {
        // Unauthenticated: what the last lease renewal and the last
        // statement found, never a query.
        QDateTime unreachableSince = m_core.stores().database.unreachableSince();
        if (m_memberLease && !m_memberLease->databaseReachable()
            && (!unreachableSince.isValid()
                || m_memberLease->unreachableSince() < unreachableSince))
            unreachableSince = m_memberLease->unreachableSince();
        const bool reachable = !unreachableSince.isValid();
        const QDateTime fullSince = m_core.stores().database.fullSince();
        const bool full = reachable && fullSince.isValid();
        QJsonObject health { { QStringLiteral("status"),
                                 reachable && !full ? QStringLiteral("ok")
                                                    : QStringLiteral("degraded") },
            { QStringLiteral("version"), m_identity.software },
            { QStringLiteral("protocol"), protocol::kVersion },
            { QStringLiteral("database"),
                !reachable ? QStringLiteral("unreachable")
                    : full ? QStringLiteral("full")
                           : QStringLiteral("ok") } };
        if (!reachable)
            health.insert(QStringLiteral("error"),
                QJsonObject { { QStringLiteral("code"), QStringLiteral("database_unreachable") },
                    { QStringLiteral("message"),
                        QStringLiteral("the cluster database is unreachable (since %1); live "
                                       "device streams go on, changes are refused")
                            .arg(util::formatUtcTime(unreachableSince)) } });
        else if (full)
            health.insert(QStringLiteral("error"),
                QJsonObject { { QStringLiteral("code"), QString(kStorageFull) },
                    { QStringLiteral("message"),
                        QStringLiteral("the hub's records have no space left (since %1); live "
                                       "device streams go on, changes are refused until space "
                                       "is freed")
                            .arg(util::formatUtcTime(fullSince)) } });
        return ApiResponse::ok(health, reachable && !full ? 200 : 503);
    }
    QJsonObject body;
    if (!request.body.trimmed().isEmpty()) {
        QJsonParseError parseError {};
        const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject())
            return ApiResponse::error(400, QStringLiteral("invalid_json"),
                QStringLiteral("the request body is not a JSON object%1")
                    .arg(parseError.error != QJsonParseError::NoError
                            ? QStringLiteral(": ") + parseError.errorString()
                            : QString()));
        body = doc.object();
    }
    const ApiResponse response = m_router.dispatch(request, *caller, body);
    if (response.status >= 400)
        qCInfo(lcHubApi).noquote()
            << caller->userName << request.method << path << "->" << response.status
            << response.body.toObject()
                   .value(QLatin1String("error"))
                   .toObject()
                   .value(QLatin1String("code"))
                   .toString();
    return response;
}

} // namespace cloop::hub
