#pragma once

#include "hub/server/daemondirectory.h"
#include "hub/server/daemongateway.h"

namespace cloop::hub {

class HubCore;

// The two daemon endpoints of a hub, each with the directory it asks.
class HubGateways
{
    Q_DISABLE_COPY_MOVE(HubGateways)

public:
    HubGateways(HubCore &core, const QString &software, DaemonGateway::Options options = {});

    DaemonGateway &forwarders() { return m_forwarders; }
    DaemonGateway &executors() { return m_executors; }
    const DaemonGateway &forwarders() const { return m_forwarders; }
    const DaemonGateway &executors() const { return m_executors; }

private:
    ForwarderDirectory m_forwarderDirectory;
    ExecutorDirectory m_executorDirectory;
    DaemonGateway m_forwarders;
    DaemonGateway m_executors;
};

} // namespace cloop::hub
