#include "common/tunnel/channelmultiplexer.h"

#include "common/logging.h"

#include <QJsonDocument>
#include <QMetaMethod>
#include <QTimer>

namespace cloop::tunnel {

using protocol::ChannelFrame;
using protocol::CloseCode;
using protocol::FrameKind;

Channel::Channel(
    ChannelMultiplexer *mux, quint32 id, QJsonObject metadata, State state, quint32 receiveWindow)
    : QObject(mux)
    , m_mux(mux)
    , m_id(id)
    , m_metadata(std::move(metadata))
    , m_state(state)
    , m_receiveWindow(receiveWindow)
    , m_peerAllowance(receiveWindow)
{ }

void Channel::accept()
{
    if (m_state != State::Opening || m_mux->isOwnId(m_id))
        return;
    m_state = State::Open;
    m_mux->send(ChannelFrame::accept(m_id, m_receiveWindow));
    Q_EMIT opened();
    flush();
}

void Channel::refuse(const QString &reason)
{
    if (m_state != State::Opening)
        return;
    finish(CloseCode::Refused, reason, true);
}

qsizetype Channel::writableBytes() const
{
    if (m_state != State::Opening && m_state != State::Open)
        return 0;
    const auto &limits = m_mux->limits();
    return std::max<qsizetype>(0,
        std::min(limits.maxQueuedPerChannel - m_sendQueue.size(),
            limits.maxQueuedPerConnection - m_mux->queuedBytes()));
}

bool Channel::write(const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return true;
    if (bytes.size() > writableBytes()) {
        ++m_refusedWrites;
        m_wasWritableBlocked = true;
        return false;
    }
    m_sendQueue.append(bytes);
    m_mux->adjustQueued(bytes.size());
    flush();
    return true;
}

void Channel::flush()
{
    if (m_state != State::Open && m_state != State::Closing)
        return;
    const qsizetype before = m_sendQueue.size();
    while (m_sendCredit > 0 && !m_sendQueue.isEmpty()) {
        QByteArray chunk = m_sendQueue.take(
            std::min<qsizetype>(static_cast<qsizetype>(m_sendCredit), protocol::kMaxDataPayload));
        const auto size = static_cast<quint32>(chunk.size());
        m_mux->send(ChannelFrame::data(m_id, std::move(chunk)));
        m_sendCredit -= size;
        m_bytesSent += size;
    }
    const qsizetype sent = before - m_sendQueue.size();
    m_mux->adjustQueued(-sent);
    if (m_state == State::Closing && m_sendQueue.isEmpty()) {
        sendOwnClose();
        return;
    }
    if (sent > 0)
        m_mux->wakeBlockedWriters();
}

void Channel::sendOwnClose()
{
    m_mux->send(ChannelFrame::close(m_id, CloseCode::Normal, m_pendingCloseReason));
    if (m_peerClosed)
        finish(CloseCode::Normal, m_pendingCloseReason, false);
    else
        m_state = State::HalfClosed;
}

void Channel::onPeerClose(CloseCode code, const QString &reason)
{
    if (code != CloseCode::Normal || m_state == State::Opening || m_state == State::HalfClosed) {
        finish(code, reason, false);
        return;
    }
    // The peer has said all it will say; what this side still has queued
    // goes out first, then this side's close ends the channel.
    m_peerClosed = true;
    if (m_pendingCloseReason.isEmpty())
        m_pendingCloseReason = reason;
    if (m_state == State::Open) {
        m_state = State::Closing;
        flush();
    }
}

QByteArray Channel::read(qsizetype maxBytes)
{
    const QByteArray out = m_receiveBuffer.take(maxBytes);
    // A closing channel still receives (the peer may be flushing its own
    // backlog before its close), so it still grants.
    if (out.isEmpty() || m_peerClosed
        || (m_state != State::Open && m_state != State::Closing && m_state != State::HalfClosed))
        return out;
    m_consumedSinceGrant += static_cast<quint32>(out.size());
    // Grant in batches of a quarter window: fewer frames, and no stall, since
    // the peer still holds at least three quarters of the window.
    if (m_consumedSinceGrant >= std::max<quint32>(1, m_receiveWindow / 4)) {
        m_mux->send(ChannelFrame::grant(m_id, m_consumedSinceGrant));
        m_peerAllowance += m_consumedSinceGrant;
        m_consumedSinceGrant = 0;
    }
    return out;
}

void Channel::close(CloseCode code, const QString &reason)
{
    if (m_state == State::Closed)
        return;
    if (code != CloseCode::Normal || m_state == State::Opening) {
        finish(code, reason, true);
        return;
    }
    if (m_state != State::Open)
        return; // already closing
    m_state = State::Closing;
    m_pendingCloseReason = reason;
    flush();
}

void Channel::finish(CloseCode code, const QString &reason, bool notifyPeer)
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    const qsizetype dropped = m_sendQueue.size();
    m_mux->adjustQueued(-dropped);
    m_sendQueue.clear();
    if (notifyPeer)
        m_mux->send(ChannelFrame::close(m_id, code, reason));
    m_mux->forget(this);
    Q_EMIT closed(code, reason);
    deleteLater();
    if (dropped > 0)
        m_mux->wakeBlockedWriters();
}

