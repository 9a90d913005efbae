#include "common/net/streamwebsocket.h"

#include "common/net/tlsstream.h"

#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>

#include <cstring>

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

StreamWebSocket::StreamWebSocket(
    TlsStream *stream, QByteArray earlyBytes, Role role, QObject *parent)
    : MessageSocket(parent)
    , m_stream(stream)
    , m_role(role)
    , m_reader(websocket::MessageReader::Limits { kDefaultMaxMessageBytes, role == Role::Server })
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
    connect(m_stream, &TlsStream::readyRead, this, &StreamWebSocket::onReadable);
    connect(m_stream, &TlsStream::failed, this, [this](const QString &reason) {
        if (m_error.isEmpty())
            m_error = reason;
    });
    connect(m_stream, &TlsStream::ended, this, &StreamWebSocket::onEnded);
    // Also without early bytes: the stream may hold some it decrypted with
    // the upgrade's last record, which no readiness of the socket announces.
    QMetaObject::invokeMethod(this, &StreamWebSocket::onReadable, Qt::QueuedConnection);
}

StreamWebSocket::~StreamWebSocket() = default;

void StreamWebSocket::takeEarlyBytes()
{
    if (m_earlyBytes.isEmpty())
        return;
    const QByteArray early = std::exchange(m_earlyBytes, QByteArray());
    take(early);
}

void StreamWebSocket::onReadable()
{
    // The bytes that came with the upgrade go first, whichever turn comes first.
    QPointer<StreamWebSocket> self(this);
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

bool StreamWebSocket::take(QByteArrayView bytes)
{
    if (m_ended || m_closeReceived)
        return false;
    QPointer<StreamWebSocket> self(this);
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

void StreamWebSocket::deliver(websocket::Message &message)
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
        // Its code comes back (RFC 6455 5.5.1); then the connection ends
        // (a client's TLS stream waits for the server's end first).
        sendClose(message.closeCode == CloseCode::NoStatus ? CloseCode::Normal : message.closeCode,
            QString());
        m_closeGuard->stop();
        m_stream->close();
        return;
    case Opcode::Continuation:
        return;
    }
}

void StreamWebSocket::send(Opcode opcode, QByteArrayView payload)
{
    if (m_ended || m_closeSent)
        return;
    websocket::FrameHeader header {};
    if (m_role == Role::Server) {
        const qsizetype size
            = websocket::writeHeader(header, opcode, static_cast<quint64>(payload.size()));
        m_stream->write(QByteArrayView(reinterpret_cast<const char *>(header.data()), size));
        m_stream->write(payload);
        return;
    }
    // RFC 6455 5.3: a fresh key for every frame, from a generator seeded
    // securely (as Qt's own client does), masked eight bytes at a time.
    websocket::MaskKey mask {};
    const quint32 random = QRandomGenerator::global()->generate();
    std::memcpy(mask.data(), &random, sizeof random);
    const qsizetype size
        = websocket::writeHeader(header, opcode, static_cast<quint64>(payload.size()), &mask);
    m_stream->write(QByteArrayView(reinterpret_cast<const char *>(header.data()), size));
    if (char *space = m_stream->appendSpace(payload.size())) {
        std::memcpy(space, payload.data(), static_cast<size_t>(payload.size()));
        websocket::applyMask(space, payload.size(), mask);
    }
}

void StreamWebSocket::sendClose(quint16 code, const QString &reason)
{
    if (m_closeSent)
        return;
    send(Opcode::Close, websocket::closePayload(code, reason));
    m_closeSent = true;
}

void StreamWebSocket::sendText(const QString &text)
{
    send(Opcode::Text, text.toUtf8());
}

void StreamWebSocket::sendBinary(const QByteArray &bytes)
{
    send(Opcode::Binary, bytes);
}

void StreamWebSocket::ping()
{
    send(Opcode::Ping, {});
}

void StreamWebSocket::close(quint16 code, const QString &reason)
{
    if (m_ended || m_closeSent)
        return;
    sendClose(code, reason);
    if (m_closeReceived)
        m_stream->close();
    else
        m_closeGuard->start(kCloseGraceMs);
}

void StreamWebSocket::abort()
{
    m_stream->abort();
}

bool StreamWebSocket::isOpen() const
{
    return !m_ended && !m_closeSent && !m_closeReceived;
}

QHostAddress StreamWebSocket::peerAddress() const
{
    return m_stream->peerAddress();
}

quint16 StreamWebSocket::peerPort() const
{
    return m_stream->peerPort();
}

qint64 StreamWebSocket::bytesToWrite() const
{
    return m_stream->bytesToWrite();
}

void StreamWebSocket::setMaxIncomingMessageBytes(qint64 bytes)
{
    m_reader.setMaxMessageBytes(static_cast<qsizetype>(bytes));
}

QString StreamWebSocket::closeReason() const
{
    return m_closeReason;
}

QString StreamWebSocket::errorString() const
{
    return m_error;
}

qsizetype StreamWebSocket::bufferedBytes() const
{
    return m_stream->bufferedBytes() + m_reader.bufferedBytes() + m_earlyBytes.capacity();
}

void StreamWebSocket::onEnded()
{
    if (m_ended)
        return;
    m_ended = true;
    m_closeGuard->stop();
    Q_EMIT disconnected();
}

} // namespace cloop::net
