#include "daemon-forward/forwarderdaemon.h"

#include "common/logging.h"

namespace cloop::forward {

namespace {
daemon::DaemonConnectorOptions connectorOptions(const daemon::ConnectionOptions &connection)
{
    daemon::DaemonConnectorOptions options;
    options.role = protocol::PeerRole::Forwarder;
    options.endpointPath = QStringLiteral("/api/forwarders/connect");
    options.connection = connection;
    options.defaultCredentialFile = QStringLiteral("forwarder.json");
    return options;
}
} // namespace

ForwarderDaemon::ForwarderDaemon(const daemon::ConnectionOptions &connection, QObject *parent)
    : QObject(parent), m_connector(connectorOptions(connection))
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
