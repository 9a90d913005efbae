#include "common/api/auditlogentry.h"

namespace cloop::api {

Result<AuditLogEntry> AuditLogEntry::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("audit entry"));
    AuditLogEntry entry;
    entry.id = read.integer(QLatin1StringView("id"));
    entry.at = read.time(QLatin1StringView("at"));
    entry.actor = read.text(QLatin1StringView("actor"));
    entry.action = read.text(QLatin1StringView("action"));
    entry.subject = read.text(QLatin1StringView("subject"));
    entry.details = read.object(QLatin1StringView("details"));
    return read.finish(std::move(entry));
}

QJsonObject AuditLogEntry::toJson() const
{
    return QJsonObject { { QLatin1StringView("id"), id },
        { QLatin1StringView("at"), timeOrNull(at) }, { QLatin1StringView("actor"), actor },
        { QLatin1StringView("action"), action }, { QLatin1StringView("subject"), subject },
        { QLatin1StringView("details"), details } };
}

} // namespace cloop::api
