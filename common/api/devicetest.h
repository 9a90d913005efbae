#pragma once

#include "common/api/devicetestreport.h"
#include "common/api/forwarder.h"

namespace cloop::api {

// The answer to testing a forwarder's device (POST /api/forwarders/{id}/test).
struct DeviceTest
{
    Forwarder forwarder;
    DeviceTestReport report;

    static Result<DeviceTest> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const DeviceTest &, const DeviceTest &) = default;
};

} // namespace cloop::api
