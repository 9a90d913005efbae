#include "daemon-agent/agentdaemon.h"

#include "common/logging.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/workroot/workroot.h"

namespace cloop::agent {

namespace {
constexpr QLatin1StringView kWorkRootKey{"work_root"};

daemon::DaemonConnectorOptions connectorOptions(const AgentDaemonOptions &options)
{
    daemon::DaemonConnectorOptions connector;
    connector.role = protocol::PeerRole::Executor;
    connector.endpointPath = QStringLiteral("/api/executors/connect");
    connector.connection = options.connection;
    connector.defaultCredentialFile = QStringLiteral("agent.json");
    connector.extra = {{kWorkRootKey, options.workRoot.isEmpty() ? WorkRoot::defaultPath() : options.workRoot}};
    connector.capabilities = options.capabilities.toJson();
    return connector;
}
} // namespace

AgentDaemon::AgentDaemon(const AgentDaemonOptions &options, QObject *parent)
    : QObject(parent), m_options(options), m_connector(connectorOptions(options))
{
    connect(&m_connector, &daemon::DaemonConnector::finished, this, &AgentDaemon::finished);
}

QString AgentDaemon::workRoot() const
{
    if (!m_options.workRoot.isEmpty())
        return m_options.workRoot;
    const QString saved = m_connector.credential().extra.value(kWorkRootKey).toString();
    return saved.isEmpty() ? WorkRoot::defaultPath() : saved;
}

void AgentDaemon::start()
{
    connect(&m_connector, &daemon::DaemonConnector::ready, this, [this](const protocol::Welcome &welcome) {
        qCInfo(lcAgent).noquote() << "connected to the hub as executor" << welcome.id << welcome.name << "-"
                                  << m_options.capabilities.summary() << "- work root" << workRoot();
    });
    m_connector.start();
}

} // namespace cloop::agent
