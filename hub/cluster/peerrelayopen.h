#pragma once

#include "common/protocol/channelopen.h"
#include "common/result.h"

#include <QJsonObject>
#include <QLatin1StringView>

namespace cloop::hub {

// The "kind" of a channel one member opens on its link to another.
inline constexpr QLatin1StringView kPeerRelayKind { "peer.relay" };

// What a member asks of the member holding a forwarder's tunnel: open this
// channel at that forwarder and join it to mine.
//
//     {"kind": "peer.relay", "forwarder_id": 12, "open": {"kind": "usb", ...}}
//
// "open" is the forwarder's own opening (common/protocol/channelopen.h),
// and only of a kind a hub opens to a forwarder (segment, usb,
// device-test). It is read as that opening and written back as the
// protocol writes it, so the holder passes on nothing it does not
// understand. Fields beside these three are ignored, as in every opening
// on the wire: a member started with newer software may add one while an
// older one still holds the tunnel.
struct PeerRelayOpen
{
    qint64 forwarderId = 0;
    QJsonObject open;

    static PeerRelayOpen of(qint64 forwarderId, const protocol::ChannelOpen &open);
    // Refuses, with a message for the member that asked: another kind, a
    // forwarder id that is missing or not a positive integer, an "open"
    // that is not an object or not an opening a forwarder takes.
    static Result<PeerRelayOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const PeerRelayOpen &, const PeerRelayOpen &) = default;
};

} // namespace cloop::hub
