#pragma once

#include "common/protocol/channelopen.h"
#include "common/result.h"

#include <QJsonObject>
#include <QLatin1StringView>

#include <optional>

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
//
// With "direct", the asking member's agent comes for the bytes itself: the
// holder opens the forwarder's channel and keeps it until that agent
// (authenticated as "executor_id") dials it with "ticket", then opens
// "agent" (the agent's own opening, of the same run and binding) on the
// agent's connection and joins the two. The peer channel carries no bytes
// then; it is the stream's handle, and either ending ends the other.
//
//     "direct": {"ticket": "…43 characters…", "executor_id": 7,
//                "agent": {"kind": "device", "run_id": 3, ...}}
struct PeerDirectLeg
{
    QString ticket;
    qint64 executorId = 0;
    protocol::AgentDeviceOpen agentOpen;

    friend bool operator==(const PeerDirectLeg &, const PeerDirectLeg &) = default;
};

struct PeerRelayOpen
{
    qint64 forwarderId = 0;
    QJsonObject open;
    std::optional<PeerDirectLeg> direct;

    static PeerRelayOpen of(qint64 forwarderId, const protocol::ChannelOpen &open,
        std::optional<PeerDirectLeg> direct = std::nullopt);
    // Refuses, with a message for the member that asked: another kind, a
    // forwarder id that is missing or not a positive integer, an "open"
    // that is not an object or not an opening a forwarder takes, a "direct"
    // whose ticket, executor or agent's opening is malformed, or that is
    // not for a run's device stream of the same run and binding.
    static Result<PeerRelayOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const PeerRelayOpen &, const PeerRelayOpen &) = default;
};

} // namespace cloop::hub
