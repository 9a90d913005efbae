#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"
#include "daemon-agent/workroot/workroot.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace cloop::agent {

// One device lent to a run: for a forwarded segment ("l2"), the TAP the
// agent created on the host and handed to the run's sandbox; for a USB
// device ("usb"), the vhci_hcd port it was attached on.
struct Attachment
{
    qint64 runId = 0;
    qint64 bindingId = 0;
    QString kind; // "l2" or "usb"
    QString hostName; // l2: the TAP's name on the host; usb: its bus id here ("3-1")
    QString sandboxName; // l2: its name inside the sandbox, e.g. "fwd0"; usb: the node
    qint64 sandboxPid = 0;
    int vhciPort = -1; // usb
    quint32 usbDeviceId = 0; // usb: the devid the port was attached with

    friend bool operator==(const Attachment &, const Attachment &) = default;
};

// What the host says about an interface name, in this process's network
// namespace.
struct HostInterface
{
    bool exists = false;
    bool tap = false;
    QString driver; // as ethtool names it ("veth", "tun", ...), for the log
};

// The agent's record of what it attached, kept in attachments.json in its
// work root (replaced atomically on every change), so that a restarted
// agent removes what its previous process left on the host and touches
// nothing else. Not thread-safe.
class AttachmentLedger final
{
public:
    using InterfaceProbe = std::function<Result<HostInterface>(const QString &name)>;
    using TapRemover = std::function<Status(const QString &name)>;
    // Detaches vhci port `port` if it still holds the device `deviceId`:
    // true when it did, false when the port is free; an error when another
    // device is there now ("port_reused") or the kernel refused.
    using UsbPortReleaser = std::function<Result<bool>(int port, quint32 deviceId)>;

    static QString fileName() { return WorkRoot::kAttachmentsFile; }

    // The real probe: asks the kernel through an ioctl on a socket of this
    // process's namespace. Not /sys/class/net: that shows the namespace
    // sysfs was mounted in, which need not be this process's.
    static Result<HostInterface> probeHostInterface(const QString &name);
    // The real removal: attaches to the TAP by name, drops its persistence
    // and lets go, so the kernel deletes it. The kernel does the checking,
    // in the same step as the attaching: another kind of interface is
    // refused ("not_a_tap"), and so is a TAP a running process holds
    // ("tap_in_use": whatever holds it is alive, and it is not this
    // ledger's to take away). Errors also "interface_gone", "tap_remove".
    static Status removeIdleTap(const QString &name);

    // Reads what a previous process left in the file, for
    // recoverLeftovers(); until then, it stays in the file beside what this
    // process records.
    // USB ports are released through vhci_hcd below `kernel`.
    AttachmentLedger(QString workRoot, const device::SysfsRoot &kernel);
    // The same with the host interfaces seen and removed through `probe`
    // and `remover` (tests); USB ports through `releaser`, or this
    // machine's vhci_hcd.
    AttachmentLedger(
        QString workRoot, InterfaceProbe probe, TapRemover remover, UsbPortReleaser releaser = {});
    // The real release, through vhci_hcd below `kernel`.
    static Result<bool> releaseUsbPort(const device::SysfsRoot &kernel, int port, quint32 deviceId);

    QString filePath() const;

    // Adds (or replaces the one with the same run and binding) and writes
    // the file. Refused ("invalid_attachment"): ids that are not positive,
    // no kind, a host name that cannot be an interface name. When the file
    // cannot be written the attachment is not kept either.
    Status record(const Attachment &attachment);
    // Removes and writes the file; forgetting what is not recorded is not
    // an error. When the file cannot be written the attachment is still
    // forgotten here (it is gone) and the error says the file lags.
    Status forget(qint64 runId, qint64 bindingId);
    // What this process recorded.
    QList<Attachment> attachments() const { return m_attachments; }

    // For a restarted agent. Each vhci port the previous process recorded
    // is detached if it still holds the device it attached (a port that
    // holds another device now is left alone). Each TAP it recorded is
    // removed if it still exists on the host under its recorded host name,
    // is a TAP, and is not held by a running process (a TAP that is never
    // made persistent vanishes with the process that held it, so usually
    // there is nothing to do). Never another kind of interface, never a
    // name the previous process did not record, never one this process
    // recorded. The previous process's entries then leave the file. A
    // corrupt file, or entries that cannot be read, are reported and acted
    // on no further. Returns what was removed and, with why, what was not,
    // for the log.
    struct Recovery
    {
        QStringList removed;
        QStringList skipped;
    };
    Recovery recoverLeftovers();

private:
    void readPrevious();
    Status write() const;

    QString m_workRoot;
    InterfaceProbe m_probe;
    TapRemover m_remover;
    UsbPortReleaser m_releaser;
    QList<Attachment> m_attachments;
    // The previous process's, until recoverLeftovers() has dealt with them.
    QList<Attachment> m_inherited;
    QStringList m_readProblems;
};

} // namespace cloop::agent
