#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/result.h"
#include "common/protocol/agentcapabilities.h"

#include <QObject>

namespace cloop::agent {

using protocol::AgentCapabilities;

struct AgentDaemonOptions
{
    daemon::ConnectionOptions connection;
    QString workRoot; // ~/.cloop/work by default; kept in agent.json at enrollment
    AgentCapabilities capabilities; // detected at start
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

    Status prepare() { return m_connector.prepare(); }
    void start();
    void stop() { m_connector.stop(); }

    // The work root in force: the one saved with the credential unless the
    // operator gave another.
    QString workRoot() const;

Q_SIGNALS:
    void finished(int exitCode);

private:
    AgentDaemonOptions m_options;
    daemon::DaemonConnector m_connector;
};

} // namespace cloop::agent
