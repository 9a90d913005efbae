#pragma once

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/projectstore.h"

#include <QList>

#include <optional>

namespace cloop::hub {

// Who may do what. `executor.manage` is held by hub administrators
// everywhere and by a project's administrators for that project's bindings;
// maintainers may ask; users without a role see nothing.
class AccessPolicy
{
public:
    explicit AccessPolicy(ProjectStore &projects)
        : m_projects(projects)
    { }

    // Enroll and revoke forwarders; manage projects, users, tokens; read the audit log.
    Status requireHubAdmin(const ApiPrincipal &caller, const QString &action) const;
    // See forwarders: anyone with a role somewhere.
    Status requireAnyRole(const ApiPrincipal &caller, const QString &action) const;
    // Bind, unbind, approve and deny for `projectId`.
    Status requireManage(const ApiPrincipal &caller, qint64 projectId, const QString &action) const;
    // Request a binding or read a project's bindings: any role in the project.
    Status requireMember(const ApiPrincipal &caller, qint64 projectId, const QString &action) const;

    // The projects whose bindings and requests the caller may see;
    // std::nullopt means all of them.
    Result<std::optional<QList<qint64>>> visibleProjects(const ApiPrincipal &caller) const;
    // The projects whose requests the caller may decide; std::nullopt means all.
    Result<std::optional<QList<qint64>>> manageableProjects(const ApiPrincipal &caller) const;

private:
    Result<std::optional<ProjectRole>> roleOf(const ApiPrincipal &caller, qint64 projectId) const;

    ProjectStore &m_projects;
};

} // namespace cloop::hub
