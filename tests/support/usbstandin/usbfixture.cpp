#include "tests/support/usbstandin/usbfixture.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace cloop::testsupport::usb {

namespace {

constexpr int kUsbDeviceMajor = 189;
const QString kDevicesDir = QStringLiteral("/sys/bus/usb/devices");
const QString kDriversDir = QStringLiteral("/sys/bus/usb/drivers");
const QString kVhciDir = QStringLiteral("/sys/devices/platform/vhci_hcd.0");
const QString kUsbDriver = QStringLiteral("usb");

Error fixtureError(const QString &what, int error = 0)
{
    QString message = what;
    if (error)
        message += QStringLiteral(": ") + QString::fromLocal8Bit(std::strerror(error));
    return Error::make(QStringLiteral("fixture_write"), message);
}

QByteArray hex(unsigned value, int digits)
{
    return QByteArray::number(value, 16).rightJustified(digits, '0') + '\n';
}

QByteArray decimal(long long value)
{
    return QByteArray::number(value) + '\n';
}

// "1-1.2" -> "1.2": the port path below the root hub (sysfs `devpath`).
QString portPath(const QString &busId)
{
    return busId.section(QLatin1Char('-'), 1);
}

// In this fixture the vhci root hubs are bus 3 (high speed) and bus 4
// (super speed); an imported device on an even bus hangs off the ss hub.
bool isSuperSpeedVhciBus(int bus)
{
    return bus % 2 == 0;
}

QString rootHubPath(int bus, bool imported)
{
    if (imported)
        return kVhciDir + QStringLiteral("/usb%1").arg(bus);
    return QStringLiteral("/sys/devices/pci0000:00/0000:00:14.0/usb%1").arg(bus);
}

Status mkpath(const QString &realDir)
{
    if (!QDir().mkpath(realDir))
        return fixtureError(QStringLiteral("cannot make %1").arg(realDir), errno);
    return {};
}

// Writes name -> contents below a folder, stopping at the first failure.
Status writeAll(const QString &realDir, const std::map<QString, QByteArray> &files)
{
    for (const auto &[name, contents] : files) {
        if (Status written = UsbFixture::writeFile(realDir + QLatin1Char('/') + name, contents);
            !written)
            return written;
    }
    return {};
}

Status ensureRootHub(const device::SysfsRoot &roots, int bus, bool imported)
{
    const QString kernelPath = rootHubPath(bus, imported);
    const QString real = roots.path(kernelPath);
    if (QFileInfo::exists(real))
        return {};
    const bool superSpeed = imported && isSuperSpeedVhciBus(bus);
    if (Status made = mkpath(real); !made)
        return made;
    const QString product = imported ? QStringLiteral("USB/IP Virtual Host Controller")
                                     : QStringLiteral("xHCI Host Controller");
    Status written = writeAll(real,
        {
            { QStringLiteral("busnum"), decimal(bus) },
            { QStringLiteral("devnum"), decimal(1) },
            { QStringLiteral("devpath"), decimal(0) },
            { QStringLiteral("idVendor"), hex(0x1d6b, 4) },
            { QStringLiteral("idProduct"), hex(superSpeed ? 0x0003 : 0x0002, 4) },
            { QStringLiteral("bcdDevice"), hex(0x0601, 4) },
            { QStringLiteral("bDeviceClass"), hex(0x09, 2) },
            { QStringLiteral("bDeviceSubClass"), hex(0x00, 2) },
            { QStringLiteral("bDeviceProtocol"), hex(superSpeed ? 0x03 : 0x01, 2) },
            { QStringLiteral("bConfigurationValue"), decimal(1) },
            { QStringLiteral("bNumConfigurations"), decimal(1) },
            { QStringLiteral("bNumInterfaces"), QByteArray(" 1\n") },
            { QStringLiteral("speed"), superSpeed ? QByteArray("5000\n") : QByteArray("480\n") },
            { QStringLiteral("product"), product.toUtf8() + '\n' },
            { QStringLiteral("manufacturer"),
                QByteArray("Linux 6.1.0 ") + (imported ? "vhci_hcd" : "xhci-hcd") + '\n' },
            { QStringLiteral("serial"),
                (imported ? QByteArray("vhci_hcd.0") : QByteArray("0000:00:14.0")) + '\n' },
            { QStringLiteral("dev"),
                QByteArray::number(kUsbDeviceMajor) + ':' + QByteArray::number((bus - 1) * 128)
                    + '\n' },
        });
    if (!written)
        return written;
    const QString name = QStringLiteral("usb%1").arg(bus);
    if (Status linked
        = UsbFixture::makeRelativeLink(real, roots.path(kDevicesDir + QLatin1Char('/') + name));
        !linked)
        return linked;
    return UsbFixture::setDriver(roots, name, QStringLiteral("usb"));
}

Status makeDriver(const device::SysfsRoot &roots, const QString &driver, const QStringList &files,
    const QByteArray &initialMatchBusId = {})
{
    const QString real = roots.path(kDriversDir + QLatin1Char('/') + driver);
    if (Status made = mkpath(real); !made)
        return made;
    for (const QString &file : files) {
        const QByteArray contents = file == u"match_busid" ? initialMatchBusId : QByteArray();
        if (Status written = UsbFixture::writeFile(real + QLatin1Char('/') + file, contents);
            !written)
            return written;
    }
    return {};
}

std::optional<unsigned> readNumber(const device::SysfsRoot &roots, const QString &path, int base)
{
    const auto text = roots.readAttribute(path);
    if (!text)
        return std::nullopt;
    bool ok = false;
    const unsigned value = text->toUInt(&ok, base);
    return ok ? std::optional<unsigned>(value) : std::nullopt;
}

} // namespace

