#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class AccessPolicy;
class ApiTokenStore;
class Clock;
class Database;
class EventBus;
class ProjectStore;

// Projects, users, their roles and tokens (hub administrators), and
// /api/whoami for everyone.
class PeopleRoutes
{
public:
    PeopleRoutes(
        ProjectStore &projects, ApiTokenStore &tokens, const AccessPolicy &policy, EventBus &events)
        : m_projects(projects)
        , m_tokens(tokens)
        , m_policy(policy)
        , m_events(events)
    { }
    void registerIn(ApiRouter &router);

private:
    void registerTokenRoutes(ApiRouter &router);

    ProjectStore &m_projects;
    ApiTokenStore &m_tokens;
    const AccessPolicy &m_policy;
    EventBus &m_events;
};

// GET /api/audit (hub administrators).
class AuditRoutes
{
public:
    AuditRoutes(Database &db, const AccessPolicy &policy, const Clock &clock)
        : m_db(db)
        , m_policy(policy)
        , m_clock(clock)
    { }
    void registerIn(ApiRouter &router);

private:
    Database &m_db;
    const AccessPolicy &m_policy;
    const Clock &m_clock;
};

} // namespace cloop::hub
