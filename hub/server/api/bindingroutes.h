#pragma once

#include "common/util/clock.h"

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class BindingService;

// Bindings, requests and approvals: /api/forwarders/{id}/bind|request,
// /api/bindings, /api/requests.
class BindingRoutes
{
public:
    BindingRoutes(BindingService &service, const Clock &clock)
        : m_service(service)
        , m_clock(clock)
    { }
    void registerIn(ApiRouter &router);

private:
    BindingService &m_service;
    const Clock &m_clock;
};

} // namespace cloop::hub
