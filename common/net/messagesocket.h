#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QObject>
#include <QString>

namespace cloop::net {

// One WebSocket as the tunnel and the hub's endpoints use it, whatever
// carries it: Qt's QWebSocket (the daemons' dials, cluster links) or the
// hub's own over a TlsStream (every connection its front accepts).
class MessageSocket : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MessageSocket)

public:
    using QObject::QObject;
    ~MessageSocket() override = default;

    virtual void sendText(const QString &text) = 0;
    virtual void sendBinary(const QByteArray &bytes) = 0;
    virtual void ping() = 0;
    // Begins the close handshake (the reason cut to fit a close frame);
    // disconnected() follows once the peer answers or the link ends.
    virtual void close(quint16 code, const QString &reason) = 0;
    // Ends the link now; disconnected() follows.
    virtual void abort() = 0;
    virtual bool isOpen() const = 0;

    virtual QHostAddress peerAddress() const = 0;
    virtual quint16 peerPort() const = 0;
    // Bytes accepted for sending and not yet with the kernel.
    virtual qint64 bytesToWrite() const = 0;
    // A message over this ends the link with "too big".
    virtual void setMaxIncomingMessageBytes(qint64 bytes) = 0;

    // After disconnected(): what the peer's close frame said, or what
    // broke the link (empty when nothing did).
    virtual QString closeReason() const = 0;
    virtual QString errorString() const = 0;

Q_SIGNALS:
    void textReceived(const QString &text);
    void binaryReceived(const QByteArray &bytes);
    void pongReceived();
    // Bytes came from the peer, whatever they were (a ping included: it is
    // answered without a signal), so a heartbeat can count them.
    void activity();
    // Once, however the link ends, also when it never opened.
    void disconnected();
};

} // namespace cloop::net
