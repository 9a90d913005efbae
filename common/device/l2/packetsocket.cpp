#include "common/device/l2/packetsocket.h"

#include "common/logging.h"
#include "common/util/fd.h"

#include <QFile>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

namespace cloop::device::l2 {

namespace {

Error systemError(const QString &step, int error)
{
    return Error::make(QStringLiteral("packet_socket"),
        QStringLiteral("%1: %2").arg(step, QString::fromLocal8Bit(std::strerror(error))));
}

Status setOption(int fd, int level, int name, int value, const QString &what)
{
    if (::setsockopt(fd, level, name, &value, sizeof value) != 0)
        return systemError(what, errno);
    return {};
}

bool fillInterfaceRequest(ifreq &request, const QString &name)
{
    const QByteArray encoded = name.toLocal8Bit();
    if (encoded.isEmpty() || encoded.size() >= IFNAMSIZ)
        return false;
    std::memset(&request, 0, sizeof request);
    std::memcpy(request.ifr_name, encoded.constData(), static_cast<size_t>(encoded.size()));
    return true;
}

} // namespace

Result<InterfaceState> InterfaceState::read(const QString &interfaceName)
{
    ifreq request {};
    if (!fillInterfaceRequest(request, interfaceName))
        return Error::make(QStringLiteral("invalid_interface"),
            QStringLiteral("\"%1\" is not an interface name").arg(interfaceName.left(40)));
    util::Fd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (probe.get() < 0)
        return systemError(QStringLiteral("socket"), errno);
    InterfaceState state;
    state.name = interfaceName;
    if (::ioctl(probe.get(), SIOCGIFFLAGS, &request) != 0)
        return systemError(QStringLiteral("interface %1").arg(interfaceName), errno);
    state.up = (request.ifr_flags & IFF_UP) != 0;
    state.running = (request.ifr_flags & IFF_RUNNING) != 0;
    if (::ioctl(probe.get(), SIOCGIFMTU, &request) != 0)
        return systemError(QStringLiteral("MTU of %1").arg(interfaceName), errno);
    state.mtu = request.ifr_mtu;
    if (::ioctl(probe.get(), SIOCGIFHWADDR, &request) == 0)
        state.macAddress = QByteArray(request.ifr_hwaddr.sa_data, 6);

    // /proc/self/net is this process's network namespace, like the ioctls.
    QFile counters(QStringLiteral("/proc/self/net/dev"));
    if (!counters.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("io_error"),
            QStringLiteral("cannot read /proc/self/net/dev: %1").arg(counters.errorString()));
    const QByteArray prefix = interfaceName.toLocal8Bit() + ':';
    const QList<QByteArray> lines = counters.readAll().split('\n');
    for (const QByteArray &line : lines) {
        const QByteArray trimmed = line.trimmed();
        if (!trimmed.startsWith(prefix))
            continue;
        const QList<QByteArray> fields = trimmed.mid(prefix.size()).simplified().split(' ');
        if (fields.size() < 12)
            break;
        // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets errs drop
        // …
        state.rxBytes = fields[0].toULongLong();
        state.rxPackets = fields[1].toULongLong();
        state.rxDropped = fields[3].toULongLong();
        state.txBytes = fields[8].toULongLong();
        state.txPackets = fields[9].toULongLong();
        state.txDropped = fields[11].toULongLong();
        break;
    }
    return state;
}

PacketSocket::PacketSocket(int fd, QString interfaceName, int ifindex, bool vnetHeader)
    : m_fd(fd)
    , m_interfaceName(std::move(interfaceName))
    , m_ifindex(ifindex)
    , m_vnetHeader(vnetHeader)
{
    m_buffer.resize((vnetHeader ? kVnetHeaderBytes : 0) + kMaxFrameBytes);
}

PacketSocket::~PacketSocket()
{
    // Closing also ends the promiscuous membership (reference-counted by
    // the kernel), so the interface is left as it was found.
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<std::unique_ptr<PacketSocket>> PacketSocket::open(const Options &options)
{
    ifreq request {};
    if (!fillInterfaceRequest(request, options.interfaceName))
        return Error::make(QStringLiteral("invalid_interface"),
            QStringLiteral("\"%1\" is not an interface name").arg(options.interfaceName.left(40)));
    const int ifindex = static_cast<int>(::if_nametoindex(request.ifr_name));
    if (ifindex == 0)
        return Error::make(QStringLiteral("no_interface"),
            QStringLiteral("there is no interface %1 here").arg(options.interfaceName));

    // Protocol 0 until bound: a non-zero protocol would queue frames of
    // every interface before bind() narrows it to one.
    util::Fd socket(::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (socket.get() < 0)
        return systemError(QStringLiteral("AF_PACKET socket (needs CAP_NET_RAW)"), errno);
    const int fd = socket.get();
    if (options.vnetHeader) {
        if (Status set
            = setOption(fd, SOL_PACKET, PACKET_VNET_HDR, 1, QStringLiteral("PACKET_VNET_HDR"));
            !set)
            return set.error();
    }
    if (Status set = setOption(fd, SOL_PACKET, PACKET_AUXDATA, 1, QStringLiteral("PACKET_AUXDATA"));
        !set)
        return set.error();
    // Without it every frame this socket sends would come straight back.
    if (Status set = setOption(
            fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, QStringLiteral("PACKET_IGNORE_OUTGOING"));
        !set)
        qCWarning(lcDevice).noquote()
            << set.error().message << "- outgoing frames are filtered by type instead";
    if (options.receiveBufferBytes > 0) {
        // FORCE passes the system limit (root); the plain one is the fallback.
        if (!setOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, options.receiveBufferBytes, QString())) {
            if (Status set = setOption(fd, SOL_SOCKET, SO_RCVBUF, options.receiveBufferBytes,
                    QStringLiteral("SO_RCVBUF"));
                !set)
                qCWarning(lcDevice).noquote() << set.error().message;
        }
    }

    sockaddr_ll address {};
    address.sll_family = AF_PACKET;
    address.sll_protocol = htons(ETH_P_ALL);
    address.sll_ifindex = ifindex;
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0)
        return systemError(QStringLiteral("bind to %1").arg(options.interfaceName), errno);
    if (options.promiscuous) {
        packet_mreq membership {};
        membership.mr_ifindex = ifindex;
        membership.mr_type = PACKET_MR_PROMISC;
        if (::setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &membership, sizeof membership)
            != 0)
            return systemError(
                QStringLiteral("promiscuous mode on %1").arg(options.interfaceName), errno);
    }
    return std::unique_ptr<PacketSocket>(
        new PacketSocket(socket.release(), options.interfaceName, ifindex, options.vnetHeader));
}

