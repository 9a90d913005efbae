#include "daemon-forward/streamleg.h"

namespace cloop::forward {

namespace {
// What ties a stream to its handle.
struct RunStream
{
    QLatin1StringView kind;
    qint64 runId = 0;
    qint64 bindingId = 0;
    std::optional<protocol::DirectLeg> leg;
};

std::optional<RunStream> runStreamOf(const protocol::ChannelOpen &open)
{
    if (const auto *segment = std::get_if<protocol::SegmentOpen>(&open))
        return RunStream { protocol::channelkind::kSegment, segment->runId, segment->bindingId,
            segment->leg };
    if (const auto *usb = std::get_if<protocol::UsbOpen>(&open);
        usb && usb->purpose == protocol::UsbOpen::Purpose::Run)
        return RunStream { protocol::channelkind::kUsb, usb->runId, usb->bindingId, usb->leg };
    return std::nullopt;
}
} // namespace

std::optional<protocol::DirectLeg> legOf(const protocol::ChannelOpen &open)
{
    const auto stream = runStreamOf(open);
    return stream ? stream->leg : std::nullopt;
}

bool isStreamOf(const protocol::ChannelOpen &handle, const QJsonObject &metadata)
{
    const auto handled = runStreamOf(handle);
    const auto opening = protocol::parseChannelOpen(metadata);
    const auto stream = opening ? runStreamOf(*opening) : std::nullopt;
    return handled && stream && !stream->leg && stream->kind == handled->kind
        && stream->runId == handled->runId && stream->bindingId == handled->bindingId;
}

daemon::StreamLegDial *makeStreamLegDial(tunnel::Channel *handle, const protocol::ChannelOpen &open,
    const QString &device, const daemon::StreamLegDial::Dialer &dialer, QObject *parent)
{
    const auto handled = runStreamOf(open);
    Q_ASSERT(handled && handled->leg);
    return new daemon::StreamLegDial(
        handle, *handled->leg,
        QStringLiteral("run %1's %2 (binding %3)")
            .arg(handled->runId)
            .arg(device)
            .arg(handled->bindingId),
        [open](const QJsonObject &metadata) { return isStreamOf(open, metadata); }, dialer,
        daemon::StreamLegDial::kDialBound, parent);
}

} // namespace cloop::forward
