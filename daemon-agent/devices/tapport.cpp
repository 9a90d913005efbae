#include "daemon-agent/devices/tapport.h"

#include "common/tunnel/channelmultiplexer.h"
#include "daemon-agent/agentlogging.h"

#include <QMetaObject>

#include <utility>

namespace cloop::agent {

using device::l2::TapDevice;
using device::l2::VnetHeader;

namespace {
// Frames read per wake-up, so a chatty sandbox cannot starve the tunnel.
constexpr int kFramesPerWake = 64;
} // namespace

TapPort::TapPort(std::unique_ptr<TapDevice> tap, tunnel::Channel *channel, QObject *parent)
    : QObject(parent)
    , m_tap(std::move(tap))
    , m_channel(channel)
{
    Q_ASSERT(m_tap);
    Q_ASSERT(channel);
    m_readable = std::make_unique<QSocketNotifier>(m_tap->fd(), QSocketNotifier::Read);
    connect(m_readable.get(), &QSocketNotifier::activated, this, &TapPort::onTapReadable);
    connect(channel, &tunnel::Channel::readyRead, this, &TapPort::onChannelReadable);
    // Room again: read the TAP again.
    connect(channel, &tunnel::Channel::writable, this, [this] {
        if (!m_ended)
            m_readable->setEnabled(true);
    });
    connect(channel, &tunnel::Channel::closed, this,
        [this](protocol::CloseCode code, const QString &reason) {
            end(tunnel::describeClose(code, reason));
        });
    // Bytes that arrived before the port existed raised readyRead for nobody.
    if (channel->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &TapPort::onChannelReadable, Qt::QueuedConnection);
}

TapPort::~TapPort()
{
    m_readable.reset();
    if (!m_ended)
        logSummary(QStringLiteral("the port was removed"));
    if (m_channel) {
        // Whatever the channel says while it closes is no longer news to
        // anyone: ended() is for the port's owner, who is deleting it.
        m_channel->disconnect(this);
        if (!m_ended)
            m_channel->close(
                protocol::CloseCode::Normal, QStringLiteral("the device's port was removed"));
    }
}

TapPort::Counters TapPort::counters() const
{
    Counters counters = m_counters;
    counters.framesOut = m_batch.sentFrames();
    counters.bytesOut = m_batch.sentBytes();
    counters.droppedOut = m_batch.droppedFrames();
    return counters;
}

void TapPort::onTapReadable()
{
    if (!m_channel || m_ended)
        return;
    const auto flush = [this] { return m_batch.flush(*m_channel); };
    bool refused = false;
    for (int i = 0; i < kFramesPerWake && !refused; ++i) {
        auto read = m_tap->readFrame();
        if (!read) {
            flush();
            end(read.error().is(ErrorCode::DeviceGone)
                    ? QStringLiteral("device gone: %1").arg(read.error().message)
                    : QStringLiteral("the TAP failed: %1").arg(read.error().message),
                protocol::CloseCode::DeviceGone);
            return;
        }
        if (!*read)
            break;
        const QByteArrayView bytes(**read);
        VnetHeader header;
        QByteArrayView frame = bytes;
        if (m_tap->hasVnetHeader()) {
            auto parsed = VnetHeader::parse(bytes);
            if (!parsed) {
                ++m_counters.invalidOut;
                continue;
            }
            header = *parsed;
            frame = bytes.sliced(VnetHeader::kSize);
        }
        // The checksum and segmentation the header asks for are left to the
        // forwarder's side, which puts the frame on a wire; only the size
        // is this side's to check.
        if (!protocol::validateFrameRecord(frame)) {
            ++m_counters.invalidOut;
            continue;
        }
        // A frame read when the channel then refuses the full batch stays
        // in the next one, which goes out once writable() re-enables reads.
        if (!m_batch.hasRoomFor(frame.size()))
            refused = !flush();
        m_batch.append(header, frame);
    }
    if (!refused)
        refused = !flush();
    // The channel is full: let the TAP's queue hold (and, past it, drop)
    // what the sandbox sends until writable() says the channel drained.
    if (refused)
        m_readable->setEnabled(false);
}

void TapPort::onChannelReadable()
{
    if (!m_channel || m_ended)
        return;
    if (Status fed = m_decoder.feed(m_channel->readAll()); !fed) {
        end(QStringLiteral("the stream broke the frame format: %1").arg(fed.error().message),
            protocol::CloseCode::ProtocolError);
        return;
    }
    protocol::FrameRecord record;
    while (m_decoder.next(record)) {
        if (!deliver(record))
            return;
    }
}

bool TapPort::deliver(const protocol::FrameRecord &record)
{
    char head[VnetHeader::kSize];
    QByteArrayView headView;
    if (m_tap->hasVnetHeader()) {
        record.header.writeTo(head);
        headView = QByteArrayView(head, VnetHeader::kSize);
    } else if (record.header.isGso() || record.header.needsChecksum()) {
        // Without a vnet header the TAP cannot be told what is left to do
        // with the frame, and a sandbox should not get it half done.
        ++m_counters.rejectedIn;
        return true;
    }
    const Status written = m_tap->writeFrame(headView, record.frame);
    if (written) {
        ++m_counters.framesIn;
        m_counters.bytesIn += static_cast<quint64>(record.frame.size());
        return true;
    }
    const Error &error = written.error();
    // Down is the normal state between the TAP's creation and the moment
    // the sandbox brings it up after the move; full is the sandbox not
    // keeping up. Neither is the segment's end.
    if (error.is(ErrorCode::WouldBlock) || error.is(ErrorCode::LinkDown)) {
        ++m_counters.droppedIn;
        return true;
    }
    if (error.is(ErrorCode::DeviceGone)) {
        end(QStringLiteral("device gone: %1").arg(written.error().message),
            protocol::CloseCode::DeviceGone);
        return false;
    }
    // The kernel judged this one frame (its vnet header, its size): the
    // next may be fine. Said once, or a peer could flood the log.
    ++m_counters.rejectedIn;
    if (!std::exchange(m_rejectionLogged, true)) {
        qCWarning(lcAgent).noquote()
            << QStringLiteral("TAP %1 refused a frame from the stream (%2); "
                              "such frames are dropped and counted")
                   .arg(m_tap->name(), written.error().message);
    }
    return true;
}

void TapPort::stop(const QString &reason)
{
    end(reason, protocol::CloseCode::Normal);
}

void TapPort::end(const QString &reason, std::optional<protocol::CloseCode> closeWith)
{
    if (std::exchange(m_ended, true))
        return;
    // A vanished TAP polls as an error for good: watching it would spin.
    m_readable->setEnabled(false);
    logSummary(reason);
    // The peer hears first, and nothing here touches the port after the
    // signal, whose receivers may be on their way to deleting it.
    if (closeWith && m_channel)
        m_channel->close(*closeWith, reason);
    Q_EMIT ended(reason);
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
