#pragma once

#include "common/net/messagesocket.h"
#include "common/net/websocketframes.h"

class QTimer;

namespace cloop::net {

class TlsStream;

// Either end of a WebSocket over a TlsStream, once the upgrade is done: the
// hub's for each connection its front upgraded, a daemon's once its dial
// was answered (WebSocketDial). RFC 6455 is read by websocket::MessageReader
// and written by writeHeader, a client masking every frame; pings are
// answered, and the connection closes once both close frames have passed.
// It holds no buffer of its own between messages, so an idle session costs
// its TLS state and little more.
class StreamWebSocket final : public MessageSocket
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StreamWebSocket)

public:
    enum class Role
    {
        Server,
        Client,
    };

    // Takes the stream (upgraded, or the 101 answer queued on it) and the
    // bytes read past the upgrade's head, which are the first of the
    // WebSocket's: they are read a turn later, once the new owner has
    // connected to the signals.
    StreamWebSocket(TlsStream *stream, QByteArray earlyBytes, Role role = Role::Server,
        QObject *parent = nullptr);
    ~StreamWebSocket() override;

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

    // Memory held for this socket beyond OpenSSL's state (for tests and
    // the hub's figures).
    qsizetype bufferedBytes() const;

private:
    void onReadable();
    // Reads `bytes` as the next of the stream; false once nothing more
    // from the peer is to be read (or this socket is gone).
    bool take(QByteArrayView bytes);
    void takeEarlyBytes();
    void deliver(websocket::Message &message);
    void send(websocket::Opcode opcode, QByteArrayView payload);
    void sendClose(quint16 code, const QString &reason);
    void onEnded();

    TlsStream *m_stream;
    Role m_role;
    websocket::MessageReader m_reader;
    QByteArray m_earlyBytes;
    QTimer *m_closeGuard;
    QString m_closeReason;
    QString m_error;
    bool m_closeSent = false;
    bool m_closeReceived = false;
    bool m_ended = false;
};

} // namespace cloop::net
