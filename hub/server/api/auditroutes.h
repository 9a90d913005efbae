#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class AuditService;

// GET /api/audit over AuditService (hub administrators).
class AuditRoutes
{
public:
    explicit AuditRoutes(AuditService &service)
        : m_service(service)
    { }
    void registerIn(ApiRouter &router);

private:
    AuditService &m_service;
};

} // namespace cloop::hub
