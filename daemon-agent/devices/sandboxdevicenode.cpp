#include "daemon-agent/devices/sandboxdevicenode.h"

#include "common/util/fd.h"

#include <QFile>
#include <QRegularExpression>
#include <QStringList>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloop::agent {

namespace {

// USB_DEVICE_MAJOR: the nodes under /dev/bus/usb.
constexpr unsigned kUsbDeviceMajor = 189;

Error nodeError(const QString &what, const QString &node, int error)
{
    return Error::make(QStringLiteral("device_node"),
        QStringLiteral("%1 %2 in the sandbox: %3")
            .arg(what, node, QString::fromLocal8Bit(std::strerror(error))));
}

bool isUsbNode(const struct stat &info)
{
    return S_ISCHR(info.st_mode) && major(info.st_rdev) == kUsbDeviceMajor;
}

// "/dev/bus/usb/BBB/DDD", the only place a node is ever made under.
bool isUsbNodePath(const QString &path)
{
    static const QRegularExpression shape(QStringLiteral("^/dev/bus/usb/[0-9]{3}/[0-9]{3}$"));
    return shape.match(path).hasMatch();
}

// The folder of `node` inside the tree `root`, one component at a time and
// never through a link; made (0755) where missing when `create`.
Result<util::Fd> openFolderOf(int root, const QString &node, bool create)
{
    QStringList parts = node.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    parts.removeLast();
    util::Fd current(::fcntl(root, F_DUPFD_CLOEXEC, 0));
    if (!current.valid())
        return nodeError(QStringLiteral("cannot reach"), node, errno);
    for (const QString &part : parts) {
        const QByteArray name = QFile::encodeName(part);
        constexpr int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        int next = ::openat(current.get(), name.constData(), flags);
        if (next < 0 && errno == ENOENT && create) {
            if (::mkdirat(current.get(), name.constData(), 0755) != 0 && errno != EEXIST)
                return nodeError(QStringLiteral("cannot make the folder of"), node, errno);
            next = ::openat(current.get(), name.constData(), flags);
        }
        if (next < 0)
            return nodeError(QStringLiteral("cannot reach the folder of"), node, errno);
        current = util::Fd(next);
    }
    return current;
}

} // namespace

SandboxDeviceNode::SandboxDeviceNode(device::SysfsRoot roots, qint64 sandboxPid)
    : m_roots(std::move(roots))
    , m_pid(sandboxPid)
{ }

std::optional<std::pair<uid_t, gid_t>> SandboxDeviceNode::parseOwner(const QString &owner)
{
    const QStringList ids = owner.split(QLatin1Char(':'));
    if (ids.size() != 2)
        return std::nullopt;
    bool uidOk = false;
    bool gidOk = false;
    const uint uid = ids[0].toUInt(&uidOk);
    const uint gid = ids[1].toUInt(&gidOk);
    if (!uidOk || !gidOk)
        return std::nullopt;
    return std::pair { static_cast<uid_t>(uid), static_cast<gid_t>(gid) };
}

