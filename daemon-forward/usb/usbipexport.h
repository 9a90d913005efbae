#pragma once

#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/result.h"
#include "common/util/fd.h"

#include <QString>

#include <memory>

namespace cloop::forward {

class UsbExportLedger;

// One device lent to the kernel's usbip-host driver, for as long as this
// object lives (RAII): begin() does what `usbip bind` does (unbind from its
// driver, add the bus id to usbip-host's match list, bind), and the
// destructor gives the device back to its usual driver (`rebind`, which
// re-probes it and drops the match entry). Nothing listens: connect()
// hands the kernel one end of a socketpair through usbip_sockfd.
class UsbipExport final
{
public:
    // Errors: "usb_imported" (it hangs off vhci_hcd), "usb_busy" (another
    // USB/IP server has it in use), "usb_device_gone", "usbip_host_missing"
    // (the usbip-host module is not loaded), "kernel_write" (the kernel
    // refused a step; its words are in the message).
    // With a ledger, the bus id is recorded while the export lasts (so a
    // restarted forwarder can give back what a dead one left).
    static Result<std::unique_ptr<UsbipExport>> begin(
        const device::SysfsRoot &roots, const QString &busId, UsbExportLedger *ledger = nullptr);
    // What the destructor does: unbind from usbip-host, drop the match
    // entry, rebind (or probe afresh); nothing for an unplugged device but
    // the match entry.
    static Status giveBack(const device::SysfsRoot &roots, const QString &busId);
    ~UsbipExport();
    UsbipExport(const UsbipExport &) = delete;
    UsbipExport &operator=(const UsbipExport &) = delete;

    // The record an OP_REP_IMPORT carries: busnum and devnum as usbip-host
    // bound it, since the stub drops commands for any other devid.
    const device::usb::usbip::DeviceRecord &record() const { return m_record; }
    QString busId() const { return m_busId; }

    // A socketpair; one end goes to the kernel (usbip_sockfd), whose copy
    // this process then closes. Returns this process's end.
    Result<util::Fd> connect();

private:
    UsbipExport(device::SysfsRoot roots, QString busId, QString originalDriver);

    device::SysfsRoot m_roots;
    QString m_busId;
    QString m_originalDriver; // for the log
    UsbExportLedger *m_ledger = nullptr;
    device::usb::usbip::DeviceRecord m_record;
};

} // namespace cloop::forward
