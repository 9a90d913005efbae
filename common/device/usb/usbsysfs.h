#pragma once

#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/result.h"

#include <QString>
#include <QStringList>

#include <optional>

// Reading USB devices the way usbipd does, from /sys/bus/usb/devices,
// through SysfsRoot (so a fixture tree can stand for the kernel's).
namespace cloop::device::usb {

inline const QString kUsbDevicesDir = QStringLiteral("/sys/bus/usb/devices");

// The device records of DEVLIST and IMPORT, from the attributes of the
// device and its interfaces (Linux drivers/usb/core/sysfs.c formats:
// hex ids, decimal numbers, bNumInterfaces padded with a space, empty
// configuration values on an unconfigured device). busnum and devnum come
// from their own files. Errors: "usb_device_gone" when the device is not
// there, "usb_sysfs_unreadable" when an attribute it must have is not.
Result<usbip::DeviceRecord> readDeviceRecord(const SysfsRoot &roots, const QString &busId);

// Whether the device hangs off a vhci_hcd controller, i.e. was itself
// imported over USB/IP: its sysfs path runs through
// /devices/platform/vhci_hcd.N. The kernel's own guard against exporting
// such devices compares "vhci_hcd" with "vhci_hcd.N" and never matches.
bool isImportedDevice(const SysfsRoot &roots, const QString &busId);

// Bus ids of the USB devices present (no interfaces "1-1:1.0", no root
// hubs "usb1"), sorted.
QStringList listDeviceBusIds(const SysfsRoot &roots);

// The device's interfaces as sysfs names them ("3-1:1.0", not those of
// 3-1.2, a device behind it), sorted.
QStringList listInterfaces(const SysfsRoot &roots, const QString &busId);

// idVendor / idProduct ("%04x"); nullopt when missing or not 4 hex digits.
std::optional<quint16> readId(const SysfsRoot &roots, const QString &busId, QStringView attribute);

struct DeviceMatch
{
    QString busId; // empty when none matches
    // Devices that match but were left out, with why (for the log).
    QStringList passedOver;
};
// The device with this vendor and product (and serial, when given) that
// is not itself imported. Several matching devices without a serial to
// tell them apart: the first by bus id, and the others are named in
// passedOver so the operator learns to add the serial.
DeviceMatch findDevice(
    const SysfsRoot &roots, quint16 vendorId, quint16 productId, const QString &serial);

// "/dev/bus/usb/BBB/DDD" of a device, from its busnum and devnum.
std::optional<QString> deviceNodePath(const SysfsRoot &roots, const QString &busId);

} // namespace cloop::device::usb
