#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>

// Fixture trees that look like a machine's /sys and /dev as Linux shows
// them with USB devices (drivers/usb/core/sysfs.c formats), for the
// forwarder's machine (devices on a PCI host controller, usbip-host
// loaded) and the agent's (vhci_hcd.0 with its two root hubs). Every path
// is below a root that stands for "/", so SysfsRoot(root) reads them.
namespace cloop::testsupport::usb {

struct FixtureInterface
{
    quint8 interfaceClass = 0xff;
    quint8 interfaceSubClass = 0;
    quint8 interfaceProtocol = 0;
};

struct FixtureDevice
{
    QString busId = QStringLiteral("1-1"); // the bus number is its first part
    quint16 vendorId = 0x1234;
    quint16 productId = 0x5678;
    quint16 bcdDevice = 0x0100;
    QString serial; // no file when empty, as for a device without one
    QString manufacturer;
    QString product;
    QString speed = QStringLiteral("480"); // the sysfs text
    quint8 deviceClass = 0;
    quint8 deviceSubClass = 0;
    quint8 deviceProtocol = 0;
    quint8 maxPacketSize0 = 64;
    int deviceNumber = 0; // 0: the next free one on its bus, from 2
    // Empty: an unconfigured device (bConfigurationValue and bNumInterfaces
    // empty, as the kernel prints them then).
    QList<FixtureInterface> interfaces = { FixtureInterface {} };
    // Hangs off vhci_hcd.0's root hub of its bus (usb3/usb4) instead of the
    // PCI controller: a device this machine imported over USB/IP.
    bool imported = false;
    QString driver = QStringLiteral("usb"); // empty: bound to no driver

    int busNumber() const;
};

class UsbFixture
{
public:
    // The kernel path of the device's folder:
    // "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1", or
    // "/sys/devices/platform/vhci_hcd.0/usb3/3-1" when imported.
    static QString devicePath(const FixtureDevice &device);

    // The forwarder's machine: the devices with their interfaces, the
    // /sys/bus/usb/devices links, the root hubs, and the usb and
    // usbip-host drivers' control files. Device numbers left at 0 are
    // given out per bus.
    static Status makeForwarderMachine(const QString &root, const QList<FixtureDevice> &devices);

    // The agent's machine: vhci_hcd.0 with hcPorts ports on each of its
    // root hubs (usb3 high speed, usb4 super speed), every port free, and
    // empty /sys/bus/usb/devices and /dev/bus/usb otherwise.
    static Status makeAgentMachine(const QString &root, int hcPorts = 8);

    // One device as hot-plugging it would show it: its folder with every
    // attribute first and the /sys/bus/usb/devices link last, so a reader
    // listing devices never finds one half made. Its root hub is made
    // when missing. deviceNumber must be set.
    static Status addDevice(const device::SysfsRoot &roots, const FixtureDevice &device);
    // The opposite: the link first, then the folder and the driver's
    // link to it. The device node is left to the caller.
    static Status removeDevice(const device::SysfsRoot &roots, const QString &busId);
    // The device as the tree shows it now (for re-plugging it later);
    // nullopt when it is not there.
    static std::optional<FixtureDevice> readDevice(
        const device::SysfsRoot &roots, const QString &busId);

    // Points the device's `driver` link at /sys/bus/usb/drivers/<driver>
    // and adds the driver's link back to the device, as binding does;
    // an empty driver unbinds.
    static Status setDriver(
        const device::SysfsRoot &roots, const QString &busId, const QString &driver);
    // The name of the driver the device is bound to, empty when none.
    static QString driverOf(const device::SysfsRoot &roots, const QString &busId);

    // /dev/bus/usb/BBB/DDD: a character device 189:((bus-1)*128+dev-1)
    // when this process may make one, a plain file otherwise.
    static Result<QString> makeDeviceNode(
        const device::SysfsRoot &roots, int busNumber, int deviceNumber);
    static QString deviceNodePath(int busNumber, int deviceNumber);

    // Files written the way sysfs shows them: replaced whole (a reader
    // never finds one half written).
    static Status writeFile(const QString &realPath, const QByteArray &contents);
    static Status makeRelativeLink(const QString &realTarget, const QString &realLink);
};

// One line of vhci_hcd.0/status (vhci_sysfs.c port_show_vhci).
struct VhciPortLine
{
    bool superSpeed = false;
    int port = 0; // the global port number
    int status = 4; // VDEV_ST_*: 4 free, 6 used
    quint32 speed = 0;
    quint32 deviceId = 0;
    quint32 sockfd = 0; // as written to attach
    QString localBusId = QStringLiteral("0-0");
};
// The header line, then the lines in the order given (every hs port, then
// every ss port, on a real controller).
QByteArray vhciStatusText(const QList<VhciPortLine> &ports);

// The sysfs `speed` text of a usb_device_speed value, as speed_show prints it.
QString speedText(quint32 speed);

} // namespace cloop::testsupport::usb
