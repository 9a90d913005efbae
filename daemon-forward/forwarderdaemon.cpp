#include "daemon-forward/forwarderdaemon.h"

#include "common/logging.h"

namespace cloop::forward {

namespace {
daemon::DaemonConnectorOptions connectorOptions(const ForwarderDaemonOptions &options)
{
    daemon::DaemonConnectorOptions connector;
    connector.role = protocol::PeerRole::Forwarder;
    connector.endpointPath = QStringLiteral("/api/forwarders/connect");
    connector.credentialPath = options.credentialPath.isEmpty()
            ? identity::CredentialFile::defaultPath(QStringLiteral("forwarder.json"))
            : options.credentialPath;
    connector.bundle = options.bundle;
    connector.tokenFile = options.tokenFile;
    connector.caFile = options.caFile;
    connector.insecurePlaintext = options.insecurePlaintext;
    return connector;
}
} // namespace

ForwarderDaemon::ForwarderDaemon(const ForwarderDaemonOptions &options, QObject *parent)
    : QObject(parent), m_connector(connectorOptions(options))
{
    connect(&m_connector, &daemon::DaemonConnector::finished, this, &ForwarderDaemon::finished);
}

void ForwarderDaemon::start()
{
    connect(&m_connector, &daemon::DaemonConnector::ready, this, [](const protocol::Welcome &welcome) {
        qCInfo(lcForward).noquote() << "connected to the hub as forwarder" << welcome.id << welcome.name << "carrying"
                                    << (welcome.device ? welcome.device->describe() : QStringLiteral("nothing"));
    });
    m_connector.start();
}

} // namespace cloop::forward