int FixtureDevice::busNumber() const
{
    return busId.section(QLatin1Char('-'), 0, 0).toInt();
}

QString speedText(quint32 speed)
{
    switch (speed) {
    case 1:
        return QStringLiteral("1.5");
    case 2:
        return QStringLiteral("12");
    case 3:
    case 4:
        return QStringLiteral("480");
    case 5:
        return QStringLiteral("5000");
    case 6:
        return QStringLiteral("10000");
    default:
        return QStringLiteral("unknown");
    }
}

QByteArray vhciStatusText(const QList<VhciPortLine> &ports)
{
    QByteArray text("hub port sta spd dev      sockfd local_busid\n");
    for (const VhciPortLine &line : ports) {
        text += QStringLiteral("%1  %2 %3 ")
                    .arg(line.superSpeed ? u"ss" : u"hs")
                    .arg(line.port, 4, 10, QLatin1Char('0'))
                    .arg(line.status, 3, 10, QLatin1Char('0'))
                    .toLatin1();
        if (line.status == 6) {
            text += QStringLiteral("%1 %2 %3 %4")
                        .arg(line.speed, 3, 10, QLatin1Char('0'))
                        .arg(line.deviceId, 8, 16, QLatin1Char('0'))
                        .arg(line.sockfd, 6, 10, QLatin1Char('0'))
                        .arg(line.localBusId)
                        .toLatin1();
        } else {
            text += "000 00000000 000000 0-0";
        }
        text += '\n';
    }
    return text;
}

QString UsbFixture::devicePath(const FixtureDevice &device)
{
    QString path = rootHubPath(device.busNumber(), device.imported);
    // A device behind an external hub lives in the hub's folder:
    // usb1/1-1/1-1.2.
    const QString bus = device.busId.section(QLatin1Char('-'), 0, 0);
    const QStringList ports = portPath(device.busId).split(QLatin1Char('.'));
    for (qsizetype i = 0; i < ports.size(); ++i)
        path += QLatin1Char('/') + bus + QLatin1Char('-')
            + ports.mid(0, i + 1).join(QLatin1Char('.'));
    return path;
}

Status UsbFixture::makeForwarderMachine(const QString &root, const QList<FixtureDevice> &devices)
{
    const device::SysfsRoot roots(root);
    for (const QString &dir : { kDevicesDir, QStringLiteral("/dev/bus/usb") }) {
        if (Status made = mkpath(roots.path(dir)); !made)
            return made;
    }
    if (Status made
        = makeDriver(roots, kUsbDriver, { QStringLiteral("bind"), QStringLiteral("unbind") });
        !made)
        return made;
    // Shown with nothing in it: an empty list and show's closing newline.
    if (Status made = makeDriver(roots, QStringLiteral("usbip-host"),
            { QStringLiteral("bind"), QStringLiteral("unbind"), QStringLiteral("match_busid"),
                QStringLiteral("rebind") },
            QByteArray("\n"));
        !made)
        return made;
    std::map<int, int> lastDeviceNumber;
    for (const FixtureDevice &device : devices) {
        if (device.deviceNumber)
            lastDeviceNumber[device.busNumber()]
                = std::max(lastDeviceNumber[device.busNumber()], device.deviceNumber);
    }
    for (FixtureDevice device : devices) {
        if (!device.deviceNumber) {
            int &last = lastDeviceNumber[device.busNumber()];
            last = std::max(last, 1) + 1;
            device.deviceNumber = last;
        }
        if (Status added = addDevice(roots, device); !added)
            return added;
    }
    return {};
}

