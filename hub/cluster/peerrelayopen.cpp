#include "hub/cluster/peerrelayopen.h"

#include "common/protocol/fieldreader.h"

#include <QJsonValue>

namespace cloop::hub {

namespace {

inline constexpr QLatin1StringView kKind { "kind" };
inline constexpr QLatin1StringView kForwarderId { "forwarder_id" };
inline constexpr QLatin1StringView kOpen { "open" };

bool isForwarderOpening(const protocol::ChannelOpen &open)
{
    return std::holds_alternative<protocol::SegmentOpen>(open)
        || std::holds_alternative<protocol::UsbOpen>(open)
        || std::holds_alternative<protocol::DeviceTestOpen>(open);
}

} // namespace

PeerRelayOpen PeerRelayOpen::of(qint64 forwarderId, const protocol::ChannelOpen &open)
{
    return PeerRelayOpen { forwarderId, protocol::serializeChannelOpen(open) };
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
    return relay;
}

QJsonObject PeerRelayOpen::toMetadata() const
{
    return QJsonObject {
        { kKind, kPeerRelayKind },
        { kForwarderId, forwarderId },
        { kOpen, open },
    };
}

} // namespace cloop::hub
