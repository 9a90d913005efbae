#pragma once

#include "common/result.h"
#include "common/util/fd.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <memory>
#include <optional>

#include <sys/types.h>

namespace cloop::device::l2 {

// The device-side rule for an interface name a TAP may be given inside a
// sandbox: 1-15 characters of [A-Za-z0-9_.-], and none of the names the
// kernel or the tools treat specially ("lo", ".", "..", and "all" and
// "default", which the kernel refuses because they would collide with the
// per-interface sysctl folders).
Status validateInterfaceName(const QString &name);

// An address for the sandbox side of a forwarded segment: "ADDRESS/PREFIX",
// IPv4 in dotted-quad form or IPv6 without a scope, prefix 1-32 or 1-128.
// Unspecified, loopback, multicast, broadcast and IPv4-mapped addresses are
// refused: none of them can be a host on an Ethernet segment.
Status validateInterfaceAddress(const QString &cidr);

// One TAP interface, owned through its file descriptor: created on the host
// by create(), optionally handed to a sandbox by moveInto(), and gone when
// this object is destroyed, wherever it was moved (it is never made
// persistent). The descriptor stays usable after the move, so the frames of
// the sandbox's segment are read and written here, in the agent.
//
// Frame I/O never blocks: the descriptor is non-blocking and the owner
// watches fd() with a QSocketNotifier. Once the interface is gone (the
// namespace it was moved into was destroyed) the descriptor polls as an
// error and every call says "device_gone"; stop watching it then.
// Not thread-safe. moveInto() blocks while ip and nsenter run (tens of
// milliseconds in all, each run bounded by a timeout).
class TapDevice final
{
public:
    // struct virtio_net_hdr without num_buffers, before every frame when
    // Options::vnetHeader is set.
    static constexpr qsizetype kVnetHeaderBytes = 10;
    // An Ethernet header: nothing shorter is a frame.
    static constexpr qsizetype kMinFrameBytes = 14;
    // A GSO frame carries up to 64 KiB of IP packet; add the Ethernet header
    // and one inline VLAN tag.
    static constexpr qsizetype kMaxFrameBytes = 65535 + 14 + 4;
    // The kernel's bounds for a TAP (ETH_MIN_MTU; 65535 minus the header).
    static constexpr int kMinMtu = 68;
    static constexpr int kMaxMtu = 65535 - 14;
    // Below this the kernel disables IPv6 on the interface.
    static constexpr int kMinIpv6Mtu = 1280;

    struct Options
    {
        // The kernel replaces "%d" with the lowest free number, so
        // concurrent creations never race for a name.
        QString nameTemplate = QStringLiteral("cltap%d");
        bool vnetHeader = true;
        // TUN_F_CSUM|TSO4|TSO6|TSO_ECN: the stack may hand over frames that
        // still need their checksum or segmentation, and accepts such frames
        // back. Needs vnetHeader, which is what says so per frame.
        bool offloads = true;
        int mtu = 1500;
    };

    // Opens /dev/net/tun, creates the TAP (IFF_TAP|IFF_NO_PI, plus
    // IFF_VNET_HDR) in this process's network namespace and sets its MTU.
    // The interface is left down.
    static Result<std::unique_ptr<TapDevice>> create(const Options &options);
    ~TapDevice();
    TapDevice(const TapDevice &) = delete;
    TapDevice &operator=(const TapDevice &) = delete;

    // The interface name as of the last change made through this object:
    // the kernel's choice after create(), the sandbox's name after
    // moveInto(), whatever a failed moveInto() left (see there).
    QString name() const { return m_name; }
    int fd() const { return m_fd.get(); }
    bool hasVnetHeader() const { return m_vnetHeader; }
    // The smallest and largest byte count writeFrame() accepts: a frame,
    // after the header when there is one.
    qsizetype minWriteBytes() const;
    qsizetype maxWriteBytes() const;

    // One frame as the kernel gives it (the 10-byte header, then the
    // Ethernet frame, when hasVnetHeader()), or nothing waiting. Errors:
    // "device_gone" once the interface no longer exists (the namespace it
    // was moved into was destroyed), "tap_read" otherwise.
    Result<std::optional<QByteArray>> readFrame();
    // One whole frame per call, in the same form. Errors: "frame_size"
    // (outside minWriteBytes()..maxWriteBytes(), nothing written),
    // "would_block" (retry later), "link_down" (the interface is not up,
    // e.g. before or right after a move), "device_gone", "tap_write".
    Status writeFrame(QByteArrayView frame);
    // The same frame in two parts (the vnet header, then the Ethernet
    // frame), written at once.
    Status writeFrame(QByteArrayView head, QByteArrayView rest);

    // Hands the TAP to the network namespace of process `pid` under
    // `interfaceName`, with `mtu`, the optional `address` ("ADDRESS/PREFIX")
    // and the link up. Uses ip(8) and nsenter(1).
    //
    // Everything that can be checked beforehand is, and a refusal changes
    // nothing: the arguments, whether the process exists, whether it is in
    // another namespace than this one, whether the name is free there.
    // Should a later step fail, the TAP is moved back to this namespace
    // (renamed after Options::nameTemplate, down, without addresses) and the
    // error says so; if even that fails, the error says where it was left,
    // and destroying this object still removes it. Once moved, it stays: a
    // second call is refused.
    Status moveInto(
        qint64 pid, const QString &interfaceName, const std::optional<QString> &address, int mtu);
    bool isMoved() const { return m_moved; }
    // Whether the interface is (still) in the namespace create() ran in,
    // asked of the kernel rather than remembered.
    Result<bool> inHomeNamespace() const;

private:
    struct NamespaceId
    {
        dev_t device = 0;
        ino_t inode = 0;
        friend bool operator==(const NamespaceId &, const NamespaceId &) = default;
    };

    TapDevice(util::Fd fd, QString name, QString nameTemplate, bool vnetHeader, NamespaceId home);

    static Result<NamespaceId> namespaceIdOf(int nsFd);
    Result<NamespaceId> deviceNamespace() const;
    Result<QString> kernelName() const;
    Error rollBack(const Error &cause, qint64 pid, const QString &nsenter, const QString &ip);
    // The namespace of `pid`, held open in `held`, if the TAP may go there.
    Result<NamespaceId> moveTarget(qint64 pid, util::Fd &held) const;
    // MTU, address and link state, inside the namespace the TAP was moved to.
    // `address`: as "ip address add" takes it.
    Status configureMoved(const QString &nsenter, const QStringList &enter, int mtu,
        const std::optional<QString> &address) const;

    util::Fd m_fd;
    QString m_name;
    QString m_nameTemplate;
    bool m_vnetHeader = true;
    bool m_moved = false;
    NamespaceId m_home;
    QByteArray m_readBuffer;
};

} // namespace cloop::device::l2
