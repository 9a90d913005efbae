#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class PeopleService;

// /api/whoami for everyone; projects, their roles and users over
// PeopleService.
class PeopleRoutes
{
public:
    explicit PeopleRoutes(PeopleService &service)
        : m_service(service)
    { }
    void registerIn(ApiRouter &router);

private:
    void registerProjectRoutes(ApiRouter &router);
    void registerUserRoutes(ApiRouter &router);

    PeopleService &m_service;
};

} // namespace cloop::hub
