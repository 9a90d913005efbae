#include "hub/server/adminapi.h"

#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "hub/hubcore.h"
#include "hub/server/hubgateways.h"
#include "hub/storage/apitokenstore.h"

#include <QJsonDocument>

namespace cloop::hub {

AdminApi::AdminApi(HubCore &core, HubGateways &gateways, HubIdentity identity, RunLogStore *runLogs)
    : m_core(core),
      m_identity(std::move(identity)),
      m_deviceTester(gateways.forwarders()),
      m_forwarderRoutes(core.forwarders(), gateways.forwarders(), gateways.forwarderStates(), m_identity, m_deviceTester),
      m_executorRoutes(core.executorStore(), core.virtualExecutors(), gateways.executors(), core.policy(), core.events(),
                       m_identity),
      m_bindingRoutes(core.bindings(), core.clock()),
      m_peopleRoutes(core.projects(), core.tokens(), core.policy()),
      m_auditRoutes(core.database(), core.policy(), core.clock()),
      m_runRoutes(core.runs(), runLogs)
{
    m_forwarderRoutes.registerIn(m_router);
    m_executorRoutes.registerIn(m_router);
    m_bindingRoutes.registerIn(m_router);
    m_peopleRoutes.registerIn(m_router);
    m_auditRoutes.registerIn(m_router);
    m_runRoutes.registerIn(m_router);
}

ApiResponse AdminApi::handle(const ApiRequest &request)
{
    const QString &path = request.path;
    if (path == QLatin1String("/api/health")) {
        if (request.method != "GET")
            return ApiResponse::error(405, QStringLiteral("method_not_allowed"), QStringLiteral("use GET"));
        return ApiResponse::ok(QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")},
                                           {QStringLiteral("version"), m_identity.software},
                                           {QStringLiteral("protocol"), protocol::kVersion}});
    }
    if (!path.startsWith(QLatin1String("/api/")))
        return ApiResponse::error(404, QStringLiteral("not_found"), QStringLiteral("no such page: %1").arg(path));

    if (!request.authorization.startsWith("Bearer "))
        return ApiResponse::error(401, QStringLiteral("unauthorized"),
                                  QStringLiteral("an API token is required (Authorization: Bearer …)"));
    const QString bearer = QString::fromUtf8(request.authorization.mid(7)).trimmed();
    auto caller = m_core.tokens().authenticate(bearer);
    if (!caller) {
        qCWarning(lcHubApi).noquote() << "refused API call" << request.method << path << ":" << caller.error().code;
        return ApiResponse::fromError(caller.error());
    }

    if (request.body.size() > kMaxBodySize)
        return ApiResponse::error(413, QStringLiteral("body_too_large"),
                                  QStringLiteral("request body over %1 bytes").arg(kMaxBodySize));
    QJsonObject body;
    if (!request.body.trimmed().isEmpty()) {
        QJsonParseError parseError{};
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
        qCInfo(lcHubApi).noquote() << caller->userName << request.method << path << "->" << response.status
                                   << response.body.toObject().value(QLatin1String("error")).toObject().value(QLatin1String("code")).toString();
    return response;
}

} // namespace cloop::hub
