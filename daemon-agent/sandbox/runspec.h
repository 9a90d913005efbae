#pragma once

#include "common/result.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::agent {

// One resource limit of the workload, as `podman run --ulimit name=soft:hard`.
struct Ulimit
{
    QString name; // "nofile", "nproc", ...
    qint64 soft = 0;
    qint64 hard = 0;

    friend bool operator==(const Ulimit &, const Ulimit &) = default;
};

// Everything a sandbox driver needs to start one workload. A plain value:
// the agent fills it from the hub's run frame and the device's own
// settings, validate() refuses what no driver should be handed, and the
// driver turns it into its engine's arguments.
struct RunSpec
{
    // The tiny local image imported from busybox-static, so runs work
    // offline with no registry (PodmanSandbox::ensureDefaultImage).
    static QString defaultImage();
    static QString defaultRuntime();
    // The hard limits of root on these hosts are nofile 20000 and a
    // per-user nproc, and root lacks CAP_SYS_RESOURCE, so podman's own
    // defaults (nofile 1048576) make every container fail at setrlimit.
    static QList<Ulimit> defaultUlimits();

    // Unique on this machine (RunSupervisor adds its work root's tag to the
    // hub's run id); the container is named cloop-run-<runId>.
    QString runId;
    QString image = defaultImage();
    QStringList argv; // argv[0] is looked up in the image's PATH
    QMap<QString, QString> env; // names match [A-Z_][A-Z0-9_]*; values without line breaks
    QString workdir; // host path, already confined by WorkRoot; /work inside
    QString runtime = defaultRuntime(); // an OCI runtime podman has registered
    QList<Ulimit> ulimits = defaultUlimits();
    std::optional<qint64> memoryLimitBytes; // none: no cgroup memory limit
    // Processes of this one container (a cgroup limit, unlike nproc which
    // counts every process of the uid on the host).
    int pidsLimit = 4096;
    qint64 tmpSizeBytes = 256LL * 1024 * 1024; // the writable /tmp (tmpfs)
    QString user; // "uid:gid", or empty for the image's default user
    // Capabilities beyond none, within the sandbox's own namespaces: a run
    // with a forwarded segment configures its interface (NET_ADMIN) and
    // speaks raw Ethernet, DHCP and ping on it (NET_RAW).
    QStringList addedCapabilities;
    // Device nodes the sandbox is given, and nothing else of the host's
    // /dev: a forwarded USB device's /dev/bus/usb/BBB/DDD.
    struct DeviceNode
    {
        QString hostPath; // where the node is on this machine
        QString sandboxPath; // "/dev/bus/usb/BBB/DDD"

        friend bool operator==(const DeviceNode &, const DeviceNode &) = default;
    };
    QList<DeviceNode> deviceNodes;
    // A forwarded USB device may come back while the sandbox runs (its
    // forwarder restarted) under a number the kernel chooses then; the agent
    // makes its node in the sandbox's /dev. The device cgroup lets the
    // workload read and write USB device nodes (major 189) for that: it
    // cannot make one itself (no CAP_MKNOD), and the agent removes each node
    // whose device went, so the only ones there are its run's.
    bool usbNodesMayReturn = false;

    // An error naming the first field that is unusable; never touches the
    // system (the workdir's existence is the driver's business).
    Status validate() const;
};

} // namespace cloop::agent
