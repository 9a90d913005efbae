#include "hub/server/api/peopleroutes.h"

#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/clock.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/recordjson.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/projectstore.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace cloop::hub {

namespace {
QString actorOf(const ApiPrincipal &caller)
{
    return QStringLiteral("user:%1").arg(caller.userName);
}
} // namespace

void PeopleRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/whoami"), [this](const ApiCall &call) {
        auto roles = m_projects.rolesOf(call.caller.userId);
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

    router.add("GET", QStringLiteral("/api/projects"), [this](const ApiCall &call) {
        auto visible = m_policy.visibleProjects(call.caller);
        if (!visible)
            return ApiResponse::fromError(visible.error());
        auto projects = m_projects.projects();
        if (!projects)
            return ApiResponse::fromError(projects.error());
        QJsonArray out;
        for (const ProjectRecord &project : std::as_const(*projects)) {
            if (!*visible || (*visible)->contains(project.id))
                out.append(projectJson(project));
        }
        return ApiResponse::ok(QJsonObject { { QStringLiteral("projects"), out } });
    });

    router.add("POST", QStringLiteral("/api/projects"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::AddProject);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto path = call.text(QLatin1StringView("path"), true);
        if (!path)
            return ApiResponse::fromError(path.error());
        auto project = m_projects.addProject(*path, actorOf(call.caller));
        if (!project)
            return ApiResponse::fromError(project.error());
        return ApiResponse::ok(projectJson(*project), 201);
    });

    router.add("POST", QStringLiteral("/api/projects/roles"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::GrantRole);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto path = call.text(QLatin1StringView("project"), true);
        auto userName = call.text(QLatin1StringView("user"), true);
        auto roleText = call.text(QLatin1StringView("role"), true);
        for (const auto *field : { &path, &userName, &roleText }) {
            if (!*field)
                return ApiResponse::fromError(field->error());
        }
        std::optional<ProjectRole> role;
        if (*roleText != QLatin1String("none")) {
            role = parseRole(*roleText);
            if (!role)
                return ApiResponse::error(400, QStringLiteral("invalid_role"),
                    QStringLiteral("a role is administrator, maintainer or none; not \"%1\"")
                        .arg(roleText->left(40)));
        }
        auto project = m_projects.findProject(*path);
        if (!project)
            return ApiResponse::fromError(project.error());
        auto user = m_projects.findUser(*userName);
        if (!user)
            return ApiResponse::fromError(user.error());
        auto updated = m_projects.setRole(project->id, user->id, role, actorOf(call.caller));
        if (!updated)
            return ApiResponse::fromError(updated.error());
        m_events.publish(HubEvent { QString(hubevent::kRoleChanged),
            { { QStringLiteral("user_id"), user->id }, { QStringLiteral("project"), project->path },
                { QStringLiteral("role"), role ? *roleText : QStringLiteral("none") } },
            std::nullopt, QDateTime::currentDateTimeUtc(), user->id });
        return ApiResponse::ok(projectJson(*updated));
    });

    router.add("GET", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::ListUsers);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto users = m_projects.users();
        if (!users)
            return ApiResponse::fromError(users.error());
        QJsonArray out;
        for (const UserRecord &user : std::as_const(*users))
            out.append(userJson(user));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("users"), out } });
    });

    router.add("POST", QStringLiteral("/api/users"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::AddUser);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto name = call.text(QLatin1StringView("name"), true);
        if (!name)
            return ApiResponse::fromError(name.error());
        const QJsonValue hubAdmin = call.body.value(QLatin1String("hub_admin"));
        if (!hubAdmin.isUndefined() && !hubAdmin.isBool())
            return ApiResponse::error(400, QStringLiteral("invalid_request"),
                QStringLiteral("\"hub_admin\" must be true or false"));
        auto user = m_projects.addUser(*name, hubAdmin.toBool(false), actorOf(call.caller));
        if (!user)
            return ApiResponse::fromError(user.error());
        return ApiResponse::ok(userJson(*user), 201);
    });

    router.add("POST", QStringLiteral("/api/tokens"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::CreateToken);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto userName = call.text(QLatin1StringView("user"), true);
        if (!userName)
            return ApiResponse::fromError(userName.error());
        auto label = call.text(QLatin1StringView("label"));
        if (!label)
            return ApiResponse::fromError(label.error());
        auto user = m_projects.findUser(*userName);
        if (!user)
            return ApiResponse::fromError(user.error());
        auto token = m_tokens.createToken(user->id, label->left(200), actorOf(call.caller));
        if (!token)
            return ApiResponse::fromError(token.error());
        return ApiResponse::ok(QJsonObject { { QStringLiteral("token"), *token },
                                   { QStringLiteral("user"), user->name } },
            201);
    });

    registerTokenRoutes(router);
}

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

