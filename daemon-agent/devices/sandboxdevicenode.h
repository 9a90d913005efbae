#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"

#include <QString>

#include <sys/types.h>

#include <optional>

namespace cloop::agent {

// A USB device node inside a running sandbox's own /dev, made or removed by
// the agent from outside: a device given back after its forwarder returned
// has a new number (the kernel numbers it anew), and the sandbox was made
// with the old one. The sandbox's tree is reached through /proc/PID/root one
// component at a time, never following a link, so a workload that owns
// folders of its /dev cannot point the agent anywhere else. A sandbox that
// shares the agent's mount namespace (a host process) sees the kernel's own
// node: nothing is made or removed there.
class SandboxDeviceNode final
{
public:
    SandboxDeviceNode(device::SysfsRoot roots, qint64 sandboxPid);

    // Makes `node` ("/dev/bus/usb/BBB/DDD") in the sandbox as the same
    // character device as this machine's node, owned by `owner` ("uid:gid";
    // empty: root), mode 0600. With `as`, the sandbox's node is made there
    // instead: a device imported again keeps the path the workload first
    // knew it by, though the kernel numbered it anew (nothing is made for a
    // sandbox on this machine's mounts, which sees only the kernel's nodes).
    Status place(const QString &node, const QString &owner, const QString &as = {}) const;
    // Removes `node` from the sandbox, when it is still a USB device node
    // there: a stale number may later name another device.
    Status remove(const QString &node) const;

    // "uid:gid" as numbers; nullopt when it is not that.
    static std::optional<std::pair<uid_t, gid_t>> parseOwner(const QString &owner);

private:
    // Whether the sandbox's mounts are this process's own.
    bool sharesMountNamespace() const;

    device::SysfsRoot m_roots;
    qint64 m_pid = 0;
};

} // namespace cloop::agent
