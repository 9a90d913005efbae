#include "daemon-forward/forwarderdaemon.h"

#include "common/device/l2/packetsocket.h"
#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "daemon-forward/segment/segmentport.h"
#include "daemon-forward/segment/segmenttest.h"

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
    connect(&m_connector, &daemon::DaemonConnector::ready, this, [this](const protocol::Welcome &welcome) {
        qCInfo(lcForward).noquote() << "connected to the hub as forwarder" << welcome.id << welcome.name << "carrying"
                                    << (welcome.device ? welcome.device->describe() : QStringLiteral("nothing"));
        m_device = welcome.device;
        tunnel::TunnelConnection *connection = m_connector.client()->connection();
        // The hub lends the segment with the MTU it has here.
        if (m_device && m_device->kind == protocol::DeviceSpec::Kind::Segment
            && welcome.protocol >= protocol::kMinimumForDeviceState) {
            if (auto state = device::l2::InterfaceState::read(m_device->interfaceName); state)
                connection->sendControl(protocol::DeviceState{state->mtu, state->up, state->running});
            else
                qCWarning(lcForward).noquote() << "cannot read" << m_device->interfaceName << ":" << state.error().message;
        }
        connect(connection->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
                &ForwarderDaemon::onChannelRequested);
    });
    m_connector.start();
}

void ForwarderDaemon::onChannelRequested(tunnel::Channel *channel)
{
    const QString kind = channel->metadata().value(QLatin1String("kind")).toString();
    if (kind != QLatin1String("device-test") && kind != QLatin1String("segment")) {
        channel->refuse(QStringLiteral("this forwarder does not open \"%1\" channels").arg(kind.left(40)));
        return;
    }
    if (!m_device || m_device->kind != protocol::DeviceSpec::Kind::Segment) {
        channel->refuse(kind == QLatin1String("segment")
                                ? QStringLiteral("this forwarder carries a USB device, not a segment")
                                : QStringLiteral("this forwarder carries a USB device; testing it is not available in "
                                                 "this version"));
        return;
    }
    if (kind == QLatin1String("device-test")) {
        channel->accept();
        qCInfo(lcForward).noquote() << "testing" << m_device->interfaceName << "for the hub";
        (new SegmentTest(m_device->interfaceName, channel, SegmentTest::Options{}, this))->start();
        return;
    }
    openSegmentStream(channel);
}

void ForwarderDaemon::openSegmentStream(tunnel::Channel *channel)
{
    const QJsonObject meta = channel->metadata();
    const QString what = QStringLiteral("run %1 (binding %2)")
                                 .arg(meta.value(QLatin1String("run_id")).toInteger())
                                 .arg(meta.value(QLatin1String("binding_id")).toInteger());
    auto socket = device::l2::PacketSocket::open(device::l2::PacketSocket::Options{m_device->interfaceName});
    if (!socket) {
        qCWarning(lcForward).noquote() << "cannot lend" << m_device->interfaceName << "to" << what << ":"
                                       << socket.error().message;
        channel->refuse(socket.error().message);
        return;
    }
    channel->accept();
    auto *port = new SegmentPort(std::move(*socket), channel, this);
    connect(port, &SegmentPort::ended, port, &QObject::deleteLater);
    qCInfo(lcForward).noquote() << "lending" << m_device->interfaceName << "to" << what;
}

} // namespace cloop::forward
