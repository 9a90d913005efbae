#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <array>
#include <functional>
#include <memory>

class QLocalSocket;

// A stand-in for the kernel's USB/IP drivers behind their sysfs files, for
// machines whose kernel has no USB: usbip-host with a simulated device on
// the forwarder's machine, vhci_hcd on the agent's. The code under test
// writes the same files it writes on a real machine (through SysfsRoot,
// with this installed); the stand-in answers as the driver would, keeps the
// fixture tree the way the kernel would show it, and speaks USB/IP on the
// sockets handed to it.
namespace cloop::testsupport::usb {

// One transfer the USB host side (the sandbox's program) submits to a
// device imported through vhci_hcd.
struct UsbTransfer
{
    int endpoint = 0; // 0: control, with setup
    bool in = false; // control transfers take it from setup[0]
    std::array<quint8, 8> setup {};
    QByteArray data; // OUT data
    qint32 length = 0; // IN: at most this many bytes (control: wLength)
};

// What UsbKernelStandIn::measureTransfers runs.
struct TransferMeasurement
{
    int controlCount = 1000;
    qint64 bulkBytes = 64 << 20; // counted out and back in
    int urbBytes = 64 * 1024;
    int bulkInFlight = 8; // URBs under way at once, as a streaming driver keeps them
};

struct UsbTransferResult
{
    qint32 status = 0; // as RET_SUBMIT carries it: 0, or -errno (-32: stalled)
    qint32 actual = 0;
    QByteArray data; // IN data
};

// Emulates, as drivers/usb/usbip and the driver core do (see
// shared/reference/linux-usbip-and-l2.md §2, §3):
//  - /sys/bus/usb/drivers/{usb,usbip-host}/{bind,unbind}, usbip-host's
//    match_busid (its 16-slot table with the kernel's states, names kept
//    verbatim: "add 1-1\n" registers "1-1\n", which no device matches;
//    "del" leaves an entry that no device is bound through — never bound,
//    or unbound since — for rebind to clear) and rebind (as
//    do_rebind: an unbound device goes back to usb, one still bound keeps
//    its driver, and an entry usbip-host never bound is refused with
//    EFAULT, where a real kernel would oops);
//  - /sys/bus/usb/devices/BUSID/usbip_sockfd: a SOCK_STREAM socket's
//    number starts a simulated device on a duplicate of it, "-1" stops it;
//  - /sys/devices/platform/vhci_hcd.0/{attach,detach} and `status`:
//    attaching enumerates the remote device with one GET_DESCRIPTOR, then
//    shows it as 3-P (4-P on the super speed hub) with its /dev node. The
//    node comes first, then the sysfs device, and the status line's
//    local_busid last (also when it goes): wait for that line, or for a
//    watchUsbDevices callback, to find everything in place;
//  - any other file below /sys or /dev: written as it is, when it exists.
// Errors carry the kernel's errno text, as SysfsRoot::writeAttribute's do.
//
// The simulated device (vendor, product, strings and classes from the
// fixture device): ep0 answers GET_DESCRIPTOR for the device (18 bytes,
// bcdUSB 2.00, max packet 64), its configuration (one interface with bulk
// 0x01 OUT and 0x81 IN, 512 bytes) and strings, GET_STATUS,
// GET/SET_CONFIGURATION, SET_INTERFACE 0/0, CLEAR_FEATURE, a vendor OUT
// request 0x40/0x01 that stores up to 4096 bytes and a vendor IN request
// 0xc0/0x02 that returns them; anything else stalls (-32). Bulk ep 1 is a
// loopback: OUT appends to a 64 MiB FIFO, IN returns at once what is
// there (up to the length asked, possibly nothing). A command with any
// devid but (busnum << 16) | devnum at bind time drops the connection.
//
// Thread-safe. Every connection runs on a thread of its own with blocking
// IO; the destructor shuts every connection down and joins every thread.
// Connections that end on their own end as the kernel's do: the forwarder
// side's usbip_status goes back to 1, the agent side's port is freed.
class UsbKernelStandIn final : public device::KernelStandIn
{
public:
    explicit UsbKernelStandIn(device::SysfsRoot roots);
    ~UsbKernelStandIn() override;

    UsbKernelStandIn(const UsbKernelStandIn &) = delete;
    UsbKernelStandIn &operator=(const UsbKernelStandIn &) = delete;

