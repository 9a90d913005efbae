#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QString>

#include <memory>
#include <optional>

namespace cloop::device::l2 {

// What the kernel says about one received frame beside its bytes
// (struct tpacket_auxdata): a VLAN tag it moved out of the frame, and
// whether the checksum was left to offload.
struct PacketAuxdata
{
    static constexpr quint32 kStatusCsumNotReady = 0x08;
    static constexpr quint32 kStatusVlanValid = 0x10;
    static constexpr quint32 kStatusVlanTpidValid = 0x40;

    quint32 status = 0;
    quint16 vlanTci = 0;
    quint16 vlanTpid = 0;

    // Test the flag, not the TCI: VID 0 priority tags are real tags.
    bool hasVlanTag() const { return (status & kStatusVlanValid) != 0; }
    // 0x8100 unless the kernel said otherwise (802.1ad).
    quint16 tagProtocol() const { return (status & kStatusVlanTpidValid) != 0 ? vlanTpid : 0x8100; }
};

struct ReceivedPacket
{
    // The virtio_net_hdr (when the socket has one) followed by the frame.
    QByteArray bytes;
    PacketAuxdata aux;
    quint8 packetType = 0; // sll_pkttype: host, broadcast, multicast, otherhost
};

// A network interface as its counters and flags show it (this process's
// network namespace): what a segment test reports.
struct InterfaceState
{
    QString name;
    bool up = false; // administratively (IFF_UP)
    bool running = false; // carrier (IFF_RUNNING)
    int mtu = 0;
    QByteArray macAddress; // 6 bytes
    quint64 rxPackets = 0;
    quint64 rxBytes = 0;
    quint64 rxDropped = 0;
    quint64 txPackets = 0;
    quint64 txBytes = 0;
    quint64 txDropped = 0;

    static Result<InterfaceState> read(const QString &interfaceName);
};

// A raw AF_PACKET socket on one interface: every frame on the wire in, any
// frame out. Promiscuous, with the kernel's auxdata (VLAN tags it moved out
// of the bytes, checksum state) and, by default, the virtio_net_hdr, so
// frames larger than the MTU (GRO, TSO) come whole with what is needed to
// segment them later. Frames this socket sends are never received back.
// Non-blocking; the owner watches fd() for readability.
class PacketSocket final
{
public:
    // virtio_net_hdr size; a frame after it is at most 64 KiB plus the
    // Ethernet header and one inline tag.
    static constexpr qsizetype kVnetHeaderBytes = 10;
    static constexpr qsizetype kMaxFrameBytes = 65535 + 14 + 4;

    struct Options
    {
        QString interfaceName;
        bool promiscuous = true;
        bool vnetHeader = true;
        int receiveBufferBytes = 4 * 1024 * 1024; // absorbs bursts while the tunnel is busy
    };

    static Result<std::unique_ptr<PacketSocket>> open(const Options &options);
    ~PacketSocket();
    PacketSocket(const PacketSocket &) = delete;
    PacketSocket &operator=(const PacketSocket &) = delete;

    int fd() const { return m_fd; }
    const QString &interfaceName() const { return m_interfaceName; }
    int interfaceIndex() const { return m_ifindex; }
    bool hasVnetHeader() const { return m_vnetHeader; }

    // One frame, or nothing waiting. A frame longer than the buffer (it
    // cannot be forwarded whole) is skipped and counted.
    Result<std::optional<ReceivedPacket>> receive();
    // One frame (after the virtio_net_hdr when the socket has one). A full
    // socket buffer is the error "would_block": Ethernet may drop.
    Status send(QByteArrayView bytes);
    // The same frame in two parts (the vnet header, then the Ethernet
    // frame), sent at once without joining them first.
    Status send(QByteArrayView head, QByteArrayView rest);

    quint64 truncatedFrames() const { return m_truncated; }
    // Frames the kernel dropped because this socket's buffer was full, since
    // it was opened.
    quint64 kernelDrops();

private:
    PacketSocket(int fd, QString interfaceName, int ifindex, bool vnetHeader);

    int m_fd = -1;
    QString m_interfaceName;
    int m_ifindex = 0;
    bool m_vnetHeader = true;
    QByteArray m_buffer;
    quint64 m_truncated = 0;
    quint64 m_kernelDrops = 0; // the kernel resets its count at every read
};

} // namespace cloop::device::l2