void PeopleRoutes::registerTokenRoutes(ApiRouter &router)
{
    // Everyone sees and may revoke their own tokens; hub administrators all.
    router.add("GET", QStringLiteral("/api/tokens"), [this](const ApiCall &call) {
        std::optional<qint64> owner = call.caller.userId;
        if (const QString name = call.queryValue(QStringLiteral("user"));
            !name.isEmpty() || call.caller.hubAdmin) {
            if (name.isEmpty()) {
                owner.reset();
            } else {
                auto user = m_projects.findUser(name);
                if (!user)
                    return ApiResponse::fromError(user.error());
                if (Status allowed
                    = m_policy.require(call.caller, user->id, AccessPolicy::UserAction::ListTokens);
                    !allowed)
                    return ApiResponse::fromError(allowed.error());
                owner = user->id;
            }
        }
        auto tokens = m_tokens.list(owner);
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
        auto token = m_tokens.find(call.id());
        if (!token)
            return ApiResponse::fromError(token.error());
        if (Status allowed
            = m_policy.require(call.caller, token->userId, AccessPolicy::UserAction::RevokeToken);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto revoked = m_tokens.revoke(call.id(), actorOf(call.caller));
        if (!revoked)
            return ApiResponse::fromError(revoked.error());
        m_events.publish(HubEvent { QString(hubevent::kTokenRevoked),
            { { QStringLiteral("token_id"), revoked->id },
                { QStringLiteral("user_id"), revoked->userId } },
            std::nullopt, QDateTime::currentDateTimeUtc(), revoked->userId });
        return ApiResponse::ok(tokenJson(*revoked));
    });
}

void AuditRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/audit"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::ReadAuditLog);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        QDateTime since;
        if (const QString text = call.queryValue(QStringLiteral("since")); !text.isEmpty()) {
            since = QDateTime::fromString(text, Qt::ISODateWithMs);
            if (!since.isValid()) {
                auto back = util::parseDuration(text);
                if (!back)
                    return ApiResponse::error(400, QStringLiteral("invalid_duration"),
                        QStringLiteral("\"since\" is an ISO 8601 time or a duration such as 2h; "
                                       "not \"%1\"")
                            .arg(text.left(60)));
                since = m_clock.now().addSecs(-back->count());
            }
        }
        auto entries = AuditLog(m_db).entries(since, call.queryValue(QStringLiteral("action")));
        if (!entries)
            return ApiResponse::fromError(entries.error());
        QJsonArray out;
        for (const AuditEntry &entry : std::as_const(*entries))
            out.append(QJsonObject { { QStringLiteral("id"), entry.id },
                { QStringLiteral("at"), toDbTime(entry.at) },
                { QStringLiteral("actor"), entry.actor },
                { QStringLiteral("action"), entry.action },
                { QStringLiteral("subject"), entry.subject },
                { QStringLiteral("details"), entry.details } });
        return ApiResponse::ok(QJsonObject { { QStringLiteral("entries"), out } });
    });
}

} // namespace cloop::hub
