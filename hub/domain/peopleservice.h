#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/projectstore.h"

#include <QJsonObject>

namespace cloop::hub {

class AccessPolicy;
class Database;
class EventBus;

// People and projects: hub administrators add users and projects and give
// users their roles; anyone may read their own roles and the projects they
// are in. A role that changes is published (user.role_changed) for that
// user only, so that the event stream checks the user's subscriptions again.
class PeopleService
{
public:
    PeopleService(Database &db, ProjectStore &projects, const AccessPolicy &policy,
        EventBus &events, const Clock &clock);

    // The caller's own roles (anyone).
    Result<QList<RoleGrant>> rolesOf(const ApiPrincipal &caller);
    // The projects the caller may see.
    Result<QList<ProjectRecord>> projects(const ApiPrincipal &caller);
    // {"path"}; read once the caller may add one.
    Result<ProjectRecord> addProject(const ApiPrincipal &caller, const QJsonObject &body);
    // {"project", "user", "role": "administrator" | "maintainer" | "none"};
    // read once the caller may grant roles.
    Result<ProjectRecord> setRole(const ApiPrincipal &caller, const QJsonObject &body);

    Result<QList<UserRecord>> users(const ApiPrincipal &caller);
    // {"name", "hub_admin"}; read once the caller may add one.
    Result<UserRecord> addUser(const ApiPrincipal &caller, const QJsonObject &body);

private:
    ProjectStore &m_projects;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    const Clock &m_clock;
    Database &m_db;
};

} // namespace cloop::hub
