#pragma once

#include "common/protocol/controlmessage.h"

#include <QString>

#include <optional>

namespace cloop::hub {

class DaemonGateway;
class SessionHolders;
struct HubIdentity;

// Where a daemon's session is in the hub cluster: on this member, on
// another live one, or nowhere (offline).
struct SessionPlace
{
    bool here = false;
    std::optional<QString> member; // the holder's name; none: offline

    bool connected() const { return member.has_value(); }
};

// `holders` null: a hub that is no cluster member yet knows its own only.
SessionPlace placeOfSession(const DaemonGateway &gateway, const SessionHolders *holders,
    const HubIdentity &identity, protocol::PeerRole role, qint64 daemonId);

} // namespace cloop::hub
