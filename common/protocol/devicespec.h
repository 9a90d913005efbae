#pragma once

#include "common/result.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cloop::util {
class JsonWriter;
}

namespace cloop::protocol {

// What one forwarder carries: exactly one USB device or one network interface.
struct DeviceSpec
{
    enum class Kind
    {
        Usb,
        Segment
    };

    Kind kind = Kind::Usb;
    quint16 vendorId = 0;
    quint16 productId = 0;
    QString serial; // optional narrowing of vendor:product
    QString interfaceName;

    static Result<DeviceSpec> parseUsb(const QString &text); // VID:PID[:SERIAL]
    static Result<DeviceSpec> parseInterface(const QString &name);
    static Result<DeviceSpec> fromJson(const QJsonObject &object);

    QJsonObject toJson() const;
    // The same object written straight out, byte for byte as toJson()'s
    // document: a listing writes one for each of thousands of forwarders.
    void writeJson(util::JsonWriter &out) const;
    QString kindName() const; // "usb" / "l2"
    QString describe() const; // "usb 1050:0407" / "l2 eth1"

    friend bool operator==(const DeviceSpec &, const DeviceSpec &) = default;
};

// The one mapping of device kinds to their names on the wire and in the
// admin API: "usb" and "l2" (a segment).
QLatin1StringView deviceKindName(DeviceSpec::Kind kind);
std::optional<DeviceSpec::Kind> parseDeviceKind(QStringView name);

// Linux interface names: 1..15 bytes, no '/', ':', whitespace, not "." or "..".
bool isValidInterfaceName(const QString &name);

} // namespace cloop::protocol
