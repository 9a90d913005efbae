#include "common/net/tcpdial.h"

#include <QHostInfo>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace cloop::net {

TcpDial::TcpDial(QString host, quint16 port, QObject *parent)
    : QObject(parent)
    , m_host(std::move(host))
    , m_port(port)
{ }

TcpDial::~TcpDial()
{
    if (m_lookupId >= 0)
        QHostInfo::abortHostLookup(m_lookupId);
    // Before the descriptor it watches closes.
    delete m_notifier;
}

void TcpDial::start()
{
    const QHostAddress literal(m_host);
    if (!literal.isNull()) {
        m_addresses = { literal };
        QMetaObject::invokeMethod(this, &TcpDial::tryNextAddress, Qt::QueuedConnection);
        return;
    }
    m_lookupId = QHostInfo::lookupHost(m_host, this, [this](const QHostInfo &info) {
        m_lookupId = -1;
        if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
            giveUp(QStringLiteral("cannot resolve %1: %2").arg(m_host, info.errorString()));
            return;
        }
        m_addresses = info.addresses();
        tryNextAddress();
    });
}

void TcpDial::tryNextAddress()
{
    delete std::exchange(m_notifier, nullptr);
    m_descriptor.reset();
    while (m_next < m_addresses.size()) {
        const QHostAddress &address = m_addresses.at(m_next++);
        sockaddr_storage storage {};
        socklen_t length = 0;
        if (address.protocol() == QAbstractSocket::IPv6Protocol) {
            auto *in6 = reinterpret_cast<sockaddr_in6 *>(&storage);
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(m_port);
            const Q_IPV6ADDR bytes = address.toIPv6Address();
            std::memcpy(&in6->sin6_addr, bytes.c, sizeof bytes.c);
            in6->sin6_scope_id = address.scopeId().toUInt();
            length = sizeof *in6;
        } else {
            auto *in4 = reinterpret_cast<sockaddr_in *>(&storage);
            in4->sin_family = AF_INET;
            in4->sin_port = htons(m_port);
            in4->sin_addr.s_addr = htonl(address.toIPv4Address());
            length = sizeof *in4;
        }
        util::Fd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd.valid()) {
            m_lastError = QString::fromLocal8Bit(std::strerror(errno));
            continue;
        }
        // Device data rides these connections: small frames must not wait.
        const int on = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&storage), length) != 0
            && errno != EINPROGRESS) {
            m_lastError = QString::fromLocal8Bit(std::strerror(errno));
            continue;
        }
        m_descriptor = std::move(fd);
        m_notifier = new QSocketNotifier(m_descriptor.get(), QSocketNotifier::Write, this);
        connect(m_notifier, &QSocketNotifier::activated, this, &TcpDial::onWritable);
        return;
    }
    giveUp(QStringLiteral("cannot connect to %1 port %2: %3")
               .arg(m_host)
               .arg(m_port)
               .arg(m_lastError.isEmpty() ? QStringLiteral("no address") : m_lastError));
}

void TcpDial::onWritable()
{
    m_notifier->setEnabled(false);
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(m_descriptor.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0)
        error = errno;
    if (error != 0) {
        m_lastError = QString::fromLocal8Bit(std::strerror(error));
        // Not from inside the notifier's own signal: it is deleted there.
        QMetaObject::invokeMethod(this, &TcpDial::tryNextAddress, Qt::QueuedConnection);
        return;
    }
    m_notifier->deleteLater();
    m_notifier = nullptr;
    Q_EMIT connected();
}

void TcpDial::giveUp(const QString &reason)
{
    m_descriptor.reset();
    Q_EMIT failed(reason);
}

} // namespace cloop::net
