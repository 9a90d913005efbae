#pragma once

#include "common/api/recordfields.h"
#include "common/protocol/devicespec.h"

namespace cloop::api {

// What a forwarder's device showed when it was tested (the "report" of
// POST /api/forwarders/{id}/test): a segment's link, counters and a few
// frames it saw, or the USB/IP device list a USB forwarder exports.
struct DeviceTestReport
{
    struct Link
    {
        bool up = false;
        bool carrier = false;
        int mtu = 0;
        QString mac;

        friend bool operator==(const Link &, const Link &) = default;
    };

    struct Counters
    {
        qint64 rxPackets = 0;
        qint64 rxBytes = 0;
        qint64 rxDropped = 0;
        qint64 txPackets = 0;
        qint64 txBytes = 0;
        qint64 txDropped = 0;

        friend bool operator==(const Counters &, const Counters &) = default;
    };

    // A frame the segment carried while the forwarder listened.
    struct Frame
    {
        int length = 0;
        QString source; // MAC addresses; empty for a runt frame
        QString destination;
        QString ethertype; // "0x0806"
        std::optional<int> vlan;
        QString summary; // "ARP who-has 192.0.2.1 tell 192.0.2.2"; empty when not known

        friend bool operator==(const Frame &, const Frame &) = default;
    };

    struct UsbInterface
    {
        QString interfaceClass; // two hex digits, as the other fields below
        QString subclass;
        QString protocol;

        friend bool operator==(const UsbInterface &, const UsbInterface &) = default;
    };

    // A device in the USB/IP device list.
    struct UsbExport
    {
        QString busId;
        QString path; // its sysfs path on the forwarder
        QString vendorId; // four hex digits
        QString productId;
        QString bcdDevice;
        QString speed;
        QString deviceClass;
        int configuration = 0;
        QList<UsbInterface> interfaces;

        friend bool operator==(const UsbExport &, const UsbExport &) = default;
    };

    // None for a kind this version does not know (unknownKind names it).
    std::optional<protocol::DeviceSpec::Kind> kind;
    QString unknownKind;
    bool ok = false;
    QString problem; // when not ok
    // A segment.
    QString interfaceName;
    std::optional<Link> link; // none when its state could not be read
    std::optional<Counters> counters;
    std::optional<qint64> listenedMs; // none when it never listened
    qint64 framesSeen = 0;
    QList<Frame> frames; // the first few
    // A USB device.
    QList<UsbExport> devices;

    bool isSegment() const { return kind == protocol::DeviceSpec::Kind::Segment; }
    bool isUsb() const { return kind == protocol::DeviceSpec::Kind::Usb; }

    static Result<DeviceTestReport> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const DeviceTestReport &, const DeviceTestReport &) = default;
};

} // namespace cloop::api
