#include "hub/domain/accesspolicy.h"

namespace cloop::hub {

namespace {
Error forbidden(const QString &message)
{
    return Error::make(QStringLiteral("forbidden"), message);
}
} // namespace

Result<std::optional<ProjectRole>> AccessPolicy::roleOf(
    const ApiPrincipal &caller, qint64 projectId) const
{
    return m_projects.roleIn(caller.userId, projectId);
}

Status AccessPolicy::requireHubAdmin(const ApiPrincipal &caller, const QString &action) const
{
    if (caller.hubAdmin)
        return {};
    return forbidden(
        QStringLiteral("%1 needs a hub administrator; %2 is not one").arg(action, caller.userName));
}

Status AccessPolicy::requireAnyRole(const ApiPrincipal &caller, const QString &action) const
{
    if (caller.hubAdmin)
        return {};
    auto roles = m_projects.rolesOf(caller.userId);
    if (!roles)
        return roles.error();
    if (!roles->isEmpty())
        return {};
    return forbidden(
        QStringLiteral("%1 needs a role in a project; %2 has none").arg(action, caller.userName));
}

Status AccessPolicy::requireManage(
    const ApiPrincipal &caller, qint64 projectId, const QString &action) const
{
    if (caller.hubAdmin)
        return {};
    auto role = roleOf(caller, projectId);
    if (!role)
        return role.error();
    if (*role == ProjectRole::Administrator)
        return {};
    auto project = m_projects.findProject(projectId);
    return forbidden(
        QStringLiteral(
            "%1 needs the permission executor.manage on %2, held by hub administrators and "
            "the project's administrators; %3 is %4")
            .arg(action, project ? project->path : QStringLiteral("this project"), caller.userName,
                *role ? QStringLiteral("a ") + roleName(**role) : QStringLiteral("not a member")));
}

Status AccessPolicy::requireMember(
    const ApiPrincipal &caller, qint64 projectId, const QString &action) const
{
    if (caller.hubAdmin)
        return {};
    auto role = roleOf(caller, projectId);
    if (!role)
        return role.error();
    if (*role)
        return {};
    auto project = m_projects.findProject(projectId);
    return forbidden(QStringLiteral("%1 needs a role in %2; %3 has none")
                         .arg(action, project ? project->path : QStringLiteral("this project"),
                             caller.userName));
}

Result<std::optional<QList<qint64>>> AccessPolicy::visibleProjects(const ApiPrincipal &caller) const
{
    if (caller.hubAdmin)
        return std::optional<QList<qint64>>();
    auto roles = m_projects.rolesOf(caller.userId);
    if (!roles)
        return roles.error();
    QList<qint64> ids;
    for (const RoleGrant &grant : std::as_const(*roles))
        ids.append(grant.projectId);
    return std::optional<QList<qint64>>(ids);
}

Result<std::optional<QList<qint64>>> AccessPolicy::manageableProjects(
    const ApiPrincipal &caller) const
{
    if (caller.hubAdmin)
        return std::optional<QList<qint64>>();
    auto roles = m_projects.rolesOf(caller.userId);
    if (!roles)
        return roles.error();
    QList<qint64> ids;
    for (const RoleGrant &grant : std::as_const(*roles)) {
        if (grant.role == ProjectRole::Administrator)
            ids.append(grant.projectId);
    }
    return std::optional<QList<qint64>>(ids);
}

} // namespace cloop::hub
