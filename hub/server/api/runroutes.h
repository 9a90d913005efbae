#pragma once

#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class RunLogStore;
class RunService;

// /api/runs: start a run, list, read, cancel.
class RunRoutes
{
public:
    RunRoutes(RunService &runs, RunLogStore *logs)
        : m_runs(runs)
        , m_logs(logs)
    { }
    void registerIn(ApiRouter &router);

private:
    RunService &m_runs;
    RunLogStore *m_logs;
};

} // namespace cloop::hub
