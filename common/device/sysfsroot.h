#pragma once

#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

namespace cloop::device {

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

    // The roots this process should use: CLOOP_SYSFS_ROOT, CLOOP_DEV_ROOT and
    // CLOOP_PROC_ROOT when set (each names the folder that stands for "/"),
    // "/" otherwise. Lets tests of real programs run them on fixture trees.
    static SysfsRoot fromEnvironment();

    // Where the absolute kernel path really is. "..", "." and doubled
    // slashes are folded first, so no path leaves its root.
    QString path(QStringView absolute) const;

    // A sysfs attribute or small /proc file, whitespace-trimmed; nullopt when
    // it is missing or unreadable. At most maxBytes are read.
    std::optional<QString> readAttribute(QStringView absolutePath,
                                         qsizetype maxBytes = 64 * 1024) const;

    // Names in a folder (files, folders and links, "." and ".." left out),
    // sorted; empty when the folder is missing.
    QStringList list(QStringView absoluteDir) const;

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
};

} // namespace cloop::device
