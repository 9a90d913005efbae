#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/daemon/upgraderesponder.h"
#include "common/device/sysfsroot.h"
#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <functional>
#include <memory>
#include <optional>

#include <QObject>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::protocol {
struct DeviceCounters;
struct SegmentOpen;
struct UsbOpen;
} // namespace cloop::protocol

namespace cloop::forward {

class UsbDeviceWatch;
class UsbExportLedger;

// `cloop forward`: enrolls with a bundle once, then keeps one outbound
// tunnel to the hub for the one device it was enrolled for.
class ForwarderDaemon final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderDaemon)

public:
    // `kernel` is this machine's /sys, /dev and /proc, or a test's stand-in
    // for them, as the program's main decided.
    ForwarderDaemon(const daemon::ConnectionOptions &connection, device::SysfsRoot kernel,
        daemon::UpgradeResponder::Options upgrade, QObject *parent = nullptr);
    ~ForwarderDaemon() override;

    Status prepare() { return m_connector.prepare(); }
    void start();
    void stop() { m_connector.stop(); }

Q_SIGNALS:
    void finished(int exitCode);

private:
    // The device to carry is the one the credential file records; a
    // welcome naming another stops the forwarder for good (false).
    bool adoptDevice(const protocol::Welcome &welcome);
    // The hub opens channels to the device: a test, or a run's stream,
    // here or on a leg of the forwarder's own that the channel stands for.
    void onChannelRequested(tunnel::Channel *channel);
    // A run's stream: frames of the segment both ways while it lasts.
    void openSegmentStream(tunnel::Channel *channel, const protocol::SegmentOpen &open);
    // A USB/IP connection: a run's import, or a test's device list (the
    // forwarder carries a USB device).
    void openUsbSession(tunnel::Channel *channel, const protocol::UsbOpen &open);
    // Tells the hub where the device is now (device.state).
    void reportDeviceState();
    // Tells the hub a stream's counts (device.counters) every few seconds
    // while they move; the answer says them once more (at the stream's end).
    // The hub counts the bytes; frames, URBs and drops only this end sees.
    std::function<void()> reportCounters(
        QObject *stream, std::function<protocol::DeviceCounters()> count);

    daemon::DaemonConnector m_connector;
    daemon::UpgradeResponder m_upgrade;
    device::SysfsRoot m_kernel;
    std::optional<protocol::DeviceSpec> m_device; // as the credential file records it
    int m_hubProtocol = 0;
    std::unique_ptr<UsbDeviceWatch> m_usb; // for a USB device
    std::unique_ptr<UsbExportLedger> m_exports; // what is lent to usbip-host
};

} // namespace cloop::forward
