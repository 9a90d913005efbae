#include "common/tunneltestsupport.h"

#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"

#include <QDir>
#include <QHostAddress>
#include <QSslConfiguration>
#include <QTcpSocket>
#include <QWebSocket>

namespace cloop::testsupport {

Result<hub::TlsIdentity> makeDevIdentity(
    const QString &directory, const QString &name, const QStringList &hostNames)
{
    const QDir dir(directory);
    const QString certificatePath = dir.filePath(name + QStringLiteral(".cert.pem"));
    const QString keyPath = dir.filePath(name + QStringLiteral(".key.pem"));
    hub::DevCertificateRequest request;
    request.hostNames = hostNames;
    request.validDays = 2;
    if (Status generated = hub::generateDevCertificate(request, certificatePath, keyPath);
        !generated)
        return generated.error();
    return hub::TlsIdentity::load(certificatePath, keyPath);
}

// --- FakeHub ----------------------------------------------------------------

FakeHub::FakeHub(QObject *parent)
    : QObject(parent)
    , m_responder(
          [](FakeHub &hub, int, QWebSocket *socket, const protocol::ControlMessage &message) {
              if (std::holds_alternative<protocol::Hello>(message))
                  hub.send(socket, FakeHub::welcome());
          })
{ }

FakeHub::~FakeHub() = default;

bool FakeHub::listenSecure(const hub::TlsIdentity &identity)
{
    m_server = new QWebSocketServer(QStringLiteral("fake hub"), QWebSocketServer::SecureMode, this);
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setLocalCertificateChain(identity.chain);
    configuration.setPrivateKey(identity.key);
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    m_server->setSslConfiguration(configuration);
    connect(m_server, &QWebSocketServer::newConnection, this, &FakeHub::onNewConnection);
    return m_server->listen(QHostAddress::LocalHost, 0);
}

bool FakeHub::listenPlain()
{
    m_server
        = new QWebSocketServer(QStringLiteral("fake hub"), QWebSocketServer::NonSecureMode, this);
    connect(m_server, &QWebSocketServer::newConnection, this, &FakeHub::onNewConnection);
    return m_server->listen(QHostAddress::LocalHost, 0);
}

quint16 FakeHub::port() const
{
    return m_server ? m_server->serverPort() : 0;
}

QUrl FakeHub::url() const
{
    QUrl url;
    url.setScheme(m_server && m_server->secureMode() == QWebSocketServer::SecureMode
            ? QStringLiteral("wss")
            : QStringLiteral("ws"));
    url.setHost(QStringLiteral("127.0.0.1"));
    url.setPort(port());
    return url;
}

protocol::Welcome FakeHub::welcome()
{
    protocol::Welcome welcome;
    welcome.protocol = protocol::kVersion;
    welcome.software = QStringLiteral("fake-hub/1");
    welcome.id = 42;
    welcome.name = QStringLiteral("bench-forwarder");
    return welcome;
}

void FakeHub::send(QWebSocket *socket, const protocol::ControlMessage &message)
{
    socket->sendTextMessage(QString::fromUtf8(protocol::serializeControlMessage(message)));
}

QWebSocket *FakeHub::socket(int connection) const
{
    return connection >= 0 && connection < m_connections.size()
        ? m_connections[connection].socket.data()
        : nullptr;
}

QString FakeHub::requestPath(int connection) const
{
    return connection >= 0 && connection < m_connections.size() ? m_connections[connection].path
                                                                : QString();
}

QStringList FakeHub::texts(int connection) const
{
    return connection >= 0 && connection < m_connections.size() ? m_connections[connection].texts
                                                                : QStringList();
}

std::optional<protocol::ControlMessage> FakeHub::message(int connection, int index) const
{
    const QStringList received = texts(connection);
    if (index < 0 || index >= received.size())
        return std::nullopt;
    auto parsed = protocol::parseControlMessage(received[index].toUtf8());
    if (!parsed)
        return std::nullopt;
    return *parsed;
}

void FakeHub::onNewConnection()
{
    while (QWebSocket *socket = m_server->nextPendingConnection()) {
        // The server stays the parent; a test may hand the socket to a
        // TunnelConnection, which then owns it. Hence QPointer, never deleteLater.
        const int index = static_cast<int>(m_connections.size());
        m_connections.append(Connection { socket, socket->requestUrl().path(), {} });
        connect(socket, &QWebSocket::textMessageReceived, this,
            [this, index, socket](const QString &text) {
                m_connections[index].texts.append(text);
                m_allTexts.append(text);
                Q_EMIT textReceived(index, text);
                const auto parsed = protocol::parseControlMessage(text.toUtf8());
                if (parsed && m_responder)
                    m_responder(*this, index, socket, *parsed);
            });
        connect(socket, &QWebSocket::disconnected, this,
            [this, index] { Q_EMIT clientDisconnected(index); });
        Q_EMIT clientConnected(index);
    }
}

// --- ChannelEnding ----------------------------------------------------------

ChannelEnding::ChannelEnding(tunnel::Channel *channel)
{
    if (channel)
        watch(channel);
}

void ChannelEnding::watch(tunnel::Channel *channel)
{
    connect(channel, &tunnel::Channel::closed, this,
        [this](protocol::CloseCode closeCode, const QString &why) {
            code = closeCode;
            reason = why;
            seen = true;
        });
}

// --- TcpProxy ---------------------------------------------------------------

TcpProxy::TcpProxy(quint16 targetPort, QObject *parent)
    : QObject(parent)
    , m_targetPort(targetPort)
{
    connect(&m_server, &QTcpServer::newConnection, this, &TcpProxy::onNewConnection);
}

TcpProxy::~TcpProxy() = default;

bool TcpProxy::listen()
{
    return m_server.listen(QHostAddress::LocalHost, 0);
}

void TcpProxy::forward(QTcpSocket *from, QTcpSocket *to)
{
    if (m_blackhole) {
        m_dropped += from->readAll().size();
        return;
    }
    // Until the upstream side is connected the bytes wait in `from`.
    if (!to || to->state() != QAbstractSocket::ConnectedState)
        return;
    to->write(from->readAll());
}

void TcpProxy::onNewConnection()
{
    while (QTcpSocket *downstream = m_server.nextPendingConnection()) {
        auto *upstream = new QTcpSocket(this);
        downstream->setParent(this);
        QPointer<QTcpSocket> down(downstream);
        QPointer<QTcpSocket> up(upstream);
        connect(downstream, &QTcpSocket::readyRead, this, [this, down, up] { forward(down, up); });
        connect(upstream, &QTcpSocket::readyRead, this, [this, down, up] { forward(up, down); });
        connect(upstream, &QTcpSocket::connected, this, [this, down, up] { forward(down, up); });
        auto passClose = [this](QPointer<QTcpSocket> other) {
            if (!m_blackhole && other)
                other->disconnectFromHost();
        };
        connect(downstream, &QTcpSocket::disconnected, this, [passClose, up] { passClose(up); });
        connect(upstream, &QTcpSocket::disconnected, this, [passClose, down] { passClose(down); });
        upstream->connectToHost(QHostAddress::LocalHost, m_targetPort);
        ++m_accepted;
        Q_EMIT accepted(m_accepted);
    }
}

} // namespace cloop::testsupport
