#include "hub/server/api/runroutes.h"

#include "common/protocol/logrecord.h"
#include "hub/domain/runservice.h"
#include "hub/storage/runlogstore.h"

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

    // The stored output from `offset` on, at most about 1 MiB per call:
    // stdout and stderr as base64, gaps as their length.
    router.add("GET", QStringLiteral("/api/runs/{id}/log"), [this](const ApiCall &call) {
        auto run = m_runs.find(call.caller, call.id());
        if (!run)
            return ApiResponse::fromError(run.error());
        bool numeric = true;
        const QString offsetText = call.queryValue(QStringLiteral("offset"));
        const qint64 offset = offsetText.isEmpty() ? 0 : offsetText.toLongLong(&numeric);
        if (!numeric || offset < 0)
            return ApiResponse::error(400, QStringLiteral("invalid_request"), QStringLiteral("\"offset\" is a byte offset"));
        QJsonArray out;
        if (m_logs) {
            auto records = m_logs->read(run->id, static_cast<quint64>(offset), 1024 * 1024);
            if (!records)
                return ApiResponse::fromError(records.error());
            for (const protocol::LogRecord &record : std::as_const(*records)) {
                QJsonObject json{{QStringLiteral("offset"), static_cast<qint64>(record.offset)},
                                 {QStringLiteral("stream"), protocol::logRecordKindName(record.kind)}};
                if (record.isGap())
                    json.insert(QStringLiteral("lost"), static_cast<qint64>(record.gapLength));
                else
                    json.insert(QStringLiteral("data"), QString::fromLatin1(record.payload.toBase64()));
                out.append(json);
            }
        }
        return ApiResponse::ok(QJsonObject{{QStringLiteral("records"), out},
                                           {QStringLiteral("end"), run->logEnd},
                                           {QStringLiteral("expected_end"),
                                            run->logExpected ? QJsonValue(*run->logExpected) : QJsonValue(QJsonValue::Null)},
                                           {QStringLiteral("complete"), run->logComplete()},
                                           {QStringLiteral("finished"), run->isFinished()}});
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
