#include "hub/server/api/tokenroutes.h"

#include "hub/domain/tokenservice.h"
#include "hub/storage/database.h"

#include <QJsonArray>

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
        auto created = m_service.create(call.caller, call.body);
        if (!created)
            return ApiResponse::fromError(created.error());
        return ApiResponse::ok(QJsonObject { { QStringLiteral("token"), created->token },
                                   { QStringLiteral("user"), created->user.name } },
            201);
    });

    router.add("GET", QStringLiteral("/api/tokens"), [this](const ApiCall &call) {
        auto tokens = m_service.list(call.caller, call.queryValue(QStringLiteral("user")));
        if (!tokens)
            return ApiResponse::fromError(tokens.error());
        QJsonArray out;
        for (const ApiTokenRecord &token : std::as_const(*tokens)) {
            QJsonObject json = tokenJson(token);
            json.insert(QStringLiteral("current"), token.id == call.caller.tokenId);
            out.append(json);
        }
        return ApiResponse::ok(QJsonObject { { QStringLiteral("tokens"), out } });
    });

    router.add("POST", QStringLiteral("/api/tokens/{id}/revoke"), [this](const ApiCall &call) {
        auto revoked = m_service.revoke(call.caller, call.id());
        if (!revoked)
            return ApiResponse::fromError(revoked.error());
        return ApiResponse::ok(tokenJson(*revoked));
    });
}

} // namespace cloop::hub
