#include "hub/cluster/peerrelayopen.h"

#include "common/protocol/fieldreader.h"

#include <QJsonValue>

namespace cloop::hub {

namespace {

inline constexpr QLatin1StringView kKind { "kind" };
inline constexpr QLatin1StringView kForwarderId { "forwarder_id" };
inline constexpr QLatin1StringView kOpen { "open" };
inline constexpr QLatin1StringView kDirect { "direct" };
inline constexpr QLatin1StringView kTicket { "ticket" };
inline constexpr QLatin1StringView kExecutorId { "executor_id" };
inline constexpr QLatin1StringView kAgent { "agent" };

bool isForwarderOpening(const protocol::ChannelOpen &open)
{
    return std::holds_alternative<protocol::SegmentOpen>(open)
        || std::holds_alternative<protocol::UsbOpen>(open)
        || std::holds_alternative<protocol::DeviceTestOpen>(open);
}

// The run and binding a forwarder's opening streams for; none for a Test.
std::optional<std::pair<qint64, qint64>> runStreamOf(const protocol::ChannelOpen &open)
{
    if (const auto *segment = std::get_if<protocol::SegmentOpen>(&open))
        return std::pair { segment->runId, segment->bindingId };
    if (const auto *usb = std::get_if<protocol::UsbOpen>(&open);
        usb && usb->purpose == protocol::UsbOpen::Purpose::Run)
        return std::pair { usb->runId, usb->bindingId };
    return std::nullopt;
}

Result<PeerDirectLeg> readDirectLeg(
    const QJsonValue &value, const protocol::ChannelOpen &forwarderOpen)
{
    const auto fail = [](const QString &problem) {
        return protocol::protocolError(
            QStringLiteral("%1 channel: \"direct\": %2").arg(kPeerRelayKind, problem));
    };
    if (!value.isObject())
        return fail(QStringLiteral("must be an object"));
    protocol::FieldReader read(
        value.toObject(), QStringLiteral("%1 channel's direct leg").arg(kPeerRelayKind));
    PeerDirectLeg leg;
    leg.ticket = read.string(kTicket, 64);
    leg.executorId = read.integer(kExecutorId, 1, protocol::kMaxWireId);
    if (read.error())
        return *read.error();
    if (!protocol::isValidStreamTicket(leg.ticket))
        return fail(QStringLiteral("\"ticket\" is not a stream ticket"));
    const QJsonValue agent = value.toObject().value(kAgent);
    if (!agent.isObject())
        return fail(QStringLiteral("\"agent\" must be an object"));
    auto agentOpen = protocol::AgentDeviceOpen::fromMetadata(agent.toObject());
    if (!agentOpen)
        return fail(QStringLiteral("\"agent\": %1").arg(agentOpen.error().message));
    if (agentOpen->direct)
        return fail(QStringLiteral("\"agent\" names a direct leg of its own"));
    const auto stream = runStreamOf(forwarderOpen);
    if (!stream)
        return fail(QStringLiteral("only a run's device stream has a direct leg"));
    if (*stream != std::pair { agentOpen->runId, agentOpen->bindingId })
        return fail(QStringLiteral("\"agent\" is for another run or binding than \"open\""));
    const bool usb = std::holds_alternative<protocol::UsbOpen>(forwarderOpen);
    if (usb != (agentOpen->deviceKind == protocol::DeviceSpec::Kind::Usb))
        return fail(QStringLiteral("\"agent\" is for another kind of device than \"open\""));
    leg.agentOpen = std::move(*agentOpen);
    return leg;
}

} // namespace

PeerRelayOpen PeerRelayOpen::of(
    qint64 forwarderId, const protocol::ChannelOpen &open, std::optional<PeerDirectLeg> direct)
{
    return PeerRelayOpen { forwarderId, protocol::serializeChannelOpen(open), std::move(direct) };
}

Result<PeerRelayOpen> PeerRelayOpen::fromMetadata(const QJsonObject &metadata)
{
    const QJsonValue kind = metadata.value(kKind);
    if (!kind.isString() || kind.toString() != kPeerRelayKind)
        return protocol::protocolError(kind.isString()
                ? QStringLiteral("a %1 channel was expected, not \"%2\"")
                      .arg(kPeerRelayKind, kind.toString().left(40))
                : QStringLiteral("a %1 channel was expected; the opening has no \"kind\"")
                      .arg(kPeerRelayKind));

    protocol::FieldReader read(metadata, QStringLiteral("%1 channel").arg(kPeerRelayKind));
    PeerRelayOpen relay;
    relay.forwarderId = read.integer(kForwarderId, 1, protocol::kMaxWireId);
    if (read.error())
        return *read.error();
    const QJsonValue open = metadata.value(kOpen);
    if (!open.isObject())
        return protocol::protocolError(
            QStringLiteral("%1 channel: \"open\" must be an object").arg(kPeerRelayKind));
    const auto parsed = protocol::parseChannelOpen(open.toObject());
    if (!parsed)
        return protocol::protocolError(
            QStringLiteral("%1 channel: \"open\": %2").arg(kPeerRelayKind, parsed.error().message));
    if (!isForwarderOpening(*parsed))
        return protocol::protocolError(
            QStringLiteral("%1 channel: \"open\": a forwarder is never opened for \"%2\"")
                .arg(kPeerRelayKind, protocol::channelOpenKind(*parsed)));
    relay.open = protocol::serializeChannelOpen(*parsed);
    if (metadata.contains(kDirect)) {
        auto direct = readDirectLeg(metadata.value(kDirect), *parsed);
        if (!direct)
            return direct.error();
        relay.direct = std::move(*direct);
    }
    return relay;
}

QJsonObject PeerRelayOpen::toMetadata() const
{
    QJsonObject metadata {
        { kKind, kPeerRelayKind },
        { kForwarderId, forwarderId },
        { kOpen, open },
    };
    if (direct)
        metadata.insert(kDirect,
            QJsonObject { { kTicket, direct->ticket }, { kExecutorId, direct->executorId },
                { kAgent, direct->agentOpen.toMetadata() } });
    return metadata;
}

} // namespace cloop::hub
