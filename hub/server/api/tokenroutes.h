#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class TokenService;

// /api/tokens over TokenService: created by hub administrators; listed and
// revoked by their owner or a hub administrator.
class TokenRoutes
{
public:
    explicit TokenRoutes(TokenService &service)
        : m_service(service)
    { }
    void registerIn(ApiRouter &router);

private:
    TokenService &m_service;
};

} // namespace cloop::hub
