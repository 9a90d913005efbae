#include "hub/server/api/tokenroutes.h"

#include "hub/domain/tokenservice.h"
#include "hub/storage/database.h"

namespace cloop::hub {

namespace {
QJsonObject tokenJson(const ApiTokenRecord &token)
{
    return QJsonObject { { QStringLiteral("id"), token.id },
        { QStringLiteral("user"), token.userName }, { QStringLiteral("label"), token.label },
        { QStringLiteral("created_at"), toDbTime(token.createdAt) },
        { QStringLiteral("revoked_at"),
            token.revokedAt.isValid() ? QJsonValue(toDbTime(token.revokedAt))
                                      : QJsonValue(QJsonValue::Null) } };
}
} // namespace

void TokenRoutes::registerIn(ApiRouter &router)
{
    router.add("POST", QStringLiteral("/api/tokens"), [this](const ApiCall &call) {
        return ApiResponse::of(
            m_service.create(call.caller, call.body),
            [](const TokenService::Created &created) {
                return QJsonObject { { QStringLiteral("token"), created.token },
                    { QStringLiteral("user"), created.user.name } };
            },
            201);
    });

    router.add("GET", QStringLiteral("/api/tokens"), [this](const ApiCall &call) {
        return ApiResponse::listOf(
            m_service.list(call.caller, call.queryValue(QStringLiteral("user"))),
            QLatin1StringView("tokens"), [&call](const ApiTokenRecord &token) {
                QJsonObject json = tokenJson(token);
                json.insert(QStringLiteral("current"), token.id == call.caller.tokenId);
                return json;
            });
    });

    router.add("POST", QStringLiteral("/api/tokens/{id}/revoke"), [this](const ApiCall &call) {
        return ApiResponse::of(m_service.revoke(call.caller, call.id()), tokenJson);
    });
}

} // namespace cloop::hub