bool SandboxDeviceNode::sharesMountNamespace() const
{
    struct stat theirs
    {
    };
    struct stat ours
    {
    };
    const QByteArray theirPath
        = QFile::encodeName(m_roots.path(QStringLiteral("/proc/%1/ns/mnt").arg(m_pid)));
    const QByteArray ourPath = QFile::encodeName(m_roots.path(u"/proc/self/ns/mnt"));
    return ::stat(theirPath.constData(), &theirs) == 0 && ::stat(ourPath.constData(), &ours) == 0
        && theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

Status SandboxDeviceNode::place(
    const QString &hostNode, const QString &owner, const QString &as) const
{
    const QString node = as.isEmpty() ? hostNode : as;
    const std::optional<std::pair<uid_t, gid_t>> ids
        = owner.isEmpty() ? std::pair<uid_t, gid_t> { 0, 0 } : parseOwner(owner);
    if (!ids)
        return Error::make(QStringLiteral("device_node"),
            QStringLiteral("\"%1\" is not a uid:gid to give %2 to").arg(owner.left(32), node));
    const QByteArray hostPath = QFile::encodeName(m_roots.path(hostNode));
    struct stat host
    {
    };
    if (::stat(hostPath.constData(), &host) != 0)
        return nodeError(QStringLiteral("no node on this machine for"), hostNode, errno);
    if (!isUsbNode(host))
        return Error::make(QStringLiteral("device_node"),
            QStringLiteral("%1 on this machine is not a USB device node").arg(hostNode));
    if (!as.isEmpty() && !isUsbNodePath(as))
        return Error::make(QStringLiteral("device_node"),
            QStringLiteral("%1 is no USB device node path").arg(as.left(64)));
    // The workload's user opens it, wherever it runs.
    if (::chown(hostPath.constData(), ids->first, ids->second) != 0)
        return nodeError(QStringLiteral("cannot hand over"), hostNode, errno);
    if (sharesMountNamespace())
        return {}; // the kernel's node is the sandbox's
    const QByteArray rootPath
        = QFile::encodeName(m_roots.path(QStringLiteral("/proc/%1/root").arg(m_pid)));
    const util::Fd root(::open(rootPath.constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
        return nodeError(QStringLiteral("cannot reach the sandbox for"), node, errno);
    Result<util::Fd> folder = openFolderOf(root.get(), node, true);
    if (!folder)
        return folder.error();
    const QByteArray leaf = QFile::encodeName(node.section(QLatin1Char('/'), -1));
    struct stat there
    {
    };
    if (::fstatat(folder->get(), leaf.constData(), &there, AT_SYMLINK_NOFOLLOW) == 0) {
        if (isUsbNode(there) && there.st_rdev == host.st_rdev) {
            if (::fchownat(
                    folder->get(), leaf.constData(), ids->first, ids->second, AT_SYMLINK_NOFOLLOW)
                != 0)
                return nodeError(QStringLiteral("cannot hand over"), node, errno);
            return {};
        }
        if (!isUsbNode(there))
            return Error::make(QStringLiteral("device_node"),
                QStringLiteral("%1 in the sandbox is something else than a USB device node")
                    .arg(node));
        if (::unlinkat(folder->get(), leaf.constData(), 0) != 0)
            return nodeError(QStringLiteral("cannot replace"), node, errno);
    }
    // 0600 and its owner: the umask cannot narrow it, and nobody else there
    // needs it.
    if (::mknodat(folder->get(), leaf.constData(), S_IFCHR | 0600, host.st_rdev) != 0)
        return nodeError(QStringLiteral("cannot make"), node, errno);
    if (::fchownat(folder->get(), leaf.constData(), ids->first, ids->second, AT_SYMLINK_NOFOLLOW)
        != 0)
        return nodeError(QStringLiteral("cannot hand over"), node, errno);
    return {};
}

Status SandboxDeviceNode::remove(const QString &node) const
{
    if (sharesMountNamespace())
        return {}; // the kernel removes its own node with the device
    const QByteArray rootPath
        = QFile::encodeName(m_roots.path(QStringLiteral("/proc/%1/root").arg(m_pid)));
    const util::Fd root(::open(rootPath.constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
        return errno == ENOENT
            ? Status {} // the sandbox is gone, and its /dev with it
            : Status(nodeError(QStringLiteral("cannot reach the sandbox for"), node, errno));
    Result<util::Fd> folder = openFolderOf(root.get(), node, false);
    if (!folder)
        return {}; // no such folder there: no node either
    const QByteArray leaf = QFile::encodeName(node.section(QLatin1Char('/'), -1));
    struct stat there
    {
    };
    if (::fstatat(folder->get(), leaf.constData(), &there, AT_SYMLINK_NOFOLLOW) != 0
        || !isUsbNode(there))
        return {};
    if (::unlinkat(folder->get(), leaf.constData(), 0) != 0)
        return nodeError(QStringLiteral("cannot remove"), node, errno);
    return {};
}

} // namespace cloop::agent
