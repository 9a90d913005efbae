#include "daemon-forward/usb/usbdevicewatch.h"

#include "common/device/usb/usbsysfs.h"
#include "common/logging.h"

#include <libudev.h>

#include <QFileInfo>
#include <QPointer>

namespace cloop::forward {

void UsbDeviceWatch::UdevDeleter::operator()(udev *handle) const
{
    udev_unref(handle);
}

void UsbDeviceWatch::UdevDeleter::operator()(udev_monitor *handle) const
{
    udev_monitor_unref(handle);
}

UsbDeviceWatch::UsbDeviceWatch(protocol::DeviceSpec spec, device::SysfsRoot roots, QObject *parent)
    : QObject(parent)
    , m_spec(std::move(spec))
    , m_roots(std::move(roots))
{ }

UsbDeviceWatch::~UsbDeviceWatch() = default;

Status UsbDeviceWatch::start()
{
    if (device::KernelStandIn *standIn = m_roots.kernelStandIn()) {
        QPointer<UsbDeviceWatch> self(this);
        standIn->watchUsbDevices([self] {
            if (self)
                self->rescan();
        });
    } else {
        m_udev.reset(udev_new());
        if (!m_udev)
            return Error::make(QStringLiteral("udev_unavailable"),
                QStringLiteral("libudev could not be initialised"));
        // Kernel uevents need no udev daemon (a bare machine, a VM's
        // initramfs); udevd's own come after its rules ran, so prefer those
        // where it runs.
        const char *source
            = QFileInfo::exists(QStringLiteral("/run/udev/control")) ? "udev" : "kernel";
        m_monitor.reset(udev_monitor_new_from_netlink(m_udev.get(), source));
        if (!m_monitor
            || udev_monitor_filter_add_match_subsystem_devtype(m_monitor.get(), "usb", "usb_device")
                < 0
            || udev_monitor_enable_receiving(m_monitor.get()) < 0)
            return Error::make(QStringLiteral("udev_unavailable"),
                QStringLiteral("cannot watch USB devices through libudev (%1 events)")
                    .arg(QLatin1String(source)));
        m_notifier = std::make_unique<QSocketNotifier>(
            udev_monitor_get_fd(m_monitor.get()), QSocketNotifier::Read);
        connect(m_notifier.get(), &QSocketNotifier::activated, this,
            &UsbDeviceWatch::onMonitorReadable);
    }
    rescan();
    return {};
}

void UsbDeviceWatch::onMonitorReadable()
{
    // Each event is only a hint to look again; several in a row cost one look.
    while (udev_device *event = udev_monitor_receive_device(m_monitor.get()))
        udev_device_unref(event);
    rescan();
}

void UsbDeviceWatch::rescan()
{
    const device::usb::DeviceMatch match
        = device::usb::findDevice(m_roots, m_spec.vendorId, m_spec.productId, m_spec.serial);
    // Each device passed over is told once, when it appears.
    QSet<QString> passedOver(match.passedOver.cbegin(), match.passedOver.cend());
    for (const QString &other : match.passedOver) {
        if (!m_passedOver.contains(other))
            qCInfo(lcForward).noquote() << "passed over USB device" << other;
    }
    m_passedOver = std::move(passedOver);
    if (match.busId == m_busId)
        return;
    const QString previous = m_busId;
    m_busId = match.busId;
    if (m_busId.isEmpty())
        qCInfo(lcForward).noquote()
            << m_spec.describe() << "is gone (it was" << previous + QLatin1Char(')');
    else
        qCInfo(lcForward).noquote() << m_spec.describe() << "is present as" << m_busId;
    Q_EMIT presenceChanged(m_busId);
}

} // namespace cloop::forward
