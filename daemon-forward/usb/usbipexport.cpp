#include "daemon-forward/usb/usbipexport.h"

#include "daemon-forward/usb/usbexportledger.h"

#include "common/device/usb/usbsysfs.h"
#include "common/logging.h"

#include <sys/socket.h>

#include <QFileInfo>

#include <cerrno>
#include <cstring>

namespace cloop::forward {

namespace {

const QString kUsbipHost = QStringLiteral("/sys/bus/usb/drivers/usbip-host");

QString deviceDir(const QString &busId)
{
    return device::usb::kUsbDevicesDir + QLatin1Char('/') + busId;
}

// match_busid, bind and rebind take the bus id alone: the kernel copies
// whatever follows, so a newline would become part of the name.
QByteArray bare(const QString &busId)
{
    return busId.toLatin1();
}

std::optional<QString> driverOf(const device::SysfsRoot &roots, const QString &busId)
{
    const auto target = roots.resolve(deviceDir(busId) + QLatin1String("/driver"));
    if (!target)
        return std::nullopt;
    return QFileInfo(*target).fileName();
}

} // namespace

UsbipExport::UsbipExport(device::SysfsRoot roots, QString busId, QString originalDriver)
    : m_roots(std::move(roots))
    , m_busId(std::move(busId))
    , m_originalDriver(std::move(originalDriver))
{ }

Result<std::unique_ptr<UsbipExport>> UsbipExport::begin(
    const device::SysfsRoot &roots, const QString &busId, UsbExportLedger *ledger)
{
    if (!roots.exists(deviceDir(busId)))
        return Error::make(QStringLiteral("usb_device_gone"),
            QStringLiteral("USB device %1 is not present").arg(busId));
    if (device::usb::isImportedDevice(roots, busId))
        return Error::make(QStringLiteral("usb_imported"),
            QStringLiteral(
                "USB device %1 is itself imported over USB/IP and is never forwarded again")
                .arg(busId));
    if (!roots.exists(kUsbipHost))
        return Error::make(QStringLiteral("usbip_host_missing"),
            QStringLiteral("the kernel's usbip-host driver is not loaded (modprobe usbip-host)"));
    const std::optional<QString> driver = driverOf(roots, busId);
    if (driver == QLatin1String("usbip-host")) {
        // Left bound by a forwarder that died, or exported by usbipd: take
        // it only when no connection holds it.
        if (roots.readAttribute(deviceDir(busId) + QLatin1String("/usbip_status"))
            != QLatin1String("1"))
            return Error::make(ErrorCode::UsbBusy,
                QStringLiteral("USB device %1 is in use by another USB/IP connection").arg(busId));
        qCInfo(lcForward).noquote()
            << "USB device" << busId << "was left bound to usbip-host; taking it over";
    }
    // Recorded before the first step, so a death halfway is recovered too;
    // from here on every way out forgets it again or leaves it to the
    // export, which forgets it once the device is back.
    if (ledger) {
        if (Status recorded = ledger->record(busId); !recorded)
            qCWarning(lcForward).noquote()
                << "cannot record the export:" << recorded.error().message;
    }
    if (driver != QLatin1String("usbip-host")) {
        // A step the kernel refuses leaves the device with its own driver
        // again. Not `rebind`: for an entry usbip-host never bound, the
        // kernel's rebind follows a null device pointer.
        const auto undo = [&](bool unbound, bool added, const Error &error) {
            if (ledger)
                (void)ledger->forget(busId);
            if (added)
                (void)roots.writeAttribute(
                    kUsbipHost + QLatin1String("/match_busid"), QByteArray("del ") + bare(busId));
            if (unbound && driver)
                (void)roots.writeAttribute(
                    QStringLiteral("/sys/bus/usb/drivers/%1/bind").arg(*driver), bare(busId));
            return error;
        };
        if (driver) {
            if (Status unbound = roots.writeAttribute(
                    QStringLiteral("/sys/bus/usb/drivers/%1/unbind").arg(*driver), bare(busId));
                !unbound)
                return undo(false, false, unbound.error());
        }
        if (Status added = roots.writeAttribute(
                kUsbipHost + QLatin1String("/match_busid"), QByteArray("add ") + bare(busId));
            !added)
            return undo(true, false, added.error());
        if (Status bound = roots.writeAttribute(kUsbipHost + QLatin1String("/bind"), bare(busId));
            !bound)
            return undo(true, true, bound.error());
    }
    std::unique_ptr<UsbipExport> exported(
        new UsbipExport(roots, busId, driver.value_or(QStringLiteral("none"))));
    exported->m_ledger = ledger;
    const auto status = roots.readAttribute(deviceDir(busId) + QLatin1String("/usbip_status"));
    if (status != QLatin1String("1"))
        return Error::make(ErrorCode::UsbBusy,
            QStringLiteral("usbip-host reports USB device %1 as %2, not available")
                .arg(busId, status.value_or(QStringLiteral("unknown"))));
    auto record = device::usb::readDeviceRecord(roots, busId);
    if (!record)
        return record.error();
    exported->m_record = std::move(*record);
    qCInfo(lcForward).noquote() << "USB device" << busId << "bound to usbip-host (its driver was"
                                << exported->m_originalDriver + QLatin1Char(')');
    return exported;
}

UsbipExport::~UsbipExport()
{
    const Status back = giveBack(m_roots, m_busId);
    if (!back)
        qCWarning(lcForward).noquote() << "could not give USB device" << m_busId
                                       << "back to its driver:" << back.error().message;
    else
        qCInfo(lcForward).noquote() << "USB device" << m_busId << "given back to its driver";
    if (m_ledger && back) {
        if (Status forgotten = m_ledger->forget(m_busId); !forgotten)
            qCWarning(lcForward).noquote()
                << "cannot update the export record:" << forgotten.error().message;
    }
}

Result<util::Fd> UsbipExport::connect()
{
    int ends[2] = { -1, -1 };
    // SOCK_STREAM: usbip-host refuses any other socket type.
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
        return Error::make(QStringLiteral("socketpair"),
            QStringLiteral("socketpair: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    util::Fd ours(ends[0]);
    util::Fd kernels(ends[1]);
    // The kernel looks the number up in this process's table and keeps its
    // own reference; this copy closes when `kernels` goes.
    if (Status handed = m_roots.writeAttribute(
            deviceDir(m_busId) + QLatin1String("/usbip_sockfd"), QByteArray::number(kernels.get()));
        !handed)
        return handed.error();
    return ours;
}

Status UsbipExport::giveBack(const device::SysfsRoot &roots, const QString &busId)
{
    if (!roots.exists(deviceDir(busId))) {
        // Unplugged: the kernel already forgot the binding; only the match
        // entry would be left, and a replugged device must not be grabbed
        // by usbip-host before anyone asks.
        (void)roots.writeAttribute(
            kUsbipHost + QLatin1String("/match_busid"), QByteArray("del ") + bare(busId));
        return {};
    }
    // As `usbip unbind`: rebind alone would leave a bound device where it
    // is (the kernel's device_attach keeps a driver it finds), and the
    // match entry an unbound device keeps lets rebind find it and re-probe
    // it with usbip-host refusing.
    (void)roots.writeAttribute(kUsbipHost + QLatin1String("/unbind"), bare(busId));
    (void)roots.writeAttribute(
        kUsbipHost + QLatin1String("/match_busid"), QByteArray("del ") + bare(busId));
    Status rebound = roots.writeAttribute(kUsbipHost + QLatin1String("/rebind"), bare(busId));
    if (!rebound) {
        // No entry left to rebind by: the bus probes it afresh.
        rebound = roots.writeAttribute(QStringLiteral("/sys/bus/usb/drivers_probe"), bare(busId));
    }
    return rebound;
}

} // namespace cloop::forward
