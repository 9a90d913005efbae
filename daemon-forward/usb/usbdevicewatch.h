#pragma once

#include "common/device/sysfsroot.h"
#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QObject>
#include <QSet>
#include <QSocketNotifier>

#include <memory>

struct udev;
struct udev_monitor;

namespace cloop::forward {

// Where the forwarder's USB device is now. It is found by vendor, product
// and (when enrolled with one) serial, never when it hangs off vhci_hcd
// (imported over USB/IP itself), and looked for again whenever USB devices
// come or go: libudev's monitor tells of the kernel's uevents, or, in
// tests, the kernel stand-in behind SysfsRoot does.
class UsbDeviceWatch final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UsbDeviceWatch)

public:
    UsbDeviceWatch(protocol::DeviceSpec spec, device::SysfsRoot roots, QObject *parent = nullptr);
    ~UsbDeviceWatch() override;

    // Starts watching and looks once. Errors: "udev_unavailable".
    Status start();
    // Looks again now (uevents may trail the kernel's own teardown).
    void rescan();

    // The device's bus id, empty while no matching device is present.
    QString busId() const { return m_busId; }
    const device::SysfsRoot &roots() const { return m_roots; }
    const protocol::DeviceSpec &spec() const { return m_spec; }

Q_SIGNALS:
    // The device came (busId), went (empty) or moved to another bus id.
    void presenceChanged(const QString &busId);

private:
    void onMonitorReadable();

    protocol::DeviceSpec m_spec;
    device::SysfsRoot m_roots;
    QString m_busId;
    QSet<QString> m_passedOver; // as last logged
    struct UdevDeleter
    {
        void operator()(udev *handle) const;
        void operator()(udev_monitor *handle) const;
    };
    std::unique_ptr<udev, UdevDeleter> m_udev;
    std::unique_ptr<udev_monitor, UdevDeleter> m_monitor;
    std::unique_ptr<QSocketNotifier> m_notifier;
};

} // namespace cloop::forward
