#include "common/api/devicetest.h"

namespace cloop::api {

Result<DeviceTest> DeviceTest::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("device test"));
    DeviceTest test;
    test.forwarder = read.nested<Forwarder>(read.object(QLatin1StringView("forwarder")));
    test.report = read.nested<DeviceTestReport>(read.object(QLatin1StringView("report")));
    return read.finish(std::move(test));
}

QJsonObject DeviceTest::toJson() const
{
    return QJsonObject { { QLatin1StringView("forwarder"), forwarder.toJson() },
        { QLatin1StringView("report"), report.toJson() } };
}

} // namespace cloop::api
