#include "daemon-forward/segment/segmentport.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"

#include <algorithm>

namespace cloop::forward {

using device::l2::PacketSocket;
using device::l2::VnetHeader;

namespace {
// Frames read per wake-up, so a busy segment cannot starve the tunnel.
constexpr int kFramesPerWake = 64;
} // namespace

SegmentPort::SegmentPort(
    std::unique_ptr<PacketSocket> socket, tunnel::Channel *channel, QObject *parent)
    : QObject(parent)
    , m_socket(std::move(socket))
    , m_channel(channel)
{
    m_readable = std::make_unique<QSocketNotifier>(m_socket->fd(), QSocketNotifier::Read);
    connect(m_readable.get(), &QSocketNotifier::activated, this, &SegmentPort::onInterfaceReadable);
    connect(channel, &tunnel::Channel::readyRead, this, &SegmentPort::onChannelReadable);
    // Room again: read the interface again.
    connect(channel, &tunnel::Channel::writable, this, [this] {
        if (!m_ended)
            m_readable->setEnabled(true);
    });
    connect(channel, &tunnel::Channel::closed, this,
        [this](protocol::CloseCode code, const QString &reason) {
            end(tunnel::describeClose(code, reason));
        });
}

SegmentPort::~SegmentPort() = default;

SegmentPort::Counters SegmentPort::counters() const
{
    Counters counters = m_counters;
    counters.framesUp = m_batch.sentFrames();
    counters.bytesUp = m_batch.sentBytes();
    counters.droppedUp += m_batch.droppedFrames();
    if (m_socket) {
        counters.kernelDrops = m_socket->kernelDrops();
        counters.truncated = m_socket->truncatedFrames();
    }
    return counters;
}

void SegmentPort::onInterfaceReadable()
{
    if (!m_channel || m_ended)
        return;
    const auto flush = [this] { return m_batch.flush(*m_channel); };
    bool refused = false;
    for (int i = 0; i < kFramesPerWake && !refused; ++i) {
        auto packet = m_socket->receive();
        if (!packet) {
            flush();
            fail(QStringLiteral("the interface failed: %1").arg(packet.error().message));
            return;
        }
        if (!*packet)
            break;
        auto header = VnetHeader::parse((*packet)->bytes);
        if (!header) {
            ++m_counters.droppedUp;
            continue;
        }
        const device::l2::PacketAuxdata &aux = (*packet)->aux;
        QByteArrayView frame = QByteArrayView((*packet)->bytes).sliced(VnetHeader::kSize);
        // Most frames go up as the kernel gave them; only a tag to put back
        // or a checksum to finish needs a copy to change.
        QByteArray fixed;
        if (aux.hasVlanTag() || (header->needsChecksum() && !header->isGso())) {
            fixed = frame.toByteArray();
            if (aux.hasVlanTag()
                && !device::l2::restoreVlanTag(fixed, *header, aux.vlanTci, aux.tagProtocol())) {
                ++m_counters.droppedUp;
                continue;
            }
            if (!device::l2::completeChecksum(fixed, *header)) {
                ++m_counters.droppedUp;
                continue;
            }
            frame = fixed;
        }
        if (!protocol::validateFrameRecord(frame)) {
            ++m_counters.droppedUp;
            continue;
        }
        // A frame read when the channel then refuses the full batch stays
        // in the next one, which goes out once writable() re-enables reads.
        if (!m_batch.hasRoomFor(frame.size()))
            refused = !flush();
        m_batch.append(*header, frame);
        m_counters.largestUp = std::max(m_counters.largestUp, frame.size());
    }
    if (!refused)
        refused = !flush();
    // The channel is full: let the kernel hold (and, past its buffer, drop)
    // what comes until writable() says the channel drained.
    if (refused)
        m_readable->setEnabled(false);
}

void SegmentPort::onChannelReadable()
{
    if (!m_channel || m_ended)
        return;
    if (Status fed = m_decoder.feed(m_channel->readAll()); !fed) {
        end(QStringLiteral("the stream broke the frame format: %1").arg(fed.error().message));
        m_channel->close(protocol::CloseCode::ProtocolError, fed.error().message);
        return;
    }
    protocol::FrameRecord record;
    char head[VnetHeader::kSize];
    while (m_decoder.next(record)) {
        record.header.writeTo(head);
        if (Status sent = m_socket->send(QByteArrayView(head, VnetHeader::kSize), record.frame);
            !sent) {
            if (!sent.error().is(ErrorCode::WouldBlock)
                && !sent.error().is(ErrorCode::InvalidFrame)) {
                fail(QStringLiteral("the interface failed: %1").arg(sent.error().message));
                return;
            }
            ++m_counters.droppedDown;
            continue;
        }
        ++m_counters.framesDown;
        m_counters.bytesDown += static_cast<quint64>(record.frame.size());
        m_counters.largestDown = std::max(m_counters.largestDown, record.frame.size());
    }
}

void SegmentPort::fail(const QString &reason)
{
    end(reason);
    if (m_channel)
        m_channel->close(protocol::CloseCode::DeviceGone, reason);
}

void SegmentPort::stop(const QString &reason)
{
    end(reason);
    if (m_channel)
        m_channel->close(protocol::CloseCode::Normal, reason);
}

void SegmentPort::end(const QString &reason)
{
    if (std::exchange(m_ended, true))
        return;
    m_readable->setEnabled(false);
    const Counters totals = counters();
    qCInfo(lcForward).noquote() << QStringLiteral(
        "segment stream on %1 ended (%2): up %3 frames, down %4 frames, "
        "dropped %5 up / %6 down / %7 in the kernel; largest frames %8 up / "
        "%9 down bytes")
                                       .arg(m_socket->interfaceName(), reason)
                                       .arg(totals.framesUp)
                                       .arg(totals.framesDown)
                                       .arg(totals.droppedUp)
                                       .arg(totals.droppedDown)
                                       .arg(totals.kernelDrops)
                                       .arg(totals.largestUp)
                                       .arg(totals.largestDown);
    Q_EMIT ended(reason);
}

} // namespace cloop::forward
