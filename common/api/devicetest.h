#pragma once

#include "common/api/devicetestreport.h"
#include "common/api/forwarder.h"

namespace cloop::api {

// The answer to testing a forwarder's device (POST /api/forwarders/{id}/test).
struct DeviceTest
{
    Forwarder forwarder;
    DeviceTestReport report;
    // How long the hub waited for the forwarder to take the test's channel:
    // one round trip over its tunnel. None from hubs that do not say.
    std::optional<qint64> roundTripUs;

    static Result<DeviceTest> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const DeviceTest &, const DeviceTest &) = default;
};

} // namespace cloop::api
