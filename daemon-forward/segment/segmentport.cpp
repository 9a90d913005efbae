#include "daemon-forward/segment/segmentport.h"

#include "common/logging.h"

namespace cloop::forward {

using device::l2::PacketSocket;
using device::l2::VnetHeader;

SegmentPort::SegmentPort(
    std::unique_ptr<PacketSocket> socket, tunnel::Channel *channel, QObject *parent)
    : QObject(parent)
    , m_socket(std::move(socket))
{
    // The device side is private: only the pump sees it.
    m_pump
        = std::make_unique<tunnel::FramePump>(static_cast<tunnel::FrameDevice &>(*this), channel);
    connect(m_pump.get(), &tunnel::FramePump::ended, this, [this](const QString &reason) {
        logSummary(reason);
        Q_EMIT ended(reason);
    });
}

SegmentPort::~SegmentPort()
{
    m_pump->disconnect(this);
    m_pump.reset();
}

SegmentPort::Counters SegmentPort::counters() const
{
    const tunnel::FramePump::Counters pumped = m_pump->counters();
    Counters counters;
    counters.framesUp = pumped.framesToChannel;
    counters.bytesUp = pumped.bytesToChannel;
    counters.framesDown = pumped.framesFromChannel;
    counters.bytesDown = pumped.bytesFromChannel;
    counters.droppedUp = pumped.unfitToChannel + pumped.droppedToChannel;
    counters.droppedDown = pumped.droppedFromChannel + pumped.refusedFromChannel;
    counters.largestUp = pumped.largestToChannel;
    counters.largestDown = pumped.largestFromChannel;
    counters.kernelDrops = m_socket->kernelDrops();
    counters.truncated = m_socket->truncatedFrames();
    return counters;
}

Result<tunnel::FrameDevice::Outgoing> SegmentPort::readFrame()
{
    auto packet = m_socket->receive();
    if (!packet)
        return packet.error();
    Outgoing outgoing;
    if (!*packet)
        return outgoing;
    outgoing.kind = Outgoing::Kind::Unfit;
    auto header = VnetHeader::parse((*packet)->bytes);
    if (!header)
        return outgoing;
    const device::l2::PacketAuxdata &aux = (*packet)->aux;
    outgoing.header = *header;
    outgoing.bytes = std::move((*packet)->bytes);
    outgoing.offset = VnetHeader::kSize;
    // Most frames go up as the kernel gave them; only a tag to put back or
    // a checksum to finish needs a copy to change.
    if (aux.hasVlanTag() || (header->needsChecksum() && !header->isGso())) {
        QByteArray fixed = outgoing.frame().toByteArray();
        if (aux.hasVlanTag()
            && !device::l2::restoreVlanTag(fixed, outgoing.header, aux.vlanTci, aux.tagProtocol()))
            return outgoing;
        if (!device::l2::completeChecksum(fixed, outgoing.header))
            return outgoing;
        outgoing.bytes = std::move(fixed);
        outgoing.offset = 0;
    }
    if (protocol::validateFrameRecord(outgoing.frame()))
        outgoing.kind = Outgoing::Kind::Frame;
    return outgoing;
}

Result<tunnel::FrameDevice::Delivery> SegmentPort::writeFrame(const protocol::FrameRecord &record)
{
    char head[VnetHeader::kSize];
    record.header.writeTo(head);
    const Status sent = m_socket->send(QByteArrayView(head, VnetHeader::kSize), record.frame);
    if (sent)
        return Delivery::Written;
    // A full socket buffer, or a frame the wire cannot carry: Ethernet drops.
    if (sent.error().is(ErrorCode::WouldBlock) || sent.error().is(ErrorCode::InvalidFrame))
        return Delivery::Dropped;
    return sent.error();
}

QString SegmentPort::describeFailure(const Error &error) const
{
    return QStringLiteral("the interface failed: %1").arg(error.message);
}

void SegmentPort::logSummary(const QString &reason) const
{
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
}

} // namespace cloop::forward
