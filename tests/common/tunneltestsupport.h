#pragma once

// Loopback-only helpers for the tunnel tests: an in-process fake hub (a
// QWebSocketServer on 127.0.0.1, TLS or plain) that records every text
// message and answers through a scripted responder, a TCP proxy that can
// turn into a blackhole, and a development TLS identity in a temporary folder.

#include "common/protocol/channelframe.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "hub/tls/devcertificate.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTcpServer>
#include <QUrl>
#include <QWebSocketServer>

#include <functional>
#include <optional>

class QTcpSocket;
class QWebSocket;

namespace cloop::tunnel {
class Channel;
}

namespace cloop::testsupport {

// generateDevCertificate() into `directory`/`name`.{cert,key}.pem, then loaded.
Result<hub::TlsIdentity> makeDevIdentity(
    const QString &directory, const QString &name, const QStringList &hostNames);

class FakeHub final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FakeHub)

public:
    // Called for every text message that parses as a control message.
    using Responder = std::function<void(
        FakeHub &hub, int connection, QWebSocket *socket, const protocol::ControlMessage &message)>;

    explicit FakeHub(QObject *parent = nullptr);
    ~FakeHub() override;

    // wss:// with this identity, or plain ws://; always 127.0.0.1, port 0.
    bool listenSecure(const hub::TlsIdentity &identity);
    bool listenPlain();
    quint16 port() const;
    QUrl url() const;

    // Default: hello -> welcome(); nothing else is answered.
    void setResponder(Responder responder) { m_responder = std::move(responder); }
    static protocol::Welcome welcome();
    void send(QWebSocket *socket, const protocol::ControlMessage &message);

    int connectionCount() const { return static_cast<int>(m_connections.size()); }
    QWebSocket *socket(int connection) const;
    QString requestPath(int connection) const;
    QStringList texts(int connection) const;
    // Every text message of every connection, in arrival order.
    QStringList allTexts() const { return m_allTexts; }
    std::optional<protocol::ControlMessage> message(int connection, int index) const;

Q_SIGNALS:
    void clientConnected(int connection);
    void textReceived(int connection, const QString &text);
    void clientDisconnected(int connection);

private:
    struct Connection
    {
        QPointer<QWebSocket> socket;
        QString path;
        QStringList texts;
    };

    void onNewConnection();

    QWebSocketServer *m_server = nullptr;
    Responder m_responder;
    QList<Connection> m_connections;
    QStringList m_allTexts;
};

// How a channel ended, as its holder heard it; heard only while this lives,
// so a test's channel may outlive it.
class ChannelEnding final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChannelEnding)

public:
    explicit ChannelEnding(tunnel::Channel *channel = nullptr);
    void watch(tunnel::Channel *channel);

    protocol::CloseCode code = protocol::CloseCode::Normal;
    QString reason;
    bool seen = false;
};

// Pipes bytes between accepted loopback clients and 127.0.0.1:targetPort.
// Plain TCP piping, so it carries TLS as well. In blackhole mode nothing is
// forwarded in either direction (bytes are read and dropped) and no close is
// passed on, but every TCP connection stays open: a link that died silently.
class TcpProxy final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TcpProxy)

public:
    explicit TcpProxy(quint16 targetPort, QObject *parent = nullptr);
    ~TcpProxy() override;

    bool listen();
    quint16 port() const { return m_server.serverPort(); }
    void setBlackhole(bool on) { m_blackhole = on; }
    int acceptedCount() const { return m_accepted; }
    qint64 droppedBytes() const { return m_dropped; }

Q_SIGNALS:
    void accepted(int count);

private:
    void onNewConnection();
    void forward(QTcpSocket *from, QTcpSocket *to);

    quint16 m_targetPort;
    QTcpServer m_server;
    bool m_blackhole = false;
    int m_accepted = 0;
    qint64 m_dropped = 0;
};

} // namespace cloop::testsupport
