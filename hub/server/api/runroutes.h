#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class RunService;

// /api/runs: start a run, list, read, cancel.
class RunRoutes
{
public:
    explicit RunRoutes(RunService &runs) : m_runs(runs) { }
    void registerIn(ApiRouter &router);

private:
    RunService &m_runs;
};

} // namespace cloop::hub
