#include "common/tunnel/framepump.h"

#include "common/tunnel/channelmultiplexer.h"

#include <QMetaObject>

#include <algorithm>

namespace cloop::tunnel {

namespace {
// Frames read per wake-up, so a busy segment cannot starve the tunnel.
constexpr int kFramesPerWake = 64;
} // namespace

FramePump::FramePump(FrameDevice &device, Channel *channel, QObject *parent)
    : QObject(parent)
    , m_device(device)
    , m_channel(channel)
    , m_readable(device.frameDescriptor(), QSocketNotifier::Read)
{
    Q_ASSERT(channel);
    connect(&m_readable, &QSocketNotifier::activated, this, &FramePump::onDeviceReadable);
    connect(channel, &Channel::readyRead, this, &FramePump::onChannelReadable);
    // Room again: read the device again.
    connect(channel, &Channel::writable, this, [this] {
        if (!m_ended)
            m_readable.setEnabled(true);
    });
    connect(
        channel, &Channel::closed, this, [this](protocol::CloseCode code, const QString &reason) {
            if (!m_ended)
                m_linkLost = code == protocol::CloseCode::ConnectionLost;
            end(describeClose(code, reason));
        });
    // Bytes that arrived before the pump existed raised readyRead for nobody.
    if (channel->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &FramePump::onChannelReadable, Qt::QueuedConnection);
}

FramePump::~FramePump()
{
    m_readable.setEnabled(false);
    if (Channel *channel = m_channel.data()) {
        // Whatever the channel says while it closes is no longer news to
        // anyone: ended() is for the owner, who is deleting the pump.
        channel->disconnect(this);
        if (!m_ended)
            channel->close(
                protocol::CloseCode::Normal, QStringLiteral("the device's port was removed"));
    }
}

FramePump::Counters FramePump::counters() const
{
    Counters counters = m_counters;
    counters.framesToChannel = m_batch.sentFrames();
    counters.bytesToChannel = m_batch.sentBytes();
    counters.droppedToChannel = m_batch.droppedFrames();
    return counters;
}

void FramePump::onDeviceReadable()
{
    Channel *channel = m_channel.data();
    if (!channel || m_ended)
        return;
    const auto flush = [this, channel] { return m_batch.flush(*channel); };
    bool refused = false;
    for (int i = 0; i < kFramesPerWake && !refused; ++i) {
        auto read = m_device.readFrame();
        if (!read) {
            flush();
            end(m_device.describeFailure(read.error()), protocol::CloseCode::DeviceGone);
            return;
        }
        if (read->kind == FrameDevice::Outgoing::Kind::Nothing)
            break;
        if (read->kind == FrameDevice::Outgoing::Kind::Unfit) {
            ++m_counters.unfitToChannel;
            continue;
        }
        const QByteArrayView frame = read->frame();
        // A frame read when the channel then refuses the full batch stays
        // in the next one, which goes out once writable() re-enables reads.
        if (!m_batch.hasRoomFor(frame.size()))
            refused = !flush();
        m_batch.append(read->header, frame);
        m_counters.largestToChannel = std::max(m_counters.largestToChannel, frame.size());
    }
    if (!refused)
        refused = !flush();
    // The channel is full: let the device's queue hold (and, past it, drop)
    // what comes until writable() says the channel drained.
    if (refused)
        m_readable.setEnabled(false);
}

void FramePump::onChannelReadable()
{
    Channel *channel = m_channel.data();
    if (!channel || m_ended)
        return;
    if (Status fed = m_decoder.feed(channel->readAll()); !fed) {
        end(QStringLiteral("the stream broke the frame format: %1").arg(fed.error().message),
            protocol::CloseCode::ProtocolError);
        return;
    }
    protocol::FrameRecord record;
    while (m_decoder.next(record)) {
        auto delivered = m_device.writeFrame(record);
        if (!delivered) {
            end(m_device.describeFailure(delivered.error()), protocol::CloseCode::DeviceGone);
            return;
        }
        switch (*delivered) {
        case FrameDevice::Delivery::Written:
            ++m_counters.framesFromChannel;
            m_counters.bytesFromChannel += static_cast<quint64>(record.frame.size());
            m_counters.largestFromChannel
                = std::max(m_counters.largestFromChannel, record.frame.size());
            break;
        case FrameDevice::Delivery::Dropped:
            ++m_counters.droppedFromChannel;
            break;
        case FrameDevice::Delivery::Refused:
            ++m_counters.refusedFromChannel;
            break;
        }
    }
}

void FramePump::stop(const QString &reason)
{
    end(reason, protocol::CloseCode::Normal);
}

void FramePump::end(const QString &reason, std::optional<protocol::CloseCode> closeWith)
{
    if (std::exchange(m_ended, true))
        return;
    // A vanished device polls as an error for good: watching it would spin.
    m_readable.setEnabled(false);
    // The peer hears first, and nothing here touches the pump after the
    // signal, whose receivers may be on their way to deleting it.
    if (Channel *channel = m_channel.data(); closeWith && channel)
        channel->close(*closeWith, reason);
    Q_EMIT ended(reason);
}

} // namespace cloop::tunnel
