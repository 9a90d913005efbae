#pragma once

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/projectstore.h"

#include <QList>

#include <optional>

namespace cloop::hub {

struct HubEvent;
struct RequestRecord;

// Who may do what (docs/api.md, "Who may do what"), all of it here: every
// domain service asks before it reads or changes anything for a person, and
// the rules are the tables in accesspolicy.cpp.
//
// `executor.manage` is held by hub administrators everywhere and by a
// project's administrators for that project's bindings; maintainers may
// ask; users without a role see nothing; nobody decides their own request.
class AccessPolicy
{
public:
    // What a person may ask of the hub as a whole.
    enum class HubAction
    {
        EnrollForwarder,
        RevokeForwarder,
        TestForwarder,
        ListForwarders,
        ReadForwarder,
        EnrollExecutor,
        RevokeExecutor,
        ListExecutors,
        ReadExecutor,
        CreateVirtualExecutor,
        ListVirtualExecutors,
        ListBindings, // of every project the caller may see
        AddProject,
        GrantRole,
        ListUsers,
        AddUser,
        CreateToken,
        ReadAuditLog,
        SubscribeToEvents,
        UpgradeDevice,
        ListReleases,
        InstallHarness,
    };
    // What a person may ask of one project.
    enum class ProjectAction
    {
        Bind,
        Unbind,
        ApproveRequest,
        DenyRequest,
        RequestBinding,
        ListBindings,
        StartRun,
        ReadRun,
    };
    // What a person may do with what is another user's (their API tokens):
    // their own always.
    enum class UserAction
    {
        ListTokens,
        RevokeToken,
    };

    explicit AccessPolicy(ProjectStore &projects)
        : m_projects(projects)
    { }

    Status require(const ApiPrincipal &caller, HubAction action) const;
    // What `read()` gives, for a caller who may take `action`; the refusal
    // otherwise, and `read` is not called.
    template <typename Read>
    auto ifAllowed(const ApiPrincipal &caller, HubAction action, Read &&read) const
        -> decltype(read())
    {
        if (Status allowed = require(caller, action); !allowed)
            return allowed.error();
        return read();
    }
    Status require(const ApiPrincipal &caller, qint64 projectId, ProjectAction action) const;
    // `ownerId`: the user whose thing it is.
    Status require(const ApiPrincipal &caller, qint64 ownerId, UserAction action) const;
    // The self-approval rule: a request is decided (`action`: approve or
    // deny) by someone who may manage its project and did not file it.
    Status requireDecider(
        const ApiPrincipal &caller, const RequestRecord &request, ProjectAction action) const;

    // Whether the caller may see what happens in a project: its bindings
    // (where a forwarder is lent), its requests and runs, their events.
    bool maySeeProject(const ApiPrincipal &caller, qint64 projectId) const;
    // Whether an event may reach the caller's event stream.
    bool maySee(const ApiPrincipal &caller, const HubEvent &event) const;

    // The projects whose bindings and requests the caller may see;
    // std::nullopt means all of them.
    Result<std::optional<QList<qint64>>> visibleProjects(const ApiPrincipal &caller) const;
    // The projects whose requests the caller may decide; std::nullopt means all.
    Result<std::optional<QList<qint64>>> manageableProjects(const ApiPrincipal &caller) const;

private:
    Status requireHubAdmin(const ApiPrincipal &caller, const QString &action) const;
    Status requireAnyRole(const ApiPrincipal &caller, const QString &action) const;
    Status requireManage(const ApiPrincipal &caller, qint64 projectId, const QString &action) const;
    Status requireMember(const ApiPrincipal &caller, qint64 projectId, const QString &action) const;
    Result<std::optional<ProjectRole>> roleOf(const ApiPrincipal &caller, qint64 projectId) const;

    ProjectStore &m_projects;
};

} // namespace cloop::hub