Status UsbFixture::makeAgentMachine(const QString &root, int hcPorts)
{
    const device::SysfsRoot roots(root);
    for (const QString &dir : { kDevicesDir, QStringLiteral("/dev/bus/usb"), kVhciDir }) {
        if (Status made = mkpath(roots.path(dir)); !made)
            return made;
    }
    if (Status made
        = makeDriver(roots, kUsbDriver, { QStringLiteral("bind"), QStringLiteral("unbind") });
        !made)
        return made;
    QList<VhciPortLine> lines;
    for (int port = 0; port < 2 * hcPorts; ++port) {
        VhciPortLine line;
        line.superSpeed = port >= hcPorts;
        line.port = port;
        lines.append(line);
    }
    Status written = writeAll(roots.path(kVhciDir),
        {
            { QStringLiteral("attach"), {} },
            { QStringLiteral("detach"), {} },
            { QStringLiteral("nports"), decimal(2 * hcPorts) },
            { QStringLiteral("status"), vhciStatusText(lines) },
        });
    if (!written)
        return written;
    for (const int bus : { 3, 4 }) {
        if (Status made = ensureRootHub(roots, bus, true); !made)
            return made;
    }
    return {};
}

Status UsbFixture::addDevice(const device::SysfsRoot &roots, const FixtureDevice &device)
{
    const int bus = device.busNumber();
    if (bus <= 0 || device.deviceNumber <= 0)
        return fixtureError(
            QStringLiteral("device %1 has no bus or device number").arg(device.busId));
    if (Status hub = ensureRootHub(roots, bus, device.imported); !hub)
        return hub;
    const QString real = roots.path(devicePath(device));
    if (Status made = mkpath(real); !made)
        return made;
    const bool configured = !device.interfaces.isEmpty();
    const bool superSpeed = device.speed.toInt() >= 5000;
    std::map<QString, QByteArray> files {
        { QStringLiteral("busnum"), decimal(bus) },
        { QStringLiteral("devnum"), decimal(device.deviceNumber) },
        { QStringLiteral("devpath"), portPath(device.busId).toUtf8() + '\n' },
        { QStringLiteral("idVendor"), hex(device.vendorId, 4) },
        { QStringLiteral("idProduct"), hex(device.productId, 4) },
        { QStringLiteral("bcdDevice"), hex(device.bcdDevice, 4) },
        { QStringLiteral("bDeviceClass"), hex(device.deviceClass, 2) },
        { QStringLiteral("bDeviceSubClass"), hex(device.deviceSubClass, 2) },
        { QStringLiteral("bDeviceProtocol"), hex(device.deviceProtocol, 2) },
        { QStringLiteral("bMaxPacketSize0"), decimal(device.maxPacketSize0) },
        { QStringLiteral("bNumConfigurations"), decimal(1) },
        // The kernel prints these empty while the device is unconfigured,
        // and bNumInterfaces as "%2d".
        { QStringLiteral("bConfigurationValue"), configured ? decimal(1) : QByteArray("\n") },
        { QStringLiteral("bNumInterfaces"),
            configured ? QByteArray::number(device.interfaces.size()).rightJustified(2, ' ') + '\n'
                       : QByteArray("\n") },
        { QStringLiteral("speed"), device.speed.toUtf8() + '\n' },
        { QStringLiteral("version"), superSpeed ? QByteArray(" 3.00\n") : QByteArray(" 2.00\n") },
        { QStringLiteral("dev"),
            QByteArray::number(kUsbDeviceMajor) + ':'
                + QByteArray::number((bus - 1) * 128 + device.deviceNumber - 1) + '\n' },
    };
    if (!device.serial.isEmpty())
        files.emplace(QStringLiteral("serial"), device.serial.toUtf8() + '\n');
    if (!device.manufacturer.isEmpty())
        files.emplace(QStringLiteral("manufacturer"), device.manufacturer.toUtf8() + '\n');
    if (!device.product.isEmpty())
        files.emplace(QStringLiteral("product"), device.product.toUtf8() + '\n');
    if (Status written = writeAll(real, files); !written)
        return written;
    for (qsizetype number = 0; number < device.interfaces.size(); ++number) {
        const FixtureInterface &interface = device.interfaces.at(number);
        const QString name = QStringLiteral("%1:1.%2").arg(device.busId).arg(number);
        const QString interfaceReal = real + QLatin1Char('/') + name;
        if (Status made = mkpath(interfaceReal); !made)
            return made;
        Status written = writeAll(interfaceReal,
            {
                { QStringLiteral("bInterfaceNumber"), hex(unsigned(number), 2) },
                { QStringLiteral("bAlternateSetting"), QByteArray(" 0\n") },
                { QStringLiteral("bNumEndpoints"), hex(2, 2) },
                { QStringLiteral("bInterfaceClass"), hex(interface.interfaceClass, 2) },
                { QStringLiteral("bInterfaceSubClass"), hex(interface.interfaceSubClass, 2) },
                { QStringLiteral("bInterfaceProtocol"), hex(interface.interfaceProtocol, 2) },
            });
        if (!written)
            return written;
        if (Status linked
            = makeRelativeLink(interfaceReal, roots.path(kDevicesDir + QLatin1Char('/') + name));
            !linked)
            return linked;
    }
    if (Status linked
        = makeRelativeLink(real, roots.path(kDevicesDir + QLatin1Char('/') + device.busId));
        !linked)
        return linked;
    return setDriver(roots, device.busId, device.driver);
}

