#include "hub/domain/accesspolicy.h"

#include "hub/domain/eventbus.h"
#include "hub/storage/requeststore.h"

namespace cloop::hub {

namespace {

using namespace Qt::Literals::StringLiterals;

Error forbidden(const QString &message)
{
    return Error::make(QStringLiteral("forbidden"), message);
}

// Who may act, and how a refusal names the action.
template <typename Who, typename Action> struct Rule
{
    Action id;
    Who who;
    QLatin1StringView action;
};

// The rule of `action`: the tables hold every action in the order of its
// enum up to the last one named below (checked at compile time), so its
// value is its row. An action added after that one has no row yet and gets
// the strictest rule of its kind (the first: hub administrators, a
// project's managers) until someone says who may take it.
template <typename Who, typename Action, std::size_t N>
constexpr Rule<Who, Action> lookUp(const Rule<Who, Action> (&rules)[N], Action action)
{
    const auto row = static_cast<std::size_t>(action);
    if (row < N)
        return rules[row];
    return { action, Who {}, QLatin1StringView("this action") };
}

enum class HubWide
{
    Administrator, // a hub administrator
    AnyRole, // anyone with a role in some project
};

using HubAction = AccessPolicy::HubAction;
constexpr Rule<HubWide, HubAction> kHubRules[] = {
    { HubAction::EnrollForwarder, HubWide::Administrator,
        "enrolling a forwarder (executor.manage)"_L1 },
    { HubAction::RevokeForwarder, HubWide::Administrator,
        "revoking a forwarder (executor.manage)"_L1 },
    { HubAction::TestForwarder, HubWide::Administrator,
        "testing a forwarder's device (executor.manage)"_L1 },
    { HubAction::ListForwarders, HubWide::AnyRole, "listing forwarders"_L1 },
    { HubAction::ReadForwarder, HubWide::AnyRole, "reading a forwarder"_L1 },
    { HubAction::EnrollExecutor, HubWide::Administrator,
        "enrolling an executor (executor.manage)"_L1 },
    { HubAction::RevokeExecutor, HubWide::Administrator,
        "revoking an executor (executor.manage)"_L1 },
    { HubAction::ListExecutors, HubWide::AnyRole, "listing executors"_L1 },
    { HubAction::ReadExecutor, HubWide::AnyRole, "reading an executor"_L1 },
    { HubAction::CreateVirtualExecutor, HubWide::Administrator,
        "creating a virtual executor (executor.manage)"_L1 },
    { HubAction::ListVirtualExecutors, HubWide::AnyRole, "listing virtual executors"_L1 },
    { HubAction::ListBindings, HubWide::AnyRole, "listing bindings"_L1 },
    { HubAction::AddProject, HubWide::Administrator, "adding a project"_L1 },
    { HubAction::GrantRole, HubWide::Administrator, "granting a role"_L1 },
    { HubAction::ListUsers, HubWide::Administrator, "listing users"_L1 },
    { HubAction::AddUser, HubWide::Administrator, "adding a user"_L1 },
    { HubAction::CreateToken, HubWide::Administrator, "creating an API token"_L1 },
    { HubAction::ReadAuditLog, HubWide::Administrator, "reading the audit log"_L1 },
    { HubAction::SubscribeToEvents, HubWide::AnyRole, "the event stream"_L1 },
    { HubAction::UpgradeDevice, HubWide::Administrator, "upgrading a forwarder or an executor"_L1 },
    { HubAction::ListReleases, HubWide::AnyRole, "listing the releases the hub offers"_L1 },
    { HubAction::InstallHarness, HubWide::Administrator, "installing a harness on an executor"_L1 },
};

// Every action, in the order of its enum, once.
template <typename Who, typename Action, std::size_t N>
constexpr bool namesEveryAction(const Rule<Who, Action> (&rules)[N], Action last)
{
    if (N != static_cast<std::size_t>(last) + 1)
        return false;
    for (std::size_t i = 0; i < N; ++i) {
        if (static_cast<std::size_t>(rules[i].id) != i)
            return false;
    }
    return true;
}
static_assert(namesEveryAction(kHubRules, HubAction::InstallHarness));

Rule<HubWide, HubAction> ruleFor(AccessPolicy::HubAction action)
{
    return lookUp(kHubRules, action);
}

enum class InProject
{
    Manager, // executor.manage on the project: hub and project administrators
    Member, // any role in the project
};

using ProjectAction = AccessPolicy::ProjectAction;
constexpr Rule<InProject, ProjectAction> kProjectRules[] = {
    { ProjectAction::Bind, InProject::Manager, "binding a forwarder"_L1 },
    { ProjectAction::Unbind, InProject::Manager, "unbinding"_L1 },
    { ProjectAction::ApproveRequest, InProject::Manager, "approving a binding request"_L1 },
    { ProjectAction::DenyRequest, InProject::Manager, "denying a binding request"_L1 },
    { ProjectAction::RequestBinding, InProject::Member, "requesting a binding"_L1 },
    { ProjectAction::ListBindings, InProject::Member, "listing bindings"_L1 },
    { ProjectAction::StartRun, InProject::Member, "starting a run"_L1 },
    { ProjectAction::ReadRun, InProject::Member, "reading a run"_L1 },
};

static_assert(namesEveryAction(kProjectRules, ProjectAction::ReadRun));

Rule<InProject, ProjectAction> ruleFor(AccessPolicy::ProjectAction action)
{
    return lookUp(kProjectRules, action);
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
