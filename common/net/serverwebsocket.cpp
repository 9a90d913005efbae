#include "common/net/serverwebsocket.h"

#include "common/net/tlsstream.h"

#include <QPointer>
#include <QTimer>

namespace cloop::net {

using websocket::Opcode;
namespace CloseCode = websocket::CloseCode;

namespace {

// Until the owner says otherwise (the tunnel allows a channel frame, the
// hub's first-message wait a hello): far more than either.
constexpr qsizetype kDefaultMaxMessageBytes = 1024 * 1024;
// A peer that never answers our close frame is closed on anyway.
constexpr int kCloseGraceMs = 5000;
// Read from TLS at most this much at a time: one record.
constexpr qsizetype kReadPiece = 16 * 1024;

} // namespace

ServerWebSocket::ServerWebSocket(TlsStream *stream, QByteArray earlyBytes, QObject *parent)
    : MessageSocket(parent)
    , m_stream(stream)
    , m_reader(websocket::MessageReader::Limits { kDefaultMaxMessageBytes, true })
    , m_earlyBytes(std::move(earlyBytes))
    , m_closeGuard(new QTimer(this))
{
    // Children, so that the socket moves whole to another thread.
    m_stream->setParent(this);
    m_closeGuard->setSingleShot(true);
    connect(m_closeGuard, &QTimer::timeout, this, [this] {
        if (m_stream)
            m_stream->close();
    });
    connect(m_stream, &TlsStream::readyRead, this, &ServerWebSocket::onReadable);
    connect(m_stream, &TlsStream::failed, this, [this](const QString &reason) {
        if (m_error.isEmpty())
            m_error = reason;
    });
    connect(m_stream, &TlsStream::ended, this, &ServerWebSocket::onEnded);
    if (!m_earlyBytes.isEmpty())
        QMetaObject::invokeMethod(this, &ServerWebSocket::takeEarlyBytes, Qt::QueuedConnection);
}

ServerWebSocket::~ServerWebSocket() = default;

void ServerWebSocket::takeEarlyBytes()
{
    if (m_earlyBytes.isEmpty())
        return;
    const QByteArray early = std::exchange(m_earlyBytes, QByteArray());
    take(early);
}

void ServerWebSocket::onReadable()
{
    // The bytes that came with the upgrade go first, whichever turn comes first.
    QPointer<ServerWebSocket> self(this);
    takeEarlyBytes();
    char buffer[kReadPiece];
    while (self && !m_ended) {
        const qsizetype got = m_stream->read(buffer, sizeof buffer);
        if (got <= 0)
            return;
        if (!take(QByteArrayView(buffer, got)))
            return;
    }
}

bool ServerWebSocket::take(QByteArrayView bytes)
{
    if (m_ended || m_closeReceived)
        return false;
    QPointer<ServerWebSocket> self(this);
    Q_EMIT activity();
    if (!self)
        return false;
    std::vector<websocket::Message> messages;
    const auto failure = m_reader.feed(bytes, messages);
    for (websocket::Message &message : messages) {
        deliver(message);
        if (!self || m_ended || m_closeReceived)
            return false;
    }
    if (failure) {
        // A peer that breaks the protocol is told how, and not read again.
        if (m_error.isEmpty())
            m_error = QStringLiteral("WebSocket protocol: %1").arg(failure->reason);
        m_closeReceived = true;
        sendClose(failure->closeCode, failure->reason);
        m_stream->close();
        return false;
    }
    return true;
}

void ServerWebSocket::deliver(websocket::Message &message)
{
    switch (message.opcode) {
    case Opcode::Text:
        Q_EMIT textReceived(message.text);
        return;
    case Opcode::Binary:
        Q_EMIT binaryReceived(message.payload);
        return;
    case Opcode::Ping:
        send(Opcode::Pong, message.payload);
        return;
    case Opcode::Pong:
        Q_EMIT pongReceived();
        return;
    case Opcode::Close:
        m_closeReceived = true;
        m_closeReason = message.text;
        // Its code comes back (RFC 6455 5.5.1); then, as the server, we
        // end the connection.
        sendClose(message.closeCode == CloseCode::NoStatus ? CloseCode::Normal : message.closeCode,
            QString());
        m_closeGuard->stop();
        m_stream->close();
        return;
    case Opcode::Continuation:
        return;
    }
}

void ServerWebSocket::send(Opcode opcode, QByteArrayView payload)
{
    if (m_ended || m_closeSent)
        return;
    websocket::FrameHeader header {};
    const qsizetype size
        = websocket::writeHeader(header, opcode, static_cast<quint64>(payload.size()));
    m_stream->write(QByteArrayView(reinterpret_cast<const char *>(header.data()), size));
    m_stream->write(payload);
}

void ServerWebSocket::sendClose(quint16 code, const QString &reason)
{
    if (m_closeSent)
        return;
    send(Opcode::Close, websocket::closePayload(code, reason));
    m_closeSent = true;
}

void ServerWebSocket::sendText(const QString &text)
{
    send(Opcode::Text, text.toUtf8());
}

void ServerWebSocket::sendBinary(const QByteArray &bytes)
{
    send(Opcode::Binary, bytes);
}

void ServerWebSocket::ping()
{
    send(Opcode::Ping, {});
}

void ServerWebSocket::close(quint16 code, const QString &reason)
{
    if (m_ended || m_closeSent)
        return;
    sendClose(code, reason);
    if (m_closeReceived)
        m_stream->close();
    else
        m_closeGuard->start(kCloseGraceMs);
}

void ServerWebSocket::abort()
{
    m_stream->abort();
}

bool ServerWebSocket::isOpen() const
{
    return !m_ended && !m_closeSent && !m_closeReceived;
}

QHostAddress ServerWebSocket::peerAddress() const
{
    return m_stream->peerAddress();
}

quint16 ServerWebSocket::peerPort() const
{
    return m_stream->peerPort();
}

qint64 ServerWebSocket::bytesToWrite() const
{
    return m_stream->bytesToWrite();
}

void ServerWebSocket::setMaxIncomingMessageBytes(qint64 bytes)
{
    m_reader.setMaxMessageBytes(static_cast<qsizetype>(bytes));
}

QString ServerWebSocket::closeReason() const
{
    return m_closeReason;
}

QString ServerWebSocket::errorString() const
{
    return m_error;
}

qsizetype ServerWebSocket::bufferedBytes() const
{
    return m_stream->bufferedBytes() + m_reader.bufferedBytes() + m_earlyBytes.capacity();
}

void ServerWebSocket::onEnded()
{
    if (m_ended)
        return;
    m_ended = true;
    m_closeGuard->stop();
    Q_EMIT disconnected();
}

} // namespace cloop::net
