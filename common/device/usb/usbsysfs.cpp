#include "common/device/usb/usbsysfs.h"

namespace cloop::device::usb {

namespace {

QString devicePath(const QString &busId)
{
    return kUsbDevicesDir + QLatin1Char('/') + busId;
}

// Attributes the kernel prints as "%d"/"%u" (bNumInterfaces as "%2d"); empty
// on an unconfigured device, which counts as 0.
std::optional<uint> readNumber(const SysfsRoot &roots, const QString &path, int base, uint max)
{
    const auto text = roots.readAttribute(path);
    if (!text)
        return std::nullopt;
    if (text->isEmpty())
        return 0u;
    bool ok = false;
    const uint value = text->toUInt(&ok, base);
    if (!ok || value > max)
        return std::nullopt;
    return value;
}

} // namespace

QStringList listDeviceBusIds(const SysfsRoot &roots)
{
    QStringList out;
    for (const QString &name : roots.list(kUsbDevicesDir)) {
        if (usbip::isValidBusId(name.toLatin1()))
            out.append(name);
    }
    return out;
}

QStringList listInterfaces(const SysfsRoot &roots, const QString &busId)
{
    QStringList out;
    const QString prefix = busId + QLatin1Char(':');
    for (const QString &name : roots.list(kUsbDevicesDir)) {
        if (name.startsWith(prefix))
            out.append(name);
    }
    return out;
}

std::optional<quint16> readId(const SysfsRoot &roots, const QString &busId, QStringView attribute)
{
    const auto text
        = roots.readAttribute(devicePath(busId) + QLatin1Char('/') + attribute.toString());
    if (!text || text->size() != 4)
        return std::nullopt;
    bool ok = false;
    const uint value = text->toUInt(&ok, 16);
    return ok ? std::optional<quint16>(quint16(value)) : std::nullopt;
}

bool isImportedDevice(const SysfsRoot &roots, const QString &busId)
{
    const auto real = roots.resolve(devicePath(busId));
    return real && real->contains(QLatin1String("/devices/platform/vhci_hcd."));
}

Result<usbip::DeviceRecord> readDeviceRecord(const SysfsRoot &roots, const QString &busId)
{
    const QString dir = devicePath(busId);
    const auto real = roots.resolve(dir);
    if (!real || !usbip::isValidBusId(busId.toLatin1()))
        return Error::make(QStringLiteral("usb_device_gone"),
            QStringLiteral("no USB device %1 is present").arg(busId));
    QString missing;
    const auto number = [&](const char *name, int base, uint max) -> uint {
        const auto value
            = readNumber(roots, dir + QLatin1Char('/') + QLatin1String(name), base, max);
        if (!value && missing.isEmpty())
            missing = QLatin1String(name);
        return value.value_or(0);
    };
    usbip::DeviceRecord record;
    record.path = real->toUtf8().left(usbip::kPathSize - 1);
    record.busId = busId.toLatin1();
    record.busNumber = number("busnum", 10, 0xffff);
    record.deviceNumber = number("devnum", 10, 0xffff);
    record.vendorId = quint16(number("idVendor", 16, 0xffff));
    record.productId = quint16(number("idProduct", 16, 0xffff));
    record.bcdDevice = quint16(number("bcdDevice", 16, 0xffff));
    record.deviceClass = quint8(number("bDeviceClass", 16, 0xff));
    record.deviceSubClass = quint8(number("bDeviceSubClass", 16, 0xff));
    record.deviceProtocol = quint8(number("bDeviceProtocol", 16, 0xff));
    // Decimal, whatever usbipd's reader assumes.
    record.configurationValue = quint8(number("bConfigurationValue", 10, 0xff));
    record.configurationCount = quint8(number("bNumConfigurations", 10, 0xff));
    record.interfaceCount = quint8(number("bNumInterfaces", 10, 0xff));
    const auto speedText = roots.readAttribute(dir + QLatin1String("/speed"));
    const auto speed = speedText ? usbip::speedFromSysfs(*speedText) : std::nullopt;
    if (!speed && missing.isEmpty())
        missing = QStringLiteral("speed");
    record.speed = quint32(speed.value_or(usbip::Speed::Unknown));
    if (!missing.isEmpty())
        return Error::make(QStringLiteral("usb_sysfs_unreadable"),
            QStringLiteral("USB device %1: %2 is missing or unreadable").arg(busId, missing));
    for (uint i = 0; i < record.interfaceCount; ++i) {
        const QString interface = QStringLiteral("%1/%2:%3.%4")
                                      .arg(dir, busId)
                                      .arg(record.configurationValue)
                                      .arg(i);
        usbip::InterfaceRecord entry;
        const auto read = [&](const char *name) {
            return readNumber(roots, interface + QLatin1Char('/') + QLatin1String(name), 16, 0xff);
        };
        const auto cls = read("bInterfaceClass");
        const auto sub = read("bInterfaceSubClass");
        const auto protocol = read("bInterfaceProtocol");
        if (!cls || !sub || !protocol)
            return Error::make(QStringLiteral("usb_sysfs_unreadable"),
                QStringLiteral("USB device %1: interface %2 is missing or unreadable")
                    .arg(busId)
                    .arg(i));
        entry.interfaceClass = quint8(*cls);
        entry.interfaceSubClass = quint8(*sub);
        entry.interfaceProtocol = quint8(*protocol);
        record.interfaces.append(entry);
    }
    return record;
}

DeviceMatch findDevice(
    const SysfsRoot &roots, quint16 vendorId, quint16 productId, const QString &serial)
{
    DeviceMatch match;
    for (const QString &busId : listDeviceBusIds(roots)) {
        const QString dir = devicePath(busId);
        if (readId(roots, busId, u"idVendor") != vendorId
            || readId(roots, busId, u"idProduct") != productId)
            continue;
        // Before the serial: reading a string attribute takes the device's
        // lock, which an imported device's enumeration may hold while it
        // waits on a USB/IP stream this very process could be carrying.
        if (isImportedDevice(roots, busId)) {
            match.passedOver.append(
                QStringLiteral("%1 (itself imported over USB/IP; never forwarded again)")
                    .arg(busId));
            continue;
        }
        if (!serial.isEmpty()
            && roots.readAttribute(dir + QLatin1String("/serial")).value_or(QString()) != serial)
            continue;
        if (!match.busId.isEmpty()) {
            match.passedOver.append(
                QStringLiteral("%1 (also matches; enroll with VID:PID:SERIAL to choose)")
                    .arg(busId));
            continue;
        }
        match.busId = busId;
    }
    return match;
}

std::optional<QString> deviceNodePath(const SysfsRoot &roots, const QString &busId)
{
    const QString dir = devicePath(busId);
    const auto bus = readNumber(roots, dir + QLatin1String("/busnum"), 10, 999);
    const auto dev = readNumber(roots, dir + QLatin1String("/devnum"), 10, 999);
    if (!bus || !dev || *bus == 0 || *dev == 0)
        return std::nullopt;
    return QStringLiteral("/dev/bus/usb/%1/%2")
        .arg(*bus, 3, 10, QLatin1Char('0'))
        .arg(*dev, 3, 10, QLatin1Char('0'));
}

} // namespace cloop::device::usb
