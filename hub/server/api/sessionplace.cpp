#include "hub/server/api/sessionplace.h"

#include "hub/cluster/sessionholders.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/daemongateway.h"

namespace cloop::hub {

SessionPlace placeOfSession(const DaemonGateway &gateway, const SessionHolders *holders,
    const HubIdentity &identity, protocol::PeerRole role, qint64 daemonId)
{
    if (gateway.isConnected(daemonId))
        return SessionPlace { true, identity.member() };
    if (!holders)
        return {};
    return SessionPlace { false, holders->otherHolderOf(role, daemonId) };
}

} // namespace cloop::hub
