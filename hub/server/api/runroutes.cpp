#include "hub/server/api/runroutes.h"

#include "common/protocol/logrecord.h"
#include "hub/domain/recordjson.h"
#include "hub/domain/runservice.h"
#include "hub/storage/runlogstore.h"

#include <QJsonArray>

#include <utility>

namespace cloop::hub {

namespace {

constexpr qsizetype kLogPageBytes = 1024 * 1024;

// Gaps next to each other and of the same origin are one in JSON, whose
// numbers, unlike a gap record's length, are not limited to 32 bits.
QJsonArray logRecordsJson(const StoredLogPage &page)
{
    QJsonArray out;
    QJsonObject gap;
    const auto flushGap = [&] {
        if (!gap.isEmpty())
            out.append(std::exchange(gap, {}));
    };
    for (const protocol::LogRecord &record : page.records) {
        if (record.isGap()) {
            const QString by = record.end() <= page.trimmedBefore ? QStringLiteral("hub")
                                                                  : QStringLiteral("agent");
            if (!gap.isEmpty() && gap.value(QLatin1String("dropped_by")).toString() == by) {
                gap.insert(QStringLiteral("lost"),
                    gap.value(QLatin1String("lost")).toInteger()
                        + static_cast<qint64>(record.gapLength));
                continue;
            }
            flushGap();
            gap = QJsonObject { { QStringLiteral("offset"), static_cast<qint64>(record.offset) },
                { QStringLiteral("stream"), protocol::logRecordKindName(record.kind) },
                { QStringLiteral("lost"), static_cast<qint64>(record.gapLength) },
                { QStringLiteral("dropped_by"), by } };
            continue;
        }
        flushGap();
        out.append(QJsonObject { { QStringLiteral("offset"), static_cast<qint64>(record.offset) },
            { QStringLiteral("stream"), protocol::logRecordKindName(record.kind) },
            { QStringLiteral("data"), QString::fromLatin1(record.payload.toBase64()) } });
    }
    flushGap();
    return out;
}

} // namespace

void RunRoutes::registerIn(ApiRouter &router)
{
    router.add("POST", QStringLiteral("/api/runs"), [this](const ApiCall &call) {
        return ApiResponse::of(m_runs.create(call.caller, call.body), runJson, 201);
    });

    // An install is a run of the executor's own: its output is read, and it
    // is cancelled, as any run's.
    router.add(
        "POST", QStringLiteral("/api/executors/{id}/harnesses"), [this](const ApiCall &call) {
            return ApiResponse::of(
                m_runs.installHarness(call.caller, call.id(), call.body), runJson, 202);
        });

    router.add("GET", QStringLiteral("/api/runs"), [this](const ApiCall &call) {
        return ApiResponse::listOf(m_runs.list(call.caller, call.queryFlag(QStringLiteral("all"))),
            QLatin1StringView("runs"), runJson);
    });

    router.add("GET", QStringLiteral("/api/runs/{id}"), [this](const ApiCall &call) {
        return ApiResponse::of(m_runs.find(call.caller, call.id()), runJson);
    });

    // The stored output from `offset` on, at most about 1 MiB per call (the
    // store seeks to it; a longer log is read page by page): stdout and
    // stderr as base64, gaps as how many bytes were dropped and by whom.
    router.add("GET", QStringLiteral("/api/runs/{id}/log"), [this](const ApiCall &call) {
        auto run = m_runs.find(call.caller, call.id());
        if (!run)
            return ApiResponse::fromError(run.error());
        bool numeric = true;
        const QString offsetText = call.queryValue(QStringLiteral("offset"));
        const qint64 offset = offsetText.isEmpty() ? 0 : offsetText.toLongLong(&numeric);
        if (!numeric || offset < 0)
            return ApiResponse::error(400, QStringLiteral("invalid_request"),
                QStringLiteral("\"offset\" is a byte offset"));
        QJsonArray out;
        if (m_logs) {
            auto page = m_logs->read(run->id, static_cast<quint64>(offset), kLogPageBytes);
            if (!page)
                return ApiResponse::fromError(page.error());
            out = logRecordsJson(*page);
        }
        return ApiResponse::ok(QJsonObject { { QStringLiteral("records"), out },
            { QStringLiteral("end"), run->logEnd },
            { QStringLiteral("expected_end"),
                run->logExpected ? QJsonValue(*run->logExpected) : QJsonValue(QJsonValue::Null) },
            { QStringLiteral("complete"), run->logComplete() },
            { QStringLiteral("finished"), run->isFinished() } });
    });

    router.add("POST", QStringLiteral("/api/runs/{id}/cancel"), [this](const ApiCall &call) {
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        return ApiResponse::of(m_runs.cancel(call.caller, call.id(), *reason), runJson);
    });
}

} // namespace cloop::hub
