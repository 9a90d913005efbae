#include "hub/edge/httpfront.h"

#include "common/logging.h"
#include "hub/edge/httpconnection.h"
#include "hub/edge/httpservice.h"

#include <QPointer>
#include <QSslSocket>
#include <QTimer>
#include <QWebSocket>

namespace cloop::hub::edge {

HttpFront::HttpFront(Options options, HttpService &service, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_service(service)
    , m_pool(m_options.limits.preAuth)
    , m_handshakeLog(lcHubEdge(), QStringLiteral("TLS handshake failures"))
    , m_refusalLog(lcHubEdge(), QStringLiteral("refused requests"))
    , m_admissionLog(lcHubEdge(), QStringLiteral("connections refused at the door"))
    ,
    // TLS is done below it: the WebSocket layer gets sockets already encrypted.
    m_webSockets(QStringLiteral("cloop hub"), QWebSocketServer::NonSecureMode)
{
    m_clock.start();
    m_webSockets.setMaxPendingConnections(std::numeric_limits<int>::max());
    m_webSockets.setHandshakeTimeout(m_options.limits.upgradeTimeout);
    connect(&m_webSockets, &QWebSocketServer::newConnection, this, &HttpFront::onWebSocket);
}

HttpFront::~HttpFront()
{
    // Connections are children and go with us; the listener first, so that
    // nothing new arrives while they do.
    m_listener.reset();
}

Result<std::unique_ptr<HttpFront>> HttpFront::start(
    Options options, HttpService &service, QObject *parent)
{
    std::unique_ptr<HttpFront> front(new HttpFront(std::move(options), service, parent));
    HttpFront *raw = front.get();
    auto listener = TcpListener::listen(
        raw->m_options.listen,
        [raw](util::Fd descriptor, const QHostAddress &peer, quint16) {
            raw->onAccepted(std::move(descriptor), peer);
        },
        raw);
    if (!listener)
        return listener.error();
    front->m_listener = std::move(*listener);
    return front;
}

void HttpFront::onAccepted(util::Fd descriptor, const QHostAddress &peer)
{
    auto *socket = new QSslSocket(this);
    if (!socket->setSocketDescriptor(static_cast<qintptr>(descriptor.get()))) {
        if (m_admissionLog.admit())
            qCWarning(lcHubEdge).noquote() << "cannot take a connection from" << peer.toString()
                                           << ":" << socket->errorString();
        delete socket;
        return;
    }
    descriptor.release();
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);

    QPointer<QSslSocket> guarded(socket);
    auto place = m_pool.enter(peer, m_clock.elapsed(), [guarded] {
        if (guarded)
            guarded->abort();
    });
    if (!place) {
        if (m_admissionLog.admit())
            qCInfo(lcHubEdge).noquote() << "refused a connection from" << peer.toString()
                                        << ": too many new connections from that address";
        socket->abort();
        delete socket;
        return;
    }

    socket->setSslConfiguration(m_options.tls);
    auto *connection
        = new HttpConnection(socket, std::move(*place), *this, m_service, m_options.limits);
    socket->setParent(connection);
    ++m_connections;
    connect(connection, &QObject::destroyed, this, [this] { --m_connections; });
    connection->start();
}

std::string HttpFront::peerKey(const QHostAddress &address, quint16 port)
{
    return address.toString().toStdString() + '/' + std::to_string(port);
}

void HttpFront::upgrade(QSslSocket *socket, PreAuthPool::Place place)
{
    socket->setParent(this);
    const std::string key = peerKey(socket->peerAddress(), socket->peerPort());
    m_upgrading.insert_or_assign(key, Upgrading { socket, std::move(place) });
    // Until the WebSocket layer has it, the socket is ours to clean up.
    connect(socket, &QAbstractSocket::disconnected, this, [this, socket, key] {
        if (m_upgrading.erase(key) > 0)
            socket->deleteLater();
    });
    // The WebSocket layer bounds its own handshake; this bounds the place.
    QTimer::singleShot(m_options.limits.upgradeTimeout, socket, [this, socket, key] {
        if (m_upgrading.count(key) > 0)
            socket->abort();
    });
    m_webSockets.handleConnection(socket);
}

void HttpFront::onWebSocket()
{
    while (m_webSockets.hasPendingConnections()) {
        std::unique_ptr<QWebSocket> socket(m_webSockets.nextPendingConnection());
        if (!socket)
            continue;
        socket->setParent(nullptr);
        PreAuthPool::Place place;
        const auto it = m_upgrading.find(peerKey(socket->peerAddress(), socket->peerPort()));
        if (it != m_upgrading.end()) {
            place = std::move(it->second.place);
            // A server's QWebSocket does not own its TCP socket: it does
            // from now on, so that it goes with it, to its end or to
            // another thread (the hub's relay threads take device legs).
            if (QSslSocket *tcp = it->second.socket.data()) {
                tcp->setParent(socket.get());
                // The WebSocket server is done with it, but stays
                // connected to its disconnected(), where it looks itself
                // up among every socket it ever upgraded: each daemon that
                // leaves would cost a walk over all the sessions.
                tcp->disconnect(&m_webSockets);
            }
            m_upgrading.erase(it);
        }
        m_service.acceptWebSocket(std::move(socket), std::move(place));
    }
}

} // namespace cloop::hub::edge
