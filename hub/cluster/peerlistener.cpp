#include "hub/cluster/peerlistener.h"

#include "common/logging.h"
#include "common/net/qtmessagesocket.h"
#include "hub/cluster/peerhandshake.h"
#include "hub/edge/tcplistener.h"

#include <QSslSocket>
#include <QWebSocket>

namespace cloop::hub {

PeerListener::PeerListener(
    Options options, PeerDirectory &directory, const QSslConfiguration &tls, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_directory(directory)
    , m_tls(tls)
    , m_refusalLog(lcHubCluster(), QStringLiteral("refused peer connections"))
    , m_webSockets(QStringLiteral("cloop hub member"), QWebSocketServer::NonSecureMode)
{
    // Pending WebSockets are taken as they come; the cap on connections
    // not yet proved is ours.
    m_webSockets.setMaxPendingConnections(std::numeric_limits<int>::max());
    connect(&m_webSockets, &QWebSocketServer::newConnection, this, &PeerListener::onWebSocket);
}

PeerListener::~PeerListener()
{
    // Nothing new arrives while the rest goes.
    m_listener.reset();
    m_upgrading.clear();
    qDeleteAll(std::exchange(m_handshakes, {}));
    for (tunnel::TunnelConnection *connection : std::exchange(m_connections, {})) {
        connection->disconnect(this);
        delete connection;
    }
}

Result<std::unique_ptr<PeerListener>> PeerListener::listen(Options options,
    PeerDirectory &directory, const QList<QSslCertificate> &chain, const QSslKey &key,
    QObject *parent)
{
    std::unique_ptr<PeerListener> listener(
        new PeerListener(std::move(options), directory, peerTlsConfiguration(chain, key), parent));
    PeerListener *raw = listener.get();
    edge::TcpListener::Options listen;
    listen.address = raw->m_options.address;
    listen.port = raw->m_options.port;
    auto tcp = edge::TcpListener::listen(
        listen,
        [raw](util::Fd descriptor, const QHostAddress &peer, quint16) {
            raw->onAccepted(std::move(descriptor), peer);
        },
        raw);
    if (!tcp)
        return Error::make(
            tcp.error().code, QStringLiteral("the peer port: %1").arg(tcp.error().message), true);
    listener->m_listener = std::move(*tcp);
    return listener;
}

quint16 PeerListener::port() const
{
    return m_listener ? m_listener->port() : 0;
}

void PeerListener::setIdentity(const QList<QSslCertificate> &chain, const QSslKey &key)
{
    m_tls = peerTlsConfiguration(chain, key);
}

QString PeerListener::peerKey(const QHostAddress &address, quint16 port)
{
    return address.toString() + QLatin1Char('/') + QString::number(port);
}

void PeerListener::refuse(const QHostAddress &peer, const QString &reason)
{
    ++m_refused;
    if (m_refusalLog.admit())
        qCInfo(lcHubCluster).noquote()
            << "refused a peer connection from" << peer.toString() << ":" << reason.left(300);
    Q_EMIT connectionRefused(peer, reason);
}

void PeerListener::onAccepted(util::Fd descriptor, const QHostAddress &peer)
{
    if (unauthenticatedCount() >= m_options.maxUnauthenticated) {
        // Closed at once, before it costs a TLS context.
        descriptor.reset();
        refuse(peer,
            QStringLiteral("%1 connections are already proving who they are")
                .arg(m_options.maxUnauthenticated));
        return;
    }
    auto *socket = new QSslSocket();
    if (!socket->setSocketDescriptor(static_cast<qintptr>(descriptor.get()))) {
        const QString error = socket->errorString();
        delete socket;
        refuse(peer, QStringLiteral("cannot take the connection: %1").arg(error));
        return;
    }
    descriptor.release();
    // Device data rides this socket once it is a peer's.
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);

    auto *handshake = new PeerHandshake(socket, m_directory, m_options.selfId, this);
    m_handshakes.insert(handshake);
    connect(
        handshake, &PeerHandshake::readyToUpgrade, this, [this, handshake] { upgrade(handshake); });
    connect(handshake, &PeerHandshake::failed, this, [this, handshake](const QString &reason) {
        m_handshakes.remove(handshake);
        const QString key = peerKey(handshake->peerAddress(), handshake->peerPort());
        if (m_upgrading.value(key) == handshake)
            m_upgrading.remove(key);
        refuse(handshake->peerAddress(), reason);
        handshake->deleteLater();
    });
    handshake->start(m_tls, m_options.handshakeTimeout);
}

void PeerListener::upgrade(PeerHandshake *handshake)
{
    m_upgrading.insert(peerKey(handshake->peerAddress(), handshake->peerPort()), handshake);
    m_webSockets.handleConnection(handshake->socket());
}

void PeerListener::onWebSocket()
{
    while (m_webSockets.hasPendingConnections()) {
        QWebSocket *socket = m_webSockets.nextPendingConnection();
        if (!socket)
            continue;
        socket->setParent(nullptr);
        PeerHandshake *handshake
            = m_upgrading.take(peerKey(socket->peerAddress(), socket->peerPort()));
        if (!handshake) {
            // Only handshakes hand sockets over; nothing else may pass.
            socket->abort();
            socket->deleteLater();
            continue;
        }
        m_handshakes.remove(handshake);
        const PeerMember member = handshake->member();
        const QHostAddress address = handshake->peerAddress();
        // The TCP socket goes with its WebSocket from now on.
        if (QSslSocket *tcp = handshake->releaseSocket())
            tcp->setParent(socket);
        handshake->deleteLater();

        auto *connection = new tunnel::TunnelConnection(new net::QtMessageSocket(socket),
            tunnel::ChannelMultiplexer::Side::Hub, m_options.limits, m_options.timing, this);
        m_connections.insert(connection);
        connect(connection, &tunnel::TunnelConnection::disconnected, this,
            [this, connection, member](const QString &reason) {
                m_connections.remove(connection);
                qCInfo(lcHubCluster).noquote()
                    << describeMember(member) << "unlinked from here:" << reason;
                connection->deleteLater();
            });
        connection->startHeartbeat();
        qCInfo(lcHubCluster).noquote()
            << describeMember(member) << "linked from" << address.toString();
        Q_EMIT peerConnected(member, connection);
    }
}

} // namespace cloop::hub
