#include "hub/domain/peopleservice.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/requestfields.h"
#include "hub/storage/database.h"

namespace cloop::hub {

PeopleService::PeopleService(Database &db, ProjectStore &projects, const AccessPolicy &policy,
    EventBus &events, const Clock &clock)
    : m_projects(projects)
    , m_policy(policy)
    , m_events(events)
    , m_clock(clock)
    , m_db(db)
{ }

Result<QList<RoleGrant>> PeopleService::rolesOf(const ApiPrincipal &caller)
{
    return m_projects.rolesOf(caller.userId);
}

Result<QList<ProjectRecord>> PeopleService::projects(const ApiPrincipal &caller)
{
    auto visible = m_policy.visibleProjects(caller);
    if (!visible)
        return visible.error();
    auto projects = m_projects.projects();
    if (!projects || !*visible)
        return projects;
    QList<ProjectRecord> theirs;
    for (const ProjectRecord &project : std::as_const(*projects)) {
        if ((*visible)->contains(project.id))
            theirs.append(project);
    }
    return theirs;
}

Result<ProjectRecord> PeopleService::addProject(const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::AddProject); !allowed)
        return allowed.error();
    auto path = requestfields::text(body, QLatin1StringView("path"), true);
    if (!path)
        return path.error();
    return m_projects.addProject(*path, caller.actor());
}

Result<ProjectRecord> PeopleService::setRole(const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::GrantRole); !allowed)
        return allowed.error();
    auto path = requestfields::text(body, QLatin1StringView("project"), true);
    auto userName = requestfields::text(body, QLatin1StringView("user"), true);
    auto roleText = requestfields::text(body, QLatin1StringView("role"), true);
    for (const auto *field : { &path, &userName, &roleText }) {
        if (!*field)
            return field->error();
    }
    std::optional<ProjectRole> role;
    if (*roleText != QLatin1String("none")) {
        role = parseRole(*roleText);
        if (!role)
            return Error::make(QStringLiteral("invalid_role"),
                QStringLiteral("a role is administrator, maintainer or none; not \"%1\"")
                    .arg(roleText->left(40)));
    }
    auto project = m_projects.findProject(*path);
    if (!project)
        return project.error();
    auto user = m_projects.findUser(*userName);
    if (!user)
        return user.error();
    Database::Transaction transaction(m_db);
    auto updated = m_projects.setRole(project->id, user->id, role, caller.actor());
    if (!updated)
        return updated.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kRoleChanged),
        { { QStringLiteral("user_id"), user->id }, { QStringLiteral("project"), project->path },
            { QStringLiteral("role"), role ? *roleText : QStringLiteral("none") } },
        std::nullopt, m_clock.now(), user->id });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "gave" << user->name
                            << (role ? roleName(*role) : QStringLiteral("no role")) << "in"
                            << project->path;
    return updated;
}

Result<QList<UserRecord>> PeopleService::users(const ApiPrincipal &caller)
{
    return m_policy.ifAllowed(
        caller, AccessPolicy::HubAction::ListUsers, [&] { return m_projects.users(); });
}

Result<UserRecord> PeopleService::addUser(const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::AddUser); !allowed)
        return allowed.error();
    auto name = requestfields::text(body, QLatin1StringView("name"), true);
    if (!name)
        return name.error();
    const QJsonValue hubAdmin = body.value(QLatin1String("hub_admin"));
    if (!hubAdmin.isUndefined() && !hubAdmin.isBool())
        return Error::make(QStringLiteral("invalid_request"),
            QStringLiteral("\"hub_admin\" must be true or false"));
    return m_projects.addUser(*name, hubAdmin.toBool(false), caller.actor());
}

} // namespace cloop::hub
