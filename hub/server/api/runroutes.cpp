#include "hub/server/api/runroutes.h"

#include "hub/domain/runservice.h"

#include <QJsonArray>

namespace cloop::hub {

void RunRoutes::registerIn(ApiRouter &router)
{
    router.add("POST", QStringLiteral("/api/runs"), [this](const ApiCall &call) {
        auto run = m_runs.create(call.caller, call.body);
        if (!run)
            return ApiResponse::fromError(run.error());
        return ApiResponse::ok(RunService::runJson(*run), 201);
    });

    router.add("GET", QStringLiteral("/api/runs"), [this](const ApiCall &call) {
        auto runs = m_runs.list(call.caller, call.queryFlag(QStringLiteral("all")));
        if (!runs)
            return ApiResponse::fromError(runs.error());
        QJsonArray out;
        for (const RunRecord &run : std::as_const(*runs))
            out.append(RunService::runJson(run));
        return ApiResponse::ok(QJsonObject{{QStringLiteral("runs"), out}});
    });

    router.add("GET", QStringLiteral("/api/runs/{id}"), [this](const ApiCall &call) {
        auto run = m_runs.find(call.caller, call.id());
        if (!run)
            return ApiResponse::fromError(run.error());
        return ApiResponse::ok(RunService::runJson(*run));
    });

    router.add("POST", QStringLiteral("/api/runs/{id}/cancel"), [this](const ApiCall &call) {
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto run = m_runs.cancel(call.caller, call.id(), *reason);
        if (!run)
            return ApiResponse::fromError(run.error());
        return ApiResponse::ok(RunService::runJson(*run));
    });
}

} // namespace cloop::hub