Status UsbFixture::removeDevice(const device::SysfsRoot &roots, const QString &busId)
{
    const auto kernelPath = roots.resolve(kDevicesDir + QLatin1Char('/') + busId);
    if (!kernelPath)
        return fixtureError(QStringLiteral("no device %1").arg(busId));
    const QString driver = driverOf(roots, busId);
    // Links first: a reader listing devices must not find a half-removed one.
    QFile::remove(roots.path(kDevicesDir + QLatin1Char('/') + busId));
    for (const QString &name : roots.list(kDevicesDir)) {
        if (name.startsWith(busId + QLatin1Char(':')))
            QFile::remove(roots.path(kDevicesDir + QLatin1Char('/') + name));
    }
    if (!driver.isEmpty())
        QFile::remove(
            roots.path(kDriversDir + QLatin1Char('/') + driver + QLatin1Char('/') + busId));
    if (!QDir(roots.path(*kernelPath)).removeRecursively())
        return fixtureError(QStringLiteral("cannot remove %1").arg(*kernelPath), errno);
    return {};
}

std::optional<FixtureDevice> UsbFixture::readDevice(
    const device::SysfsRoot &roots, const QString &busId)
{
    const QString base = kDevicesDir + QLatin1Char('/') + busId;
    const auto kernelPath = roots.resolve(base);
    if (!kernelPath)
        return std::nullopt;
    FixtureDevice device;
    device.busId = busId;
    device.imported = kernelPath->contains(u"/devices/platform/vhci_hcd.");
    const auto number = [&](const char *name, int numberBase) {
        return readNumber(roots, base + QLatin1Char('/') + QLatin1String(name), numberBase)
            .value_or(0);
    };
    device.vendorId = quint16(number("idVendor", 16));
    device.productId = quint16(number("idProduct", 16));
    device.bcdDevice = quint16(number("bcdDevice", 16));
    device.deviceClass = quint8(number("bDeviceClass", 16));
    device.deviceSubClass = quint8(number("bDeviceSubClass", 16));
    device.deviceProtocol = quint8(number("bDeviceProtocol", 16));
    device.maxPacketSize0 = quint8(number("bMaxPacketSize0", 10));
    device.deviceNumber = int(number("devnum", 10));
    device.serial = roots.readAttribute(base + QStringLiteral("/serial")).value_or(QString());
    device.manufacturer
        = roots.readAttribute(base + QStringLiteral("/manufacturer")).value_or(QString());
    device.product = roots.readAttribute(base + QStringLiteral("/product")).value_or(QString());
    device.speed
        = roots.readAttribute(base + QStringLiteral("/speed")).value_or(QStringLiteral("480"));
    device.driver = driverOf(roots, busId);
    device.interfaces.clear();
    for (const QString &name : roots.list(*kernelPath)) {
        if (!name.startsWith(busId + QLatin1Char(':')))
            continue;
        const QString interfaceBase = *kernelPath + QLatin1Char('/') + name;
        FixtureInterface interface;
        interface.interfaceClass = quint8(
            readNumber(roots, interfaceBase + QStringLiteral("/bInterfaceClass"), 16).value_or(0));
        interface.interfaceSubClass
            = quint8(readNumber(roots, interfaceBase + QStringLiteral("/bInterfaceSubClass"), 16)
                         .value_or(0));
        interface.interfaceProtocol
            = quint8(readNumber(roots, interfaceBase + QStringLiteral("/bInterfaceProtocol"), 16)
                         .value_or(0));
        device.interfaces.append(interface);
    }
    return device;
}

