#include "hub/edge/tcplistener.h"

#include "common/logging.h"
#include "common/util/logthrottle.h"

#include <QFile>
#include <QSocketNotifier>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace cloop::hub::edge {

namespace {

// After a failure that retrying at once cannot mend (no memory, no
// descriptor to free), the listener waits this long before it tries again.
constexpr int kResumeAfterMs = 100;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

QHostAddress addressOf(const sockaddr_storage &storage)
{
    QHostAddress address;
    address.setAddress(reinterpret_cast<const sockaddr *>(&storage));
    // Dual-stack sockets see IPv4 peers as ::ffff:a.b.c.d; people read them as IPv4.
    bool isV4 = false;
    const quint32 v4 = address.toIPv4Address(&isV4);
    if (isV4 && address.protocol() == QAbstractSocket::IPv6Protocol)
        return QHostAddress(v4);
    return address;
}

quint16 portOf(const sockaddr_storage &storage)
{
    if (storage.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6 *>(&storage)->sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in *>(&storage)->sin_port);
}

struct BindTarget
{
    sockaddr_storage storage {};
    socklen_t length = 0;
    int family = AF_INET;
    bool dualStack = false;
};

BindTarget bindTargetFor(const QHostAddress &address, quint16 port, bool preferIpv6)
{
    BindTarget target;
    const bool any = address == QHostAddress::Any;
    if ((any && preferIpv6) || (!any && address.protocol() == QAbstractSocket::IPv6Protocol)) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&target.storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        if (!any) {
            const Q_IPV6ADDR bytes = address.toIPv6Address();
            std::memcpy(&in6->sin6_addr, &bytes, sizeof(bytes));
            in6->sin6_scope_id = address.scopeId().toUInt();
        }
        target.length = sizeof(sockaddr_in6);
        target.family = AF_INET6;
        target.dualStack = any;
        return target;
    }
    auto *in4 = reinterpret_cast<sockaddr_in *>(&target.storage);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
    in4->sin_addr.s_addr = any || address == QHostAddress::AnyIPv4 ? htonl(INADDR_ANY)
                                                                   : htonl(address.toIPv4Address());
    target.length = sizeof(sockaddr_in);
    return target;
}

