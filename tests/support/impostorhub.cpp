#include "support/impostorhub.h"

#include "common/net/qtmessagesocket.h"
#include "common/protocol/protocolversion.h"

#include <QFile>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QWebSocket>
#include <QWebSocketServer>

namespace cloop::testing {

ImpostorHub::ImpostorHub(QObject *parent)
    : QObject(parent)
{ }

ImpostorHub::~ImpostorHub()
{
    if (m_server)
        m_server->close();
}

bool ImpostorHub::listen(const QString &tlsDir, quint16 port)
{
    QFile certificate(tlsDir + QLatin1String("/cert.pem"));
    QFile key(tlsDir + QLatin1String("/key.pem"));
    if (!certificate.open(QIODevice::ReadOnly) || !key.open(QIODevice::ReadOnly)) {
        m_lastError = QStringLiteral("cannot read the hub's key pair in %1").arg(tlsDir);
        return false;
    }
    const QList<QSslCertificate> chain
        = QSslCertificate::fromData(certificate.readAll(), QSsl::Pem);
    const QByteArray keyBytes = key.readAll();
    QSslKey privateKey(keyBytes, QSsl::Ec, QSsl::Pem);
    if (privateKey.isNull())
        privateKey = QSslKey(keyBytes, QSsl::Rsa, QSsl::Pem);
    if (chain.isEmpty() || privateKey.isNull()) {
        m_lastError = QStringLiteral("the key pair in %1 does not load").arg(tlsDir);
        return false;
    }
    m_server
        = new QWebSocketServer(QStringLiteral("impostor hub"), QWebSocketServer::SecureMode, this);
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setLocalCertificateChain(chain);
    configuration.setPrivateKey(privateKey);
    configuration.setPeerVerifyMode(QSslSocket::VerifyNone); // daemons show no client certificate
    m_server->setSslConfiguration(configuration);
    connect(m_server, &QWebSocketServer::newConnection, this, &ImpostorHub::onNewConnection);
    if (!m_server->listen(QHostAddress::LocalHost, port)) {
        m_lastError = QStringLiteral("cannot listen on 127.0.0.1:%1: %2")
                          .arg(port)
                          .arg(m_server->errorString());
        return false;
    }
    return true;
}

void ImpostorHub::onNewConnection()
{
    while (QWebSocket *socket = m_server->nextPendingConnection()) {
        auto *connection = new tunnel::TunnelConnection(
            new net::QtMessageSocket(socket), tunnel::ChannelMultiplexer::Side::Hub, {}, {}, this);
        connect(connection, &tunnel::TunnelConnection::controlReceived, this,
            [this, connection](const protocol::ControlMessage &message) {
                const auto *hello = std::get_if<protocol::Hello>(&message);
                if (!hello)
                    return;
                ++m_hellos;
                m_session = connection;
                connection->startHeartbeat();
                connection->sendControl(protocol::Welcome { protocol::kVersion,
                    QStringLiteral("impostor"), 1, QStringLiteral("impostor"), m_device, {} });
                Q_EMIT welcomed();
            });
        connect(connection, &tunnel::TunnelConnection::disconnected, this,
            [this, connection](const QString &reason) {
                if (m_session == connection)
                    Q_EMIT sessionEnded(reason);
                connection->deleteLater();
            });
    }
}

tunnel::Channel *ImpostorHub::openChannel(const QJsonObject &metadata)
{
    if (!m_session) {
        m_lastError = QStringLiteral("no daemon is connected");
        return nullptr;
    }
    auto channel = m_session->channels()->openChannel(metadata);
    if (!channel) {
        m_lastError = channel.error().message;
        return nullptr;
    }
    return *channel;
}

} // namespace cloop::testing
