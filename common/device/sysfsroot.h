#pragma once

#include "common/result.h"

#include <QByteArrayView>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <functional>
#include <optional>

namespace cloop::device {

// What answers writes to the kernel's control files. On a real machine that
// is the kernel itself, through the file. Where the kernel lacks a driver
// (this project's CI kernels have no USB), a test program may give its
// SysfsRoot a stand-in
// that plays the driver behind the same files, in the same process, so it
// can take file descriptors written to files such as usbip_sockfd or
// vhci_hcd's attach; everything above the files stays the real code.
class KernelStandIn
{
public:
    virtual ~KernelStandIn() = default;
    // Answers a write to `absolutePath` (a kernel path; `realPath` is where
    // the fixture keeps it), as the driver would: an error names what the
    // driver would refuse.
    virtual Status write(QStringView absolutePath, const QString &realPath, QByteArrayView bytes)
        = 0;
    // Calls `changed` whenever USB devices come or go, as uevents would.
    // Returns false when this stand-in has no USB devices to watch.
    virtual bool watchUsbDevices(std::function<void()> changed) = 0;
};

// The one door through which the agent reads the kernel's file systems:
// /sys, /dev and /proc. Code always names the real absolute path
// ("/sys/bus/usb/devices"); this class maps it below a root that stands for
// "/" — "/" itself on a real machine, a fixture tree in tests:
//
//     SysfsRoot roots(fixture);          // fixture/sys/..., fixture/dev/..., fixture/proc/...
//     roots.readAttribute(u"/sys/bus/usb/devices/1-1/idVendor");
//
// Each of the three file systems has its own root, so a test may fake /sys
// while leaving the real /dev. Paths outside /sys, /dev and /proc are not
// kernel interfaces and are returned unchanged.
class SysfsRoot
{
public:
    // One root for /sys, /dev and /proc alike.
    explicit SysfsRoot(QString root = QStringLiteral("/"));
    SysfsRoot(QString sysRoot, QString devRoot, QString procRoot);

    // The same roots, with a stand-in answering for the kernel's drivers
    // (not owned; it must outlive every copy). Only test programs make one:
    // each program's main decides what its kernel is and passes it down.
    SysfsRoot withStandIn(KernelStandIn *standIn) const;
    KernelStandIn *kernelStandIn() const { return m_standIn; }

    // Where the absolute kernel path really is. "..", "." and doubled
    // slashes are folded first, so no path leaves its root.
    QString path(QStringView absolute) const;

    // A sysfs attribute or small /proc file, whitespace-trimmed; nullopt when
    // it is missing or unreadable. At most maxBytes are read.
    std::optional<QString> readAttribute(
        QStringView absolutePath, qsizetype maxBytes = 64 * 1024) const;

    // Names in a folder (files, folders and links, "." and ".." left out),
    // sorted; empty when the folder is missing.
    QStringList list(QStringView absoluteDir) const;

    // Where a link (or a path through links) really leads, as a kernel path:
    // "/sys/bus/usb/devices/1-1" -> "/sys/devices/pci0000:00/.../usb1/1-1".
    // nullopt when it does not exist or leads out of its root.
    std::optional<QString> resolve(QStringView absolutePath) const;

    // Writes a control file in one write(2), exactly these bytes (sysfs
    // takes a write whole; several kernel files refuse a newline). Errors:
    // "kernel_write" with the path and the kernel's errno text. With a
    // stand-in, it answers instead.
    Status writeAttribute(QStringView absolutePath, QByteArrayView bytes) const;

    bool exists(QStringView absolutePath) const;
    bool isCharacterDevice(QStringView absolutePath) const;
    // Whether this process may write it (access(2) W_OK: also false on a
    // read-only mount, which a root process otherwise ignores).
    bool isWritable(QStringView absolutePath) const;

    QString sysRoot() const { return m_sysRoot; }
    QString devRoot() const { return m_devRoot; }
    QString procRoot() const { return m_procRoot; }

private:
    QString m_sysRoot;
    QString m_devRoot;
    QString m_procRoot;
    KernelStandIn *m_standIn = nullptr;
};

} // namespace cloop::device
