#pragma once

#include "hub/server/daemondirectory.h"
#include "hub/server/daemongateway.h"
#include "hub/server/deviceupgrades.h"
#include "hub/server/forwarderframes.h"
#include "hub/server/forwarderreach.h"
#include "hub/server/forwarderstates.h"
#include "hub/storage/auditlog.h"

namespace cloop::hub {

class HubCore;

// The two daemon endpoints of a hub, each with the directory it asks, what
// the connected forwarders last said about their devices, and where each
// device's upgrade stands.
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
    // What forwarders say of their streams' frames and drops.
    const ForwarderFrames &forwarderFrames() const { return m_forwarderFrames; }
    void announcePins(const QStringList &pins)
    {
        m_forwarders.announcePins(pins);
        m_executors.announcePins(pins);
    }
    // The daemon URLs of the cluster's live members (DaemonGateway::announceHubs).
    void announceHubs(const QList<QUrl> &hubs)
    {
        m_forwarders.announceHubs(hubs);
        m_executors.announceHubs(hubs);
    }
    const ForwarderStates &forwarderStates() const { return m_forwarderStates; }
    // Every forwarder of the cluster, wherever its session is.
    ForwarderReach &forwarderReach() { return m_forwarderReach; }
    const ForwarderReach &forwarderReach() const { return m_forwarderReach; }
    AuditLog &audit() { return m_audit; }
    DeviceUpgrades &forwarderUpgrades() { return m_forwarderUpgrades; }
    DeviceUpgrades &executorUpgrades() { return m_executorUpgrades; }

private:
    ForwarderDirectory m_forwarderDirectory;
    ExecutorDirectory m_executorDirectory;
    DaemonGateway m_forwarders;
    DaemonGateway m_executors;
    ForwarderStates m_forwarderStates { m_forwarders };
    ForwarderFrames m_forwarderFrames { m_forwarders };
    ForwarderReach m_forwarderReach { m_forwarders, m_forwarderStates };
    AuditLog m_audit;
    DeviceUpgrades m_forwarderUpgrades { protocol::PeerRole::Forwarder, m_forwarders, m_audit };
    DeviceUpgrades m_executorUpgrades { protocol::PeerRole::Executor, m_executors, m_audit };
};

} // namespace cloop::hub