Result<util::Fd> openListeningSocket(const BindTarget &target, int backlog)
{
    util::Fd socket(::socket(target.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!socket.valid())
        return Error::make(QStringLiteral("listen_failed"),
            QStringLiteral("socket: %1").arg(errnoText(errno)), true);
    const int one = 1;
    ::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (target.family == AF_INET6) {
        const int v6only = target.dualStack ? 0 : 1;
        ::setsockopt(socket.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
    }
    if (::bind(socket.get(), reinterpret_cast<const sockaddr *>(&target.storage), target.length)
        != 0)
        return Error::make(QStringLiteral("listen_failed"), errnoText(errno), true);
    if (::listen(socket.get(), backlog) != 0)
        return Error::make(QStringLiteral("listen_failed"),
            QStringLiteral("listen: %1").arg(errnoText(errno)), true);
    return socket;
}

util::Fd openReserve()
{
    return util::Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
}

} // namespace

int kernelListenBacklogCap()
{
    QFile file(QStringLiteral("/proc/sys/net/core/somaxconn"));
    if (file.open(QIODevice::ReadOnly)) {
        bool ok = false;
        const int value = file.readAll().trimmed().toInt(&ok);
        if (ok && value > 0)
            return value;
    }
    return 4096;
}

Result<std::unique_ptr<TcpListener>> TcpListener::listen(
    const Options &options, Handler handler, QObject *parent)
{
    const int backlog = std::clamp(options.backlog, 1, kernelListenBacklogCap());
    // "Any" means both families: one IPv6 socket that takes IPv4 too, or
    // IPv4 alone where the machine has no IPv6.
    auto socket = openListeningSocket(bindTargetFor(options.address, options.port, true), backlog);
    if (!socket && options.address == QHostAddress::Any)
        socket = openListeningSocket(bindTargetFor(options.address, options.port, false), backlog);
    if (!socket)
        return Error::make(QStringLiteral("listen_failed"),
            QStringLiteral("cannot listen on %1:%2: %3")
                .arg(options.address.toString())
                .arg(options.port)
                .arg(socket.error().message),
            true);
    sockaddr_storage bound {};
    socklen_t length = sizeof(bound);
    ::getsockname(socket->get(), reinterpret_cast<sockaddr *>(&bound), &length);
    if (backlog < options.backlog)
        qCInfo(lcHubEdge).noquote()
            << QStringLiteral("listen backlog %1 (asked for %2; net.core.somaxconn caps it)")
                   .arg(backlog)
                   .arg(options.backlog);
    return std::unique_ptr<TcpListener>(new TcpListener(
        std::move(*socket), portOf(bound), backlog, options, std::move(handler), parent));
}

TcpListener::TcpListener(util::Fd socket, quint16 port, int backlog, const Options &options,
    Handler handler, QObject *parent)
    : QObject(parent)
    , m_socket(std::move(socket))
    , m_reserve(openReserve())
    , m_notifier(new QSocketNotifier(m_socket.get(), QSocketNotifier::Read, this))
    , m_port(port)
    , m_backlog(backlog)
    , m_acceptBatch(std::max(1, options.acceptBatch))
    , m_handler(std::move(handler))
    , m_exhaustionLog(std::make_unique<util::LogThrottle>(
          lcHubEdge(), QStringLiteral("refusals for lack of descriptors"), 5))
    , m_errorLog(
          std::make_unique<util::LogThrottle>(lcHubEdge(), QStringLiteral("accept errors"), 5))
{
    connect(m_notifier, &QSocketNotifier::activated, this, &TcpListener::acceptPending);
    m_resume.setSingleShot(true);
    m_resume.setInterval(kResumeAfterMs);
    connect(&m_resume, &QTimer::timeout, this, [this] {
        if (!m_reserve.valid())
            m_reserve = openReserve();
        m_notifier->setEnabled(true);
    });
}

TcpListener::~TcpListener() = default;

void TcpListener::pauseAccepting()
{
    // A readable listening socket would wake us again at once: a spin.
    m_notifier->setEnabled(false);
    m_resume.start();
}

bool TcpListener::refuseOneWithReserve()
{
    if (!m_reserve.valid()) {
        ++m_refusedForDescriptors;
        if (m_exhaustionLog->admit())
            qCWarning(lcHubEdge).noquote() << QStringLiteral(
                "out of file descriptors: new connections wait in the backlog (%1 refused so far)")
                                                  .arg(m_refusedForDescriptors);
        pauseAccepting();
        return false;
    }
    // Linux reports EMFILE before it looks at the queue: with the reserve
    // freed, accept tells whether anyone is waiting at all.
    m_reserve.reset();
    sockaddr_storage peer {};
    socklen_t length = sizeof(peer);
    util::Fd refused(
        ::accept4(m_socket.get(), reinterpret_cast<sockaddr *>(&peer), &length, SOCK_CLOEXEC));
    const bool waiting = refused.valid();
    refused.reset();
    m_reserve = openReserve();
    if (waiting) {
        ++m_refusedForDescriptors;
        if (m_exhaustionLog->admit())
            qCWarning(lcHubEdge).noquote() << QStringLiteral(
                "out of file descriptors: refused a connection from %1 (%2 refused so far)")
                                                  .arg(addressOf(peer).toString())
                                                  .arg(m_refusedForDescriptors);
    }
    if (!m_reserve.valid()) {
        pauseAccepting();
        return false;
    }
    return waiting;
}

void TcpListener::acceptPending()
{
    for (int i = 0; i < m_acceptBatch; ++i) {
        sockaddr_storage peer {};
        socklen_t length = sizeof(peer);
        const int fd = ::accept4(m_socket.get(), reinterpret_cast<sockaddr *>(&peer), &length,
            SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            m_handler(util::Fd(fd), addressOf(peer), portOf(peer));
            continue;
        }
        const int error = errno;
        switch (error) {
        case EAGAIN:
#if EAGAIN != EWOULDBLOCK
        case EWOULDBLOCK:
#endif
            return;
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
        case EPERM: // a firewall rule refused it
            continue;
        case EMFILE:
        case ENFILE:
            if (!refuseOneWithReserve())
                return;
            continue;
        default:
            if (m_errorLog->admit())
                qCWarning(lcHubEdge).noquote() << "accept failed:" << errnoText(error);
            pauseAccepting();
            return;
        }
    }
}

} // namespace cloop::hub::edge
