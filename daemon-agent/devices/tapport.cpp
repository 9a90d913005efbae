#include "daemon-agent/devices/tapport.h"

#include "daemon-agent/agentlogging.h"

#include <utility>

namespace cloop::agent {

using device::l2::TapDevice;
using device::l2::VnetHeader;

TapPort::TapPort(std::unique_ptr<TapDevice> tap, tunnel::Channel *channel, QObject *parent)
    : QObject(parent)
    , m_tap(std::move(tap))
{
    Q_ASSERT(m_tap);
    // The device side is private: only the pump sees it.
    m_pump
        = std::make_unique<tunnel::FramePump>(static_cast<tunnel::FrameDevice &>(*this), channel);
    connect(m_pump.get(), &tunnel::FramePump::ended, this, [this](const QString &reason) {
        logSummary(reason);
        Q_EMIT ended(reason);
    });
}

TapPort::~TapPort()
{
    if (!m_pump)
        return;
    if (!m_pump->hasEnded())
        logSummary(QStringLiteral("the port was removed"));
    m_pump->disconnect(this);
    m_pump.reset();
}

std::unique_ptr<TapDevice> TapPort::takeTap()
{
    Q_ASSERT(hasEnded());
    // The pump watches the TAP's descriptor: it goes first.
    if (m_pump) {
        m_pump->disconnect(this);
        m_pump.reset();
    }
    return std::move(m_tap);
}

TapPort::Counters TapPort::counters() const
{
    if (!m_pump)
        return {};
    const tunnel::FramePump::Counters pumped = m_pump->counters();
    Counters counters;
    counters.framesIn = pumped.framesFromChannel;
    counters.bytesIn = pumped.bytesFromChannel;
    counters.framesOut = pumped.framesToChannel;
    counters.bytesOut = pumped.bytesToChannel;
    counters.droppedIn = pumped.droppedFromChannel;
    counters.droppedOut = pumped.droppedToChannel;
    counters.rejectedIn = pumped.refusedFromChannel;
    counters.invalidOut = pumped.unfitToChannel;
    return counters;
}

Result<tunnel::FrameDevice::Outgoing> TapPort::readFrame()
{
    auto read = m_tap->readFrame();
    if (!read)
        return read.error();
    Outgoing outgoing;
    if (!*read)
        return outgoing;
    outgoing.bytes = std::move(**read);
    outgoing.kind = Outgoing::Kind::Unfit;
    if (m_tap->hasVnetHeader()) {
        auto parsed = VnetHeader::parse(outgoing.bytes);
        if (!parsed)
            return outgoing;
        outgoing.header = *parsed;
        outgoing.offset = VnetHeader::kSize;
    }
    // The checksum and segmentation the header asks for are left to the
    // forwarder's side, which puts the frame on a wire; only the size is
    // this side's to check.
    if (protocol::validateFrameRecord(outgoing.frame()))
        outgoing.kind = Outgoing::Kind::Frame;
    return outgoing;
}

Result<tunnel::FrameDevice::Delivery> TapPort::writeFrame(const protocol::FrameRecord &record)
{
    char head[VnetHeader::kSize];
    QByteArrayView headView;
    if (m_tap->hasVnetHeader()) {
        record.header.writeTo(head);
        headView = QByteArrayView(head, VnetHeader::kSize);
    } else if (record.header.isGso() || record.header.needsChecksum()) {
        // Without a vnet header the TAP cannot be told what is left to do
        // with the frame, and a sandbox should not get it half done.
        return Delivery::Refused;
    }
    const Status written = m_tap->writeFrame(headView, record.frame);
    if (written)
        return Delivery::Written;
    const Error &error = written.error();
    // Down is the normal state between the TAP's creation and the moment
    // the sandbox brings it up after the move; full is the sandbox not
    // keeping up. Neither is the segment's end.
    if (error.is(ErrorCode::WouldBlock) || error.is(ErrorCode::LinkDown))
        return Delivery::Dropped;
    if (error.is(ErrorCode::DeviceGone))
        return error;
    // The kernel judged this one frame (its vnet header, its size): the
    // next may be fine. Said once, or a peer could flood the log.
    if (!std::exchange(m_rejectionLogged, true)) {
        qCWarning(lcAgent).noquote()
            << QStringLiteral("TAP %1 refused a frame from the stream (%2); "
                              "such frames are dropped and counted")
                   .arg(m_tap->name(), written.error().message);
    }
    return Delivery::Refused;
}

QString TapPort::describeFailure(const Error &error) const
{
    return error.is(ErrorCode::DeviceGone)
        ? QStringLiteral("device gone: %1").arg(error.message)
        : QStringLiteral("the TAP failed: %1").arg(error.message);
}

void TapPort::logSummary(const QString &reason) const
{
    const Counters totals = counters();
    qCInfo(lcAgent).noquote() << QStringLiteral(
        "segment stream on TAP %1 ended (%2): in %3 frames, out %4 "
        "frames, dropped %5 in / %6 out, refused %7 in / %8 out")
                                     .arg(m_tap->name(), reason)
                                     .arg(totals.framesIn)
                                     .arg(totals.framesOut)
                                     .arg(totals.droppedIn)
                                     .arg(totals.droppedOut)
                                     .arg(totals.rejectedIn)
                                     .arg(totals.invalidOut);
}

} // namespace cloop::agent
