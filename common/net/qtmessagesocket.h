#pragma once

#include "common/net/messagesocket.h"

#include <QWebSocket>

namespace cloop::net {

// A QWebSocket as a MessageSocket: the daemons' dials (whose TLS and pins
// Qt's socket does), and the hub's cluster links.
class QtMessageSocket final : public MessageSocket
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QtMessageSocket)

public:
    // Takes ownership of the socket.
    explicit QtMessageSocket(QWebSocket *socket, QObject *parent = nullptr);
    ~QtMessageSocket() override;

    QWebSocket *webSocket() const { return m_socket; }

    void sendText(const QString &text) override;
    void sendBinary(const QByteArray &bytes) override;
    void ping() override;
    void close(quint16 code, const QString &reason) override;
    void abort() override;
    bool isOpen() const override;
    QHostAddress peerAddress() const override;
    quint16 peerPort() const override;
    qint64 bytesToWrite() const override;
    void setMaxIncomingMessageBytes(qint64 bytes) override;
    QString closeReason() const override;
    QString errorString() const override;

private:
    // Small device frames must not wait for Nagle's algorithm, and every
    // byte under the WebSocket is a sign of life: both need the TCP
    // socket, Qt's child from the dial on.
    void onConnected();
    void onGone();

    QWebSocket *m_socket;
    QString m_error;
    bool m_goneSaid = false;
};

} // namespace cloop::net