ChannelMultiplexer::ChannelMultiplexer(Side side, QObject *parent)
    : ChannelMultiplexer(side, Limits {}, parent)
{ }

ChannelMultiplexer::ChannelMultiplexer(Side side, Limits limits, QObject *parent)
    : QObject(parent)
    , m_side(side)
    , m_limits(limits)
    , m_nextId(side == Side::Hub ? 2 : 1)
{
    Q_ASSERT(limits.receiveWindow > 0 && limits.receiveWindow <= protocol::kMaxWindow);
}

ChannelMultiplexer::~ChannelMultiplexer() = default;

bool ChannelMultiplexer::isOwnId(quint32 id) const
{
    const bool even = (id % 2) == 0;
    return m_side == Side::Hub ? even : !even;
}

Result<Channel *> ChannelMultiplexer::openChannel(const QJsonObject &metadata)
{
    if (channelCount() >= m_limits.maxChannels)
        return Error::make(QStringLiteral("too_many_channels"),
            QStringLiteral("the tunnel already carries %1 channels").arg(m_limits.maxChannels));
    const QByteArray encoded = QJsonDocument(metadata).toJson(QJsonDocument::Compact);
    if (encoded.size() > protocol::kMaxOpenMetadata)
        return Error::make(QStringLiteral("metadata_too_large"),
            QStringLiteral("channel metadata of %1 bytes exceeds %2")
                .arg(encoded.size())
                .arg(protocol::kMaxOpenMetadata));
    const quint32 id = m_nextId;
    m_nextId += 2;
    auto *channel
        = new Channel(this, id, metadata, Channel::State::Opening, m_limits.receiveWindow);
    m_channels.insert(id, channel);
    Q_EMIT channelCountChanged(channelCount());
    send(ChannelFrame::open(id, m_limits.receiveWindow, encoded));
    return channel;
}

void ChannelMultiplexer::send(const ChannelFrame &frame)
{
    Q_EMIT frameReady(protocol::encodeFrame(frame));
}

void ChannelMultiplexer::forget(Channel *channel)
{
    if (m_channels.remove(channel->id()))
        Q_EMIT channelCountChanged(channelCount());
}

void ChannelMultiplexer::wakeBlockedWriters()
{
    // Room freed on one channel may be what another was waiting for (the
    // per-connection cap is shared). A writer is woken once it can queue at
    // least half of the smaller cap again, so wake-ups are not per byte.
    if (m_waking)
        return;
    m_waking = true;
    const qsizetype threshold
        = std::min(m_limits.maxQueuedPerChannel, m_limits.maxQueuedPerConnection) / 2;
    const auto channels = m_channels.values();
    for (Channel *channel : channels) {
        if (channel->m_wasWritableBlocked && m_channels.contains(channel->id())
            && channel->writableBytes() >= std::max<qsizetype>(1, threshold)) {
            channel->m_wasWritableBlocked = false;
            Q_EMIT channel->writable();
        }
    }
    m_waking = false;
}

void ChannelMultiplexer::closeAll(const QString &reason)
{
    const auto channels = m_channels.values();
    for (Channel *channel : channels)
        channel->finish(CloseCode::ConnectionLost, reason, false);
}

