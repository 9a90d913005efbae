#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/daemon/upgraderesponder.h"
#include "common/device/sysfsroot.h"
#include "common/protocol/agentcapabilities.h"
#include "common/result.h"
#include "daemon-agent/harness/harnesshome.h"

#include <QList>
#include <QObject>

namespace cloop::agent {

using protocol::AgentCapabilities;
class DeviceAttacher;
class RunSupervisor;

struct AgentDaemonOptions
{
    daemon::ConnectionOptions connection;
    QString workRoot; // ~/.cloop/work by default; kept in agent.json at enrollment
    qsizetype retainBytes = 1024 * 1024; // per run, while the hub has not stored it
    AgentCapabilities capabilities; // detected at start
    device::SysfsRoot kernel; // this machine's, or a test program's stand-in
    daemon::UpgradeResponder::Options upgrade;
    HarnessInstalls harnesses; // the table the capabilities' harnesses come from
};

// `cloop executor agent` / `cloop-agent`: enrolls with a bundle once, then
// keeps one outbound tunnel to the hub and tells it, in every hello, what
// this machine can run.
class AgentDaemon final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AgentDaemon)

public:
    explicit AgentDaemon(const AgentDaemonOptions &options, QObject *parent = nullptr);

    // Reads the credential or the bundle, and refuses to start where a
    // workload could reach the agent's own files.
    Status prepare();
    void start();
    void stop() { m_connector.stop(); }

    // The work root in force: the one saved with the credential unless the
    // operator gave another.
    QString workRoot() const;

Q_SIGNALS:
    void finished(int exitCode);

private:
    void send(const protocol::ControlMessage &message);
    // After an install: the home's new folders go on PATH, the harnesses
    // are looked for again and the hub hears of what changed.
    void refreshHarnesses();

    AgentDaemonOptions m_options;
    daemon::DaemonConnector m_connector;
    RunSupervisor *m_supervisor = nullptr;
    daemon::UpgradeResponder *m_upgrade = nullptr;
    DeviceAttacher *m_devices = nullptr; // container mode only
    // Reports made while the hub was out of reach, sent once it is back.
    QList<protocol::ControlMessage> m_unsent;
    int m_hubProtocol = 0; // of the connection that is up, 0 while none is
};

} // namespace cloop::agent
