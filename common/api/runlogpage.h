#pragma once

#include "common/api/recordfields.h"
#include "common/protocol/logrecord.h"

#include <QByteArray>

namespace cloop::api {

// A page of a run's stored output (GET /api/runs/{id}/log?offset=N).
struct RunLogPage
{
    // Output of one stream, or a stretch of output that was dropped.
    struct Entry
    {
        enum class DroppedBy
        {
            Hub, // past the run's log cap or the hub's budget for all logs
            Agent // past what the agent retains for a hub that was away
        };

        qint64 offset = 0;
        protocol::LogRecordKind stream = protocol::LogRecordKind::Stdout;
        QByteArray data; // stdout and stderr
        qint64 lost = 0; // a gap: how many bytes
        DroppedBy droppedBy = DroppedBy::Hub; // a gap: who dropped them

        bool isGap() const { return stream == protocol::LogRecordKind::Gap; }
        qint64 end() const { return offset + (isGap() ? lost : qint64(data.size())); }

        static QLatin1StringView droppedByName(DroppedBy who);

        static Result<Entry> fromJson(const QJsonObject &object);
        QJsonObject toJson() const;

        friend bool operator==(const Entry &, const Entry &) = default;
    };

    QList<Entry> records;
    qint64 end = 0; // where the run's output ends, trimmed or not
    std::optional<qint64> expectedEnd; // where the agent said it ends
    bool complete = false; // everything up to the end was received
    bool finished = false; // the run finished

    static Result<RunLogPage> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const RunLogPage &, const RunLogPage &) = default;
};

} // namespace cloop::api