    Status write(QStringView absolutePath, const QString &realPath, QByteArrayView bytes) override;
    // Callbacks run on the thread that registered them (it needs an event
    // loop), queued, after a device was plugged or unplugged, vhci finished
    // enumerating one, or a vhci port was freed.
    bool watchUsbDevices(std::function<void()> changed) override;

    // write() with the path mapped below the roots: for tests driving the
    // stand-in without installing it.
    Status write(QStringView absolutePath, QByteArrayView bytes);

    // --- The forwarder's machine ---------------------------------------------
    // Pulls the device out: its folders and links go, an export's
    // connection is shut down. "usb_standin" errors when it is not there.
    Status unplug(const QString &busId);
    // Puts an unplugged device back as it was, with the next device number
    // of its bus, bound to the usb driver (as a fresh device is, even when
    // match_busid still names it).
    Status plug(const QString &busId);
    // {"devices":[{"busid","busnum","devnum","driver","usbip_status"
    // (absent unless bound to usbip-host)}], "match_busid":["1-1", ...]}
    QJsonObject deviceStatus() const;

    // --- The agent's machine ---------------------------------------------------
    // One URB to the device behind the vhci port whose node is `node`
    // ("/dev/bus/usb/003/002"): a CMD_SUBMIT with the port's devid and the
    // next sequence number, answered by its RET_SUBMIT. Errors
    // ("usb_standin"): no such node, the connection ended, no answer
    // within timeoutMs (a late answer is then dropped).
    Result<UsbTransferResult> submit(
        const QString &node, const UsbTransfer &transfer, int timeoutMs = 10000);
    // Timed transfers to the device at `node`, one at a time as submit()
    // sends them: control reads of 64 bytes (a 48-byte command, a 112-byte
    // answer) one at a time, and bulk URBs out and back through the
    // loopback endpoint, several under way at once.
    // {"control_count","control_p50_us","control_p99_us","control_slowest":
    // [[place, us], ...],"bulk_bytes","urb_bytes","bulk_mb_per_s"}. For the benchmark: the process
    // that holds the port measures, so no control-socket hop is counted.
    Result<QJsonObject> measureTransfers(const QString &node, const TransferMeasurement &measure);
    // {"ports":[{"hub":"hs","port":0,"status":4,"speed":0,"devid":0,
    // "sockfd":0,"local_busid":"0-0","node":""}, ...]}
    QJsonObject portStatus() const;

    // --- Test control ------------------------------------------------------------
    // Listens on a Unix socket (default controlSocketPath()) for JSON lines,
    // one answer line each, in the calling thread's event loop:
    //   {"op":"unplug"|"plug","busid":"1-1"}        -> {"ok":true}
    //   {"op":"status"}                             -> deviceStatus()
    //   {"op":"ports"}                              -> portStatus()
    //   {"op":"control","node":N,"setup":"<16 hex>","data":"<base64>"}
    //   {"op":"bulk","node":N,"endpoint":1,"direction":"out","data":"<base64>"}
    //   {"op":"bulk","node":N,"endpoint":1,"direction":"in","length":L}
    //                                     -> {"status":0,"actual":A,"data":"<base64>"}
    //   {"op":"measure","node":N,"control_count":C,"bulk_bytes":B,"urb_bytes":U,"bulk_in_flight":K}
    //                                     -> measureTransfers()
    // Failures answer {"error":"..."}. Transfers run on a worker thread, so
    // the event loop (which may be the one relaying the USB/IP stream) keeps
    // running; a connection's answers come in the order of its requests.
    Status listen(const QString &socketPath = {});
    // <the /sys root>/standin.sock
    QString controlSocketPath() const;
    // One command as the socket takes it, answered in the calling thread
    // (blocks for transfers).
    QJsonObject handleCommand(const QJsonObject &command);

private:
    struct Private;
    std::unique_ptr<Private> d;
};

// The test's end of the control socket: one request at a time, blocking.
// Usable from any thread (it needs no event loop), but not from the thread
// whose event loop serves the socket.
class StandInControl
{
public:
    // `root` is the fixture root the stand-in runs over.
    explicit StandInControl(const QString &root);
    ~StandInControl();

    static QString socketPath(const QString &root);

    // The answer; an {"error": …} answer comes back as an Error
    // ("usb_standin"), a dead or silent socket as "usb_standin_control".
    Result<QJsonObject> call(const QJsonObject &request, int timeoutMs = 10000);

private:
    QString m_path;
    std::unique_ptr<QLocalSocket> m_socket;
    QByteArray m_buffer;
};

} // namespace cloop::testsupport::usb
