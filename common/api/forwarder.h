#pragma once

#include "common/api/enrolleddaemon.h"
#include "common/protocol/devicespec.h"

#include <optional>

namespace cloop::api {

// A device forwarder as the admin API shows it (GET /api/forwarders).
struct Forwarder : EnrolledDaemon
{
    // What it carries; none when this version cannot read the hub's record
    // of it (a kind added later): deviceDescription still says what it is.
    std::optional<protocol::DeviceSpec> device;
    QString deviceDescription; // "usb 1050:0407:A1", "l2 eth1"
    // A connected USB forwarder's device where it is now: its bus id, ""
    // while unplugged; none while offline, for a segment, or unknown.
    std::optional<QString> usbBusId;

    bool isUsb() const { return device && device->kind == protocol::DeviceSpec::Kind::Usb; }
    // A connected USB forwarder said its device is gone.
    bool isUnplugged() const { return connected && usbBusId && usbBusId->isEmpty(); }

    static Result<Forwarder> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Forwarder &, const Forwarder &) = default;
};

} // namespace cloop::api