Result<Channel *> ChannelMultiplexer::openChannel(const protocol::ChannelOpen &open)
{
    return openChannel(protocol::serializeChannelOpen(open));
}

Status ChannelMultiplexer::handleFrame(QByteArrayView encoded)
{
    auto decoded = protocol::decodeFrame(encoded);
    if (!decoded)
        return decoded.error();
    ChannelFrame &frame = *decoded;
    auto violation = [&](const QString &what) {
        return Error::make(QStringLiteral("flow_control_violation"),
            QStringLiteral("channel %1: %2").arg(frame.channel).arg(what));
    };
    Channel *channel = m_channels.value(frame.channel);

    if (frame.kind == FrameKind::Open) {
        if (isOwnId(frame.channel))
            return violation(QStringLiteral("peer opened a channel number reserved for this side"));
        if (channel)
            return violation(QStringLiteral("opened twice"));
        QJsonParseError parseError {};
        const QJsonDocument doc = QJsonDocument::fromJson(frame.payload, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject())
            return violation(QStringLiteral("open metadata is not a JSON object"));
        if (channelCount() >= m_limits.maxChannels) {
            send(ChannelFrame::close(
                frame.channel, CloseCode::Refused, QStringLiteral("too many channels")));
            return {};
        }
        channel = new Channel(
            this, frame.channel, doc.object(), Channel::State::Opening, m_limits.receiveWindow);
        channel->m_sendCredit = frame.window;
        m_channels.insert(frame.channel, channel);
        Q_EMIT channelCountChanged(channelCount());
        static const QMetaMethod requested
            = QMetaMethod::fromSignal(&ChannelMultiplexer::channelRequested);
        if (!isSignalConnected(requested)) {
            channel->refuse(QStringLiteral("nothing on this side accepts channels"));
            return {};
        }
        Q_EMIT channelRequested(channel);
        QTimer::singleShot(0, channel, [channel] {
            if (channel->state() == Channel::State::Opening)
                channel->refuse(QStringLiteral("nothing on this side took the channel"));
        });
        return {};
    }

    // Frames for a channel this side already closed are still in flight:
    // they are expected and dropped.
    if (!channel) {
        qCDebug(lcTunnel) << "dropping" << protocol::frameKindName(frame.kind)
                          << "frame for closed channel" << frame.channel;
        return {};
    }

    switch (frame.kind) {
    case FrameKind::Open:
        break;
    case FrameKind::Accept:
        if (!isOwnId(frame.channel) || channel->m_state != Channel::State::Opening)
            return violation(QStringLiteral("unexpected accept"));
        channel->m_state = Channel::State::Open;
        channel->m_sendCredit = frame.window;
        Q_EMIT channel->opened();
        channel->flush();
        break;
    case FrameKind::Data: {
        const auto size = static_cast<quint32>(frame.payload.size());
        if (channel->m_state == Channel::State::Opening)
            return violation(QStringLiteral("data before accept"));
        if (channel->m_peerClosed)
            return violation(QStringLiteral("data after close"));
        if (size > channel->m_peerAllowance)
            return violation(QStringLiteral("peer sent %1 bytes with only %2 of window left")
                                 .arg(size)
                                 .arg(channel->m_peerAllowance));
        channel->m_peerAllowance -= size;
        channel->m_bytesReceived += size;
        channel->m_receiveBuffer.append(std::move(frame.payload));
        Q_EMIT channel->readyRead();
        break;
    }
    case FrameKind::Credit: {
        const quint64 total = quint64(channel->m_sendCredit) + frame.credit;
        if (total > protocol::kMaxWindow)
            return violation(QStringLiteral("credit beyond the largest window"));
        channel->m_sendCredit = static_cast<quint32>(total);
        channel->flush();
        break;
    }
    case FrameKind::Close:
        channel->onPeerClose(frame.closeCode, frame.closeReason());
        break;
    }
    return {};
}

QString describeClose(protocol::CloseCode code, const QString &reason)
{
    if (code != protocol::CloseCode::Normal)
        return QStringLiteral("the stream ended: %1").arg(reason);
    return reason.isEmpty() ? QStringLiteral("the stream was closed")
                            : QStringLiteral("the stream was closed: %1").arg(reason);
}

} // namespace cloop::tunnel
