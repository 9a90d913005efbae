#include "common/api/executor.h"

namespace cloop::api {

Result<protocol::AgentCapabilities> Executor::capabilities() const
{
    return cloop::protocol::AgentCapabilities::fromJson(reportedCapabilities);
}

Result<Executor> Executor::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("executor"));
    Executor executor;
    executor.readFrom(read);
    executor.version = read.text(QLatin1StringView("version"));
    executor.protocolVersion = int(read.integer(QLatin1StringView("protocol")));
    executor.reportedCapabilities = read.object(QLatin1StringView("capabilities"));
    return read.finish(std::move(executor));
}

QJsonObject Executor::toJson() const
{
    QJsonObject object;
    writeTo(object);
    object.insert(QLatin1StringView("version"), textOrNull(version));
    object.insert(QLatin1StringView("protocol"),
        protocolVersion > 0 ? QJsonValue(protocolVersion) : QJsonValue(QJsonValue::Null));
    object.insert(QLatin1StringView("capabilities"), reportedCapabilities);
    return object;
}

} // namespace cloop::api
