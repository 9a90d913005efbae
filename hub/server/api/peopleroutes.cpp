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
        auto projects = m_service.projects(call.caller);
        if (!projects)
            return ApiResponse::fromError(projects.error());
        QJsonArray out;
        for (const ProjectRecord &project : std::as_const(*projects))
            out.append(projectJson(project));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("projects"), out } });
    });

    router.add("POST", QStringLiteral("/api/projects"), [this](const ApiCall &call) {
        auto project = m_service.addProject(call.caller, call.body);
        if (!project)
            return ApiResponse::fromError(project.error());
        return ApiResponse::ok(projectJson(*project), 201);
    });

    router.add("POST", QStringLiteral("/api/projects/roles"), [this](const ApiCall &call) {
        auto updated = m_service.setRole(call.caller, call.body);
        if (!updated)
            return ApiResponse::fromError(updated.error());
        return ApiResponse::ok(projectJson(*updated));
    });
}

void PeopleRoutes::registerUserRoutes(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        auto users = m_service.users(call.caller);
        if (!users)
            return ApiResponse::fromError(users.error());
        QJsonArray out;
        for (const UserRecord &user : std::as_const(*users))
            out.append(userJson(user));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("users"), out } });
    });

    router.add("POST", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        auto user = m_service.addUser(call.caller, call.body);
        if (!user)
            return ApiResponse::fromError(user.error());
        return ApiResponse::ok(userJson(*user), 201);
    });
}

} // namespace cloop::hub
