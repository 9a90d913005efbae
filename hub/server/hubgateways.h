#pragma once

#include "hub/server/daemondirectory.h"
#include "hub/server/daemongateway.h"
#include "hub/server/forwarderstates.h"

namespace cloop::hub {

class HubCore;

// The two daemon endpoints of a hub, each with the directory it asks, and
// what the connected forwarders last said about their devices.
class HubGateways
{
    Q_DISABLE_COPY_MOVE(HubGateways)

public:
    HubGateways(HubCore &core, const QString &software, DaemonGateway::Options options = {});

    DaemonGateway &forwarders() { return m_forwarders; }
    DaemonGateway &executors() { return m_executors; }
    const DaemonGateway &forwarders() const { return m_forwarders; }
    const DaemonGateway &executors() const { return m_executors; }
    ForwarderStates &forwarderStates() { return m_forwarderStates; }
    void announcePins(const QStringList &pins)
    {
        m_forwarders.announcePins(pins);
        m_executors.announcePins(pins);
    }
    const ForwarderStates &forwarderStates() const { return m_forwarderStates; }

private:
    ForwarderDirectory m_forwarderDirectory;
    ExecutorDirectory m_executorDirectory;
    DaemonGateway m_forwarders;
    DaemonGateway m_executors;
    ForwarderStates m_forwarderStates { m_forwarders };
};

} // namespace cloop::hub