Result<std::optional<ReceivedPacket>> PacketSocket::receive()
{
    for (;;) {
        sockaddr_ll source {};
        iovec vector { m_buffer.data(), static_cast<size_t>(m_buffer.size()) };
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(tpacket_auxdata))];
        msghdr message {};
        message.msg_name = &source;
        message.msg_namelen = sizeof source;
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t length = ::recvmsg(m_fd, &message, MSG_TRUNC | MSG_DONTWAIT);
        if (length < 0) {
            if (errno == EAGAIN)
                return std::optional<ReceivedPacket>();
            if (errno == EINTR)
                continue;
            return systemError(QStringLiteral("receive on %1").arg(m_interfaceName), errno);
        }
        if (length > m_buffer.size() || (message.msg_flags & MSG_TRUNC) != 0) {
            ++m_truncated;
            continue;
        }
        // A kernel without PACKET_IGNORE_OUTGOING still marks them.
        if (source.sll_pkttype == PACKET_OUTGOING)
            continue;
        ReceivedPacket packet;
        packet.packetType = source.sll_pkttype;
        packet.bytes = QByteArray(m_buffer.constData(), length);
        for (cmsghdr *header = CMSG_FIRSTHDR(&message); header;
             header = CMSG_NXTHDR(&message, header)) {
            if (header->cmsg_level != SOL_PACKET || header->cmsg_type != PACKET_AUXDATA
                || header->cmsg_len < CMSG_LEN(sizeof(tpacket_auxdata)))
                continue;
            tpacket_auxdata aux;
            std::memcpy(&aux, CMSG_DATA(header), sizeof aux);
            packet.aux.status = aux.tp_status;
            packet.aux.vlanTci = aux.tp_vlan_tci;
            packet.aux.vlanTpid = aux.tp_vlan_tpid;
        }
        return std::optional<ReceivedPacket>(std::move(packet));
    }
}

quint64 PacketSocket::kernelDrops()
{
    tpacket_stats stats {};
    socklen_t length = sizeof stats;
    if (::getsockopt(m_fd, SOL_PACKET, PACKET_STATISTICS, &stats, &length) == 0)
        m_kernelDrops += stats.tp_drops;
    return m_kernelDrops;
}

Status PacketSocket::send(QByteArrayView bytes)
{
    return send(QByteArrayView(), bytes);
}

Status PacketSocket::send(QByteArrayView head, QByteArrayView rest)
{
    const qsizetype total = head.size() + rest.size();
    const qsizetype minimum = (m_vnetHeader ? kVnetHeaderBytes : 0) + 14;
    if (total < minimum || total > minimum - 14 + kMaxFrameBytes)
        return Error::make(ErrorCode::InvalidFrame,
            QStringLiteral("a frame of %1 bytes cannot be sent on %2")
                .arg(total)
                .arg(m_interfaceName));
    iovec parts[2] = { { const_cast<char *>(head.data()), static_cast<size_t>(head.size()) },
        { const_cast<char *>(rest.data()), static_cast<size_t>(rest.size()) } };
    msghdr message {};
    message.msg_iov = parts;
    message.msg_iovlen = 2;
    for (;;) {
        const ssize_t sent = ::sendmsg(m_fd, &message, MSG_DONTWAIT);
        if (sent >= 0)
            return {};
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == ENOBUFS)
            return Error::make(ErrorCode::WouldBlock,
                QStringLiteral("%1 cannot take more frames now").arg(m_interfaceName));
        return systemError(QStringLiteral("send on %1").arg(m_interfaceName), errno);
    }
}

} // namespace cloop::device::l2
