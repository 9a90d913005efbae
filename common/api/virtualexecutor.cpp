#include "common/api/virtualexecutor.h"

namespace cloop::api {

Result<VirtualExecutor> VirtualExecutor::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("virtual executor"));
    VirtualExecutor record;
    record.id = read.integer(QLatin1StringView("id"));
    record.name = read.text(QLatin1StringView("name"));
    record.executorId = read.integer(QLatin1StringView("executor_id"));
    record.executor = read.text(QLatin1StringView("executor"));
    record.runtime = read.text(QLatin1StringView("runtime"));
    record.createdAt = read.time(QLatin1StringView("created_at"));
    record.createdBy = read.text(QLatin1StringView("created_by"));
    return read.finish(std::move(record));
}

QJsonObject VirtualExecutor::toJson() const
{
    return QJsonObject { { QLatin1StringView("id"), id }, { QLatin1StringView("name"), name },
        { QLatin1StringView("executor_id"), executorId },
        { QLatin1StringView("executor"), executor },
        { QLatin1StringView("runtime"), textOrNull(runtime) },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("created_by"), createdBy } };
}

} // namespace cloop::api
