#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cloop::forward {

// A forwarder carries the one device its credential file records from its
// enrollment, whatever a hub says afterwards: the hub, or anything holding
// its key, can never point it at another interface or USB device. These
// decisions need nothing but values, so they come before any kernel step.

struct CarriedDevice
{
    std::optional<protocol::DeviceSpec>
        device; // none: the hub named nothing and nothing is recorded
    // The credential file has no record yet (a file from before forwarders
    // kept one, or a redemption just now): this device is to be recorded.
    bool toRecord = false;
};

// The hub's welcome against the record. A welcome that names another
// device is refused ("device_mismatch", permanent).
Result<CarriedDevice> deviceToCarry(const std::optional<protocol::DeviceSpec> &recorded,
    const std::optional<protocol::DeviceSpec> &welcomed);

// A channel the hub opens may say what it is for: "interface", "busid" or a
// "device" object. One naming anything but the carried device (a USB device
// at the bus id it has now) is refused ("device_mismatch").
Status checkChannelNames(
    const protocol::DeviceSpec &carried, const QString &busId, const QJsonObject &metadata);

} // namespace cloop::forward
