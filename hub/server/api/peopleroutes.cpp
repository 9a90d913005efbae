#include "hub/server/api/peopleroutes.h"

#include "hub/domain/peopleservice.h"
#include "hub/domain/recordjson.h"

#include <QJsonArray>

namespace cloop::hub {

void PeopleRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/whoami"), [this](const ApiCall &call) {
        auto roles = m_service.rolesOf(call.caller);
        if (!roles)
            return ApiResponse::fromError(roles.error());
        QJsonArray out;
        for (const RoleGrant &grant : std::as_const(*roles))
            out.append(QJsonObject { { QStringLiteral("project"), grant.projectPath },
                { QStringLiteral("role"), roleName(grant.role) } });
        return ApiResponse::ok(QJsonObject { { QStringLiteral("user"), call.caller.userName },
            { QStringLiteral("hub_admin"), call.caller.hubAdmin },
            { QStringLiteral("token_id"), call.caller.tokenId },
            { QStringLiteral("roles"), out } });
    });
    registerProjectRoutes(router);
    registerUserRoutes(router);
}

void PeopleRoutes::registerProjectRoutes(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/projects"), [this](const ApiCall &call) {
        return ApiResponse::listOf(
            m_service.projects(call.caller), QLatin1StringView("projects"), projectJson);
    });

    router.add("POST", QStringLiteral("/api/projects"), [this](const ApiCall &call) {
        return ApiResponse::of(m_service.addProject(call.caller, call.body), projectJson, 201);
    });

    router.add("POST", QStringLiteral("/api/projects/roles"), [this](const ApiCall &call) {
        return ApiResponse::of(m_service.setRole(call.caller, call.body), projectJson);
    });
}

void PeopleRoutes::registerUserRoutes(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        return ApiResponse::listOf(
            m_service.users(call.caller), QLatin1StringView("users"), userJson);
    });

    router.add("POST", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        return ApiResponse::of(m_service.addUser(call.caller, call.body), userJson, 201);
    });
}

} // namespace cloop::hub