Status UsbFixture::setDriver(
    const device::SysfsRoot &roots, const QString &busId, const QString &driver)
{
    const auto kernelPath = roots.resolve(kDevicesDir + QLatin1Char('/') + busId);
    if (!kernelPath)
        return fixtureError(QStringLiteral("no device %1").arg(busId));
    const QString real = roots.path(*kernelPath);
    const QString previous = driverOf(roots, busId);
    if (!previous.isEmpty())
        QFile::remove(
            roots.path(kDriversDir + QLatin1Char('/') + previous + QLatin1Char('/') + busId));
    QFile::remove(real + QStringLiteral("/driver"));
    if (driver.isEmpty())
        return {};
    const QString driverReal = roots.path(kDriversDir + QLatin1Char('/') + driver);
    if (Status made = mkpath(driverReal); !made)
        return made;
    if (Status linked = makeRelativeLink(driverReal, real + QStringLiteral("/driver")); !linked)
        return linked;
    return makeRelativeLink(real, driverReal + QLatin1Char('/') + busId);
}

QString UsbFixture::driverOf(const device::SysfsRoot &roots, const QString &busId)
{
    const auto driver
        = roots.resolve(kDevicesDir + QLatin1Char('/') + busId + QStringLiteral("/driver"));
    if (!driver)
        return {};
    return driver->section(QLatin1Char('/'), -1);
}

QString UsbFixture::deviceNodePath(int busNumber, int deviceNumber)
{
    return QStringLiteral("/dev/bus/usb/%1/%2")
        .arg(busNumber, 3, 10, QLatin1Char('0'))
        .arg(deviceNumber, 3, 10, QLatin1Char('0'));
}

Result<QString> UsbFixture::makeDeviceNode(
    const device::SysfsRoot &roots, int busNumber, int deviceNumber)
{
    const QString kernelPath = deviceNodePath(busNumber, deviceNumber);
    const QString real = roots.path(kernelPath);
    if (Status made = mkpath(QFileInfo(real).path()); !made)
        return made.error();
    QFile::remove(real);
    const dev_t number
        = makedev(kUsbDeviceMajor, unsigned((busNumber - 1) * 128 + deviceNumber - 1));
    if (::mknod(QFile::encodeName(real).constData(), S_IFCHR | 0664, number) == 0)
        return kernelPath;
    // Without CAP_MKNOD a plain file still tells the code under test where
    // the node is; only opening it as a device would fail.
    if (Status written = writeFile(real, {}); !written)
        return written.error();
    return kernelPath;
}

Status UsbFixture::writeFile(const QString &realPath, const QByteArray &contents)
{
    // Replaced whole, never truncated in place: a reader racing a change
    // (a status file while a port frees) sees the old text or the new one,
    // as sysfs shows it.
    QSaveFile file(realPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(contents) != contents.size()
        || !file.commit())
        return fixtureError(
            QStringLiteral("cannot write %1: %2").arg(realPath, file.errorString()));
    return {};
}

Status UsbFixture::makeRelativeLink(const QString &realTarget, const QString &realLink)
{
    const QString linkDir = QFileInfo(realLink).path();
    if (Status made = mkpath(linkDir); !made)
        return made;
    // Relative, as sysfs makes them: the tree may be moved or bind-mounted.
    const QString target = QDir(linkDir).relativeFilePath(realTarget);
    QFile::remove(realLink);
    if (::symlink(QFile::encodeName(target).constData(), QFile::encodeName(realLink).constData())
        != 0)
        return fixtureError(QStringLiteral("cannot link %1 -> %2").arg(realLink, target), errno);
    return {};
}

} // namespace cloop::testsupport::usb
