#include "common/tunnel/tunnelconnection.h"

#include "common/logging.h"
#include "common/net/websocketframes.h"
#include "common/util/duration.h"

#include <QTimer>

namespace cloop::tunnel {

TunnelConnection::TunnelConnection(net::MessageSocket *socket, ChannelMultiplexer::Side side,
    ChannelMultiplexer::Limits limits, TunnelTiming timing, QObject *parent)
    : QObject(parent)
    , m_socket(socket)
    , m_mux(side, limits)
    // The daemon leads the heartbeat: a hub with thousands of sessions
    // answers their pings instead of sending its own.
    , m_heartbeat(new net::Heartbeat(socket, timing.idlePace(), timing.watchfulPace(),
          side == ChannelMultiplexer::Side::Hub ? net::Heartbeat::Initiative::Follows
                                                : net::Heartbeat::Initiative::Leads))
{
    m_socket->setParent(this);
    // Children, so that a connection moves whole to another thread (the
    // hub's relay threads take device legs after authentication).
    m_mux.setParent(this);
    m_socket->setMaxIncomingMessageBytes(
        std::max<qint64>(protocol::kMaxFrameSize, protocol::kMaxControlMessageSize));
    connect(m_socket, &net::MessageSocket::textReceived, this, &TunnelConnection::onText);
    connect(m_socket, &net::MessageSocket::binaryReceived, this, &TunnelConnection::onBinary);
    connect(
        m_socket, &net::MessageSocket::disconnected, this, &TunnelConnection::onSocketDisconnected);
    connect(&m_mux, &ChannelMultiplexer::frameReady, this, [this](const QByteArray &frame) {
        if (!m_closed)
            m_socket->sendBinary(frame);
    });
    connect(&m_mux, &ChannelMultiplexer::channelCountChanged, m_heartbeat,
        [heartbeat = m_heartbeat](int count) { heartbeat->setWatchful(count > 0); });
    connect(m_heartbeat, &net::Heartbeat::timedOut, this, [this](qint64 silentMs) {
        abort(QStringLiteral("no sign of life from the peer for %1")
                  .arg(util::formatMilliseconds(silentMs)));
    });
}

TunnelConnection::~TunnelConnection()
{
    // Channels learn that the link is gone even when the owner just deletes us.
    m_mux.closeAll(QStringLiteral("tunnel closed"));
}

void TunnelConnection::startHeartbeat()
{
    m_heartbeat->start();
}

void TunnelConnection::sendControl(const protocol::ControlMessage &message)
{
    if (m_closed)
        return;
    m_socket->sendText(QString::fromUtf8(protocol::serializeControlMessage(message)));
}

void TunnelConnection::closeWithError(const protocol::ErrorMessage &error)
{
    sendControl(error);
    close(error.message);
}

void TunnelConnection::close(const QString &reason)
{
    if (m_closed)
        return;
    m_closeReason = reason;
    m_socket->close(net::websocket::CloseCode::Normal, reason);
    // A peer that never answers the close handshake must not keep us waiting.
    QTimer::singleShot(2000, this, [this] {
        if (!m_closed)
            m_socket->abort();
    });
}

void TunnelConnection::abort(const QString &reason)
{
    if (m_closed)
        return;
    m_closeReason = reason;
    m_socket->abort();
    // abort() emits disconnected synchronously for a connected socket; make
    // sure the state is final even when it was never connected.
    finish(reason);
}

void TunnelConnection::onText(const QString &text)
{
    if (m_violated)
        return;
    auto parsed = protocol::parseControlMessage(text.toUtf8());
    if (!parsed) {
        qCWarning(lcTunnel) << "malformed control message from"
                            << m_socket->peerAddress().toString() << ":" << parsed.error().message;
        sendControl(protocol::ErrorMessage { parsed.error().code, parsed.error().message, false });
        return;
    }
    Q_EMIT controlReceived(*parsed);
}

void TunnelConnection::onBinary(const QByteArray &bytes)
{
    if (m_violated)
        return;
    const Status status = m_mux.handleFrame(bytes);
    if (status)
        return;
    qCWarning(lcTunnel).noquote() << "dropping tunnel from" << m_socket->peerAddress().toString()
                                  << ":" << status.error().message;
    // Nothing more from this peer is acted upon; it is told why, then the
    // close handshake (bounded by close()'s timer) ends the link.
    m_violated = true;
    m_mux.closeAll(status.error().message);
    closeWithError(protocol::ErrorMessage { status.error().code, status.error().message, false });
}

void TunnelConnection::onSocketDisconnected()
{
    QString reason = m_closeReason;
    if (reason.isEmpty()) {
        reason = m_socket->closeReason();
        if (reason.isEmpty())
            reason = m_socket->errorString();
        if (reason.isEmpty())
            reason = QStringLiteral("connection closed by the peer");
    }
    finish(reason);
}

void TunnelConnection::finish(const QString &reason)
{
    if (m_closed)
        return;
    m_closed = true;
    m_heartbeat->stop();
    m_mux.closeAll(reason);
    Q_EMIT disconnected(reason);
}

} // namespace cloop::tunnel
