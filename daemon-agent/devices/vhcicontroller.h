#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"

#include <QList>
#include <QString>

#include <optional>

namespace cloop::agent {

// The kernel's vhci_hcd (the USB/IP client's host controller) through its
// files on vhci_hcd.0: the ports' status, attach and detach. Every port is
// named by its global number, as the status files print it.
class VhciController
{
public:
    static constexpr QStringView kDirectory = u"/sys/devices/platform/vhci_hcd.0";

    struct Port
    {
        bool superSpeedHub = false; // "ss", else "hs"
        int number = 0;
        int state = 0; // VDEV_ST_*: 4 free, 5 not yet assigned, 6 used, 7 error
        int speed = 0;
        quint32 deviceId = 0;
        QString localBusId; // "3-1" once enumerated, "0-0" before

        bool isFree() const { return state == 4; }
        bool isAttaching() const { return state == 5; }
        bool isUsed() const { return state == 6; }
    };

    explicit VhciController(device::SysfsRoot roots)
        : m_roots(std::move(roots))
    { }

    bool isLoaded() const;
    // Every port of every controller (status, status.1, …). Errors:
    // "vhci_missing" (the vhci-hcd module is not loaded),
    // "vhci_unreadable".
    Result<QList<Port>> ports() const;
    std::optional<Port> port(int number) const;

    // Hands the kernel `socketFd` for a device of this speed and devid, on
    // the first free port of the hub the speed needs (SuperSpeed and up:
    // the ss hub), trying the next on EBUSY as `usbip attach` does.
    // Returns the port. Errors: "vhci_missing", "vhci_no_free_port",
    // "usb_speed_unsupported", "kernel_write".
    Result<int> attach(int socketFd, quint32 deviceId, quint32 speed) const;
    // Frees a port (the kernel closes its side of the connection).
    Status detach(int port) const;

    // Keeps this machine's own drivers off imported devices: interfaces of
    // devices that come on vhci's root hubs start unauthorized, so no
    // kernel driver probes them (usb-storage, usbhid, …) and the device is
    // the sandbox's alone. Only vhci's root hubs are touched. A kernel
    // without interface authorization (before 4.4) is left as it is.
    Status keepHostDriversOff() const;
    // Authorizes the interfaces of the device at local bus id `busId`, so a
    // program holding its node can claim them; nothing probes them.
    Status authorizeInterfaces(const QString &busId) const;

private:
    device::SysfsRoot m_roots;
};

} // namespace cloop::agent
