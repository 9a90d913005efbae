#pragma once

#include "common/protocol/channelopen.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "hub/edge/firstmessagewait.h"

#include <QLatin1StringView>

#include <variant>

namespace cloop::hub::edge {

inline constexpr QLatin1StringView kForwarderEndpoint { "/api/forwarders/connect" };
inline constexpr QLatin1StringView kExecutorEndpoint { "/api/executors/connect" };
inline constexpr QLatin1StringView kExecutorDirectLegEndpoint = protocol::kDirectLegPath;
inline constexpr QLatin1StringView kForwarderLegEndpoint = protocol::kForwarderLegPath;
inline constexpr QLatin1StringView kEventsEndpoint { "/api/events" };

QLatin1StringView endpointFor(protocol::PeerRole role);

// The first message on a daemon endpoint, checked before anything is
// looked up: a hello or a redeem, of the endpoint's role, of a protocol
// this hub speaks. Anything else (binary, not JSON, another type) is an
// error that ends the connection.
using DaemonGreeting = std::variant<protocol::Hello, protocol::Redeem>;
Result<DaemonGreeting> parseDaemonGreeting(
    const FirstMessage &message, protocol::PeerRole endpointRole);

// The first message on the event stream: {"type": "subscribe", "token": …}.
// Returns the token.
Result<QString> parseSubscription(const FirstMessage &message);

} // namespace cloop::hub::edge
