#include "common/api/executor.h"

#include "common/api/recordtables.h"

namespace cloop::api {

using namespace Qt::StringLiterals;

Result<protocol::AgentCapabilities> Executor::capabilities() const
{
    return cloop::protocol::AgentCapabilities::fromJson(reportedCapabilities);
}

Result<Executor> Executor::fromJson(const QJsonObject &object)
{
    RecordReader read(object, "executor"_L1);
    Executor executor;
    executor.readFrom(read);
    readFields(read, executor, tables::executorFields);
    return read.finish(std::move(executor));
}

QJsonObject Executor::toJson() const
{
    QJsonObject object;
    writeTo(object);
    writeFields(*this, object, tables::executorFields);
    return object;
}

} // namespace cloop::api
