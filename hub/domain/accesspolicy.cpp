#include "hub/domain/accesspolicy.h"

#include "hub/domain/eventbus.h"
#include "hub/storage/requeststore.h"

namespace cloop::hub {

namespace {

Error forbidden(const QString &message)
{
    return Error::make(QStringLiteral("forbidden"), message);
}

// Who may act, and how a refusal names the action.
template <typename Who> struct Rule
{
    Who who;
    QLatin1StringView action;
};

enum class HubWide
{
    Administrator, // a hub administrator
    AnyRole, // anyone with a role in some project
};

Rule<HubWide> ruleFor(AccessPolicy::HubAction action)
{
    using A = AccessPolicy::HubAction;
    switch (action) {
    case A::EnrollForwarder:
        return { HubWide::Administrator,
            QLatin1StringView("enrolling a forwarder (executor.manage)") };
    case A::RevokeForwarder:
        return { HubWide::Administrator,
            QLatin1StringView("revoking a forwarder (executor.manage)") };
    case A::TestForwarder:
        return { HubWide::Administrator,
            QLatin1StringView("testing a forwarder's device (executor.manage)") };
    case A::ListForwarders:
        return { HubWide::AnyRole, QLatin1StringView("listing forwarders") };
    case A::ReadForwarder:
        return { HubWide::AnyRole, QLatin1StringView("reading a forwarder") };
    case A::EnrollExecutor:
        return { HubWide::Administrator,
            QLatin1StringView("enrolling an executor (executor.manage)") };
    case A::RevokeExecutor:
        return { HubWide::Administrator,
            QLatin1StringView("revoking an executor (executor.manage)") };
    case A::ListExecutors:
        return { HubWide::AnyRole, QLatin1StringView("listing executors") };
    case A::ReadExecutor:
        return { HubWide::AnyRole, QLatin1StringView("reading an executor") };
    case A::CreateVirtualExecutor:
        return { HubWide::Administrator,
            QLatin1StringView("creating a virtual executor (executor.manage)") };
    case A::ListVirtualExecutors:
        return { HubWide::AnyRole, QLatin1StringView("listing virtual executors") };
    case A::ListBindings:
        return { HubWide::AnyRole, QLatin1StringView("listing bindings") };
    case A::AddProject:
        return { HubWide::Administrator, QLatin1StringView("adding a project") };
    case A::GrantRole:
        return { HubWide::Administrator, QLatin1StringView("granting a role") };
    case A::ListUsers:
        return { HubWide::Administrator, QLatin1StringView("listing users") };
    case A::AddUser:
        return { HubWide::Administrator, QLatin1StringView("adding a user") };
    case A::CreateToken:
        return { HubWide::Administrator, QLatin1StringView("creating an API token") };
    case A::ReadAuditLog:
        return { HubWide::Administrator, QLatin1StringView("reading the audit log") };
    case A::SubscribeToEvents:
        return { HubWide::AnyRole, QLatin1StringView("the event stream") };
    }
    Q_UNREACHABLE();
}

enum class InProject
{
    Manager, // executor.manage on the project: hub and project administrators
    Member, // any role in the project
};

Rule<InProject> ruleFor(AccessPolicy::ProjectAction action)
{
    using A = AccessPolicy::ProjectAction;
    switch (action) {
    case A::Bind:
        return { InProject::Manager, QLatin1StringView("binding a forwarder") };
    case A::Unbind:
        return { InProject::Manager, QLatin1StringView("unbinding") };
    case A::ApproveRequest:
        return { InProject::Manager, QLatin1StringView("approving a binding request") };
    case A::DenyRequest:
        return { InProject::Manager, QLatin1StringView("denying a binding request") };
    case A::RequestBinding:
        return { InProject::Member, QLatin1StringView("requesting a binding") };
    case A::ListBindings:
        return { InProject::Member, QLatin1StringView("listing bindings") };
    case A::StartRun:
        return { InProject::Member, QLatin1StringView("starting a run") };
    case A::ReadRun:
        return { InProject::Member, QLatin1StringView("reading a run") };
    }
    Q_UNREACHABLE();
}

// Another user's things are a hub administrator's business only.
QLatin1StringView othersAction(AccessPolicy::UserAction action)
{
    using A = AccessPolicy::UserAction;
    switch (action) {
    case A::ListTokens:
        return QLatin1StringView("listing another user's tokens");
    case A::RevokeToken:
        return QLatin1StringView("revoking another user's token");
    }
    Q_UNREACHABLE();
}

} // namespace

Status AccessPolicy::require(const ApiPrincipal &caller, HubAction action) const
{
    const auto rule = ruleFor(action);
    return rule.who == HubWide::Administrator ? requireHubAdmin(caller, rule.action)
                                              : requireAnyRole(caller, rule.action);
}

Status AccessPolicy::require(
    const ApiPrincipal &caller, qint64 projectId, ProjectAction action) const
{
    const auto rule = ruleFor(action);
    return rule.who == InProject::Manager ? requireManage(caller, projectId, rule.action)
                                          : requireMember(caller, projectId, rule.action);
}

Status AccessPolicy::require(const ApiPrincipal &caller, qint64 ownerId, UserAction action) const
{
    if (ownerId == caller.userId)
        return {};
    return requireHubAdmin(caller, othersAction(action));
}

Status AccessPolicy::requireDecider(
    const ApiPrincipal &caller, const RequestRecord &request, ProjectAction action) const
{
    if (Status allowed = require(caller, request.projectId, action); !allowed)
        return allowed;
    if (request.requesterId == caller.userId)
        return Error::make(QStringLiteral("own_request"),
            QStringLiteral("%1 filed request %2; another administrator has to decide it")
                .arg(caller.userName)
                .arg(request.id));
    return {};
}

bool AccessPolicy::maySeeProject(const ApiPrincipal &caller, qint64 projectId) const
{
    return requireMember(caller, projectId, QString()).ok();
}

bool AccessPolicy::maySee(const ApiPrincipal &caller, const HubEvent &event) const
{
    if (event.userId)
        return caller.hubAdmin || caller.userId == *event.userId;
    if (event.projectId)
        return maySeeProject(caller, *event.projectId);
    return requireAnyRole(caller, QString()).ok();
}

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
