#pragma once

#include "common/result.h"

#include <QJsonObject>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::hub {

class DaemonGateway;
class HubCore;

// What another member of the cluster may open on a forwarder this member
// holds: the Test button's stream, or the device stream of a run whose
// binding lends this forwarder now. The asking member decided who may
// have it; the holder checks again against the shared records, so a peer
// that is wrong or late (the binding just ended) gets nothing.
class PeerForwarderAccess
{
public:
    PeerForwarderAccess(HubCore &core, DaemonGateway &forwarders)
        : m_core(core)
        , m_forwarders(forwarders)
    { }

    // `open` is the ChannelOpen's JSON for the forwarder.
    Result<tunnel::Channel *> open(qint64 forwarderId, const QJsonObject &open);

private:
    Status checkRunStream(qint64 forwarderId, qint64 runId, qint64 bindingId);

    HubCore &m_core;
    DaemonGateway &m_forwarders;
};

} // namespace cloop::hub
