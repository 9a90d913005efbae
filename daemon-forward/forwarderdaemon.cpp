#include "daemon-forward/forwarderdaemon.h"

#include "common/daemon/legclient.h"
#include "common/device/l2/packetsocket.h"
#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/controlmessage.h"
#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "daemon-forward/enrolleddevice.h"
#include "daemon-forward/segment/segmentport.h"
#include "daemon-forward/segment/segmenttest.h"
#include "daemon-forward/streamleg.h"
#include "daemon-forward/usb/usbdevicewatch.h"
#include "daemon-forward/usb/usbexportledger.h"
#include "daemon-forward/usb/usbipserversession.h"

#include <QFileInfo>
#include <QTimer>

namespace cloop::forward {

namespace {
daemon::DaemonConnectorOptions connectorOptions(
    const daemon::ConnectionOptions &connection, const daemon::UpgradeSettings &upgrade)
{
    daemon::DaemonConnectorOptions options;
    options.channel = release::channelName(upgrade.channel);
    options.role = protocol::PeerRole::Forwarder;
    options.endpointPath = QStringLiteral("/api/forwarders/connect");
    options.connection = connection;
    options.defaultCredentialFile = QStringLiteral("forwarder.json");
    return options;
}
} // namespace

ForwarderDaemon::ForwarderDaemon(const daemon::ConnectionOptions &connection,
    device::SysfsRoot kernel, daemon::UpgradeResponder::Options upgrade, QObject *parent)
    : QObject(parent)
    , m_connector(connectorOptions(connection, upgrade.settings))
    , m_upgrade(std::move(upgrade))
    , m_kernel(std::move(kernel))
{
    connect(&m_connector, &daemon::DaemonConnector::finished, this, &ForwarderDaemon::finished);
    connect(&m_upgrade, &daemon::UpgradeResponder::send, this,
        [this](const protocol::ControlMessage &message) {
            if (tunnel::TunnelConnection *session
                = m_connector.client() ? m_connector.client()->connection() : nullptr)
                session->sendControl(message);
        });
}

ForwarderDaemon::~ForwarderDaemon()
{
    // A USB/IP session gives its device back on the way out and needs the
    // watch for it; children would go only after the watch.
    qDeleteAll(findChildren<UsbipServerSession *>(Qt::FindDirectChildrenOnly));
}

void ForwarderDaemon::start()
{
    // A previous process that died mid-import left its device on usbip-host.
    m_exports
        = std::make_unique<UsbExportLedger>(QFileInfo(m_connector.credentialPath()).absolutePath());
    if (!m_exports->busIds().isEmpty()) {
        const UsbExportLedger::Recovery recovery = m_exports->giveBackLeftovers(m_kernel);
        for (const QString &busId : recovery.givenBack)
            qCInfo(lcForward).noquote()
                << "gave USB device" << busId << "back to its driver; a previous process left it"
                << "on usbip-host";
        for (const QString &why : recovery.leftAlone)
            qCWarning(lcForward).noquote() << "left as it is after a restart:" << why;
    }
    connect(&m_connector, &daemon::DaemonConnector::ready, this,
        [this](const protocol::Welcome &welcome) {
            if (!adoptDevice(welcome))
                return;
            qCInfo(lcForward).noquote()
                << "connected to the hub as forwarder" << welcome.id << welcome.name << "carrying"
                << (m_device ? m_device->describe() : QStringLiteral("nothing"));
            m_hubProtocol = welcome.protocol;
            tunnel::TunnelConnection *connection = m_connector.client()->connection();
            if (m_device && m_device->kind == protocol::DeviceSpec::Kind::Usb
                && (!m_usb || !(m_usb->spec() == *m_device))) {
                m_usb = std::make_unique<UsbDeviceWatch>(*m_device, m_kernel);
                connect(m_usb.get(), &UsbDeviceWatch::presenceChanged, this,
                    &ForwarderDaemon::reportDeviceState);
                if (Status watching = m_usb->start(); !watching)
                    qCWarning(lcForward).noquote()
                        << "USB devices coming and going will go unnoticed:"
                        << watching.error().message;
            }
            reportDeviceState();
            connect(connection->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
                &ForwarderDaemon::onChannelRequested);
            if (welcome.protocol >= protocol::kMinimumForUpgrade)
                m_upgrade.onConnected();
        });
    m_connector.start();
    connect(m_connector.client(), &tunnel::TunnelClient::controlReceived, this,
        [this](const protocol::ControlMessage &message) {
            if (const auto *request = std::get_if<protocol::UpgradeRequest>(&message))
                m_upgrade.onRequest(*request);
        });
    connect(m_connector.client(), &tunnel::TunnelClient::disconnected, this,
        [this](const QString &, qint64) { m_upgrade.onDisconnected(); });
}

bool ForwarderDaemon::adoptDevice(const protocol::Welcome &welcome)
{
    const QString file = m_connector.credentialPath();
    auto carried = deviceToCarry(m_connector.credential().device, welcome.device);
    if (!carried) {
        // A hub never changes a forwarder's device: this one is not the hub
        // that enrolled the forwarder, or something holding its key lies.
        m_connector.giveUp(
            QStringLiteral(
                "refusing the hub for good: %1 (recorded in %2). A hub never moves a "
                "forwarder to another device, so this is not the hub that enrolled it, or "
                "something holding its key; nothing is carried. To carry another device, "
                "enroll a forwarder for it")
                .arg(carried.error().message, file),
            daemon::kExitRefused);
        return false;
    }
    if (carried->toRecord) {
        identity::DaemonCredential credential = m_connector.credential();
        credential.device = carried->device;
        if (Status saved = m_connector.saveCredential(credential); !saved) {
            m_connector.giveUp(
                QStringLiteral(
                    "cannot record the device %1 in %2: %3; nothing is carried until it is")
                    .arg(carried->device->describe(), file, saved.error().message),
                daemon::kExitFailure);
            return false;
        }
        const QString device = carried->device->describe();
        if (m_connector.enrolledNow())
            qCInfo(lcForward).noquote()
                << QStringLiteral("enrolled for %1, recorded in %2: this forwarder "
                                  "carries that device only")
                       .arg(device, file);
        else
            qCWarning(lcForward).noquote()
                << QStringLiteral("%1 recorded no device (written by an older "
                                  "version): recorded %2 from this first welcome, "
                                  "and from now on this forwarder carries that "
                                  "device only")
                       .arg(file, device);
    }
    m_device = carried->device;
    return true;
}

void ForwarderDaemon::reportDeviceState()
{
    tunnel::TunnelConnection *connection
        = m_connector.client() ? m_connector.client()->connection() : nullptr;
    if (!connection || !m_device || m_hubProtocol < protocol::kMinimumForDeviceState)
        return;
    if (m_device->kind == protocol::DeviceSpec::Kind::Usb) {
        if (m_usb && m_hubProtocol >= protocol::kMinimumForUsb) {
            protocol::DeviceState state;
            state.usb = true;
            state.usbBusId = m_usb->busId();
            connection->sendControl(state);
        }
        return;
    }
    // The hub lends the segment with the MTU it has here.
    auto state = device::l2::InterfaceState::read(m_device->interfaceName);
    if (!state) {
        qCWarning(lcForward).noquote()
            << "cannot read" << m_device->interfaceName << ":" << state.error().message;
        return;
    }
    protocol::DeviceState report;
    report.mtu = state->mtu;
    report.up = state->up;
    report.carrier = state->running;
    connection->sendControl(report);
}

void ForwarderDaemon::onChannelRequested(tunnel::Channel *channel)
{
    const QString kind = protocol::claimedChannelKind(channel->metadata());
    if (m_device) {
        if (Status named
            = checkChannelNames(*m_device, m_usb ? m_usb->busId() : QString(), channel->metadata());
            !named) {
            qCWarning(lcForward).noquote()
                << "refused a" << kind << "channel:" << named.error().message;
            channel->refuse(named.error().message);
            return;
        }
    }
    const auto open = protocol::parseChannelOpen(channel->metadata());
    if (!open) {
        channel->refuse(QStringLiteral("this forwarder does not open that channel: %1")
                            .arg(open.error().message));
        return;
    }
    const auto *usb = std::get_if<protocol::UsbOpen>(&*open);
    const auto *segment = std::get_if<protocol::SegmentOpen>(&*open);
    const bool test = std::holds_alternative<protocol::DeviceTestOpen>(*open);
    if (!usb && !segment && !test) {
        channel->refuse(QStringLiteral("this forwarder does not open \"%1\" channels").arg(kind));
        return;
    }
    if (usb && (!m_device || m_device->kind != protocol::DeviceSpec::Kind::Usb || !m_usb)) {
        channel->refuse(
            QStringLiteral("this forwarder carries a network segment, not a USB device"));
        return;
    }
    if (!usb && (!m_device || m_device->kind != protocol::DeviceSpec::Kind::Segment)) {
        channel->refuse(segment
                ? QStringLiteral("this forwarder carries a USB device, not a segment")
                : QStringLiteral(
                    "this forwarder carries a USB device; it is tested over a usb channel"));
        return;
    }
    if (legOf(*open)) {
        // The stream comes on the leg and is taken as if it came here.
        auto *dial = makeStreamLegDial(channel, *open, m_device->describe(),
            daemon::sessionLegDialer(m_connector, protocol::kForwarderLegPath), this);
        connect(dial, &daemon::StreamLegDial::arrived, this, &ForwarderDaemon::onChannelRequested);
        dial->start();
        return;
    }
    if (usb) {
        openUsbSession(channel, *usb);
        return;
    }
    if (test) {
        channel->accept();
        qCInfo(lcForward).noquote() << "testing" << m_device->interfaceName << "for the hub";
        (new SegmentTest(m_device->interfaceName, channel, SegmentTest::Options {}, this))->start();
        return;
    }
    openSegmentStream(channel, *segment);
}

namespace {
// How often a moving stream's frames and drops are told to the hub.
constexpr std::chrono::seconds kCountersInterval { 2 };
} // namespace

std::function<void()> ForwarderDaemon::reportCounters(
    QObject *stream, std::function<protocol::DeviceCounters()> count)
{
    auto lastSent = std::make_shared<protocol::DeviceCounters>();
    auto report = [this, count = std::move(count), lastSent] {
        tunnel::TunnelConnection *connection
            = m_connector.client() ? m_connector.client()->connection() : nullptr;
        if (!connection || m_hubProtocol < protocol::kMinimumForDeviceCounters)
            return;
        const protocol::DeviceCounters counters = count();
        if (counters == *lastSent)
            return;
        *lastSent = counters;
        connection->sendControl(counters);
    };
    auto *reports = new QTimer(stream);
    reports->setInterval(kCountersInterval);
    connect(reports, &QTimer::timeout, stream, report);
    reports->start();
    return report;
}

void ForwarderDaemon::openSegmentStream(tunnel::Channel *channel, const protocol::SegmentOpen &open)
{
    const QString what = QStringLiteral("run %1 (binding %2)").arg(open.runId).arg(open.bindingId);
    auto socket = device::l2::PacketSocket::open(
        device::l2::PacketSocket::Options { m_device->interfaceName });
    if (!socket) {
        qCWarning(lcForward).noquote() << "cannot lend" << m_device->interfaceName << "to" << what
                                       << ":" << socket.error().message;
        channel->refuse(socket.error().message);
        return;
    }
    channel->accept();
    auto *port = new SegmentPort(std::move(*socket), channel, this);
    const auto report = reportCounters(port, [port, open] {
        const SegmentPort::Counters counted = port->counters();
        return protocol::DeviceCounters { open.runId, open.bindingId, qint64(counted.framesUp),
            qint64(counted.framesDown), qint64(counted.droppedUp + counted.kernelDrops),
            qint64(counted.droppedDown) };
    });
    connect(port, &SegmentPort::ended, port, [port, report] {
        report();
        port->deleteLater();
    });
    qCInfo(lcForward).noquote() << "lending" << m_device->interfaceName << "to" << what;
}

void ForwarderDaemon::openUsbSession(tunnel::Channel *channel, const protocol::UsbOpen &open)
{
    const bool test = open.purpose == protocol::UsbOpen::Purpose::Test;
    channel->accept();
    auto *session = new UsbipServerSession(channel, *m_usb,
        test ? UsbipServerSession::Purpose::Test : UsbipServerSession::Purpose::Run,
        m_exports.get(), this);
    const QString what = test
        ? QStringLiteral("a test")
        : QStringLiteral("run %1 (binding %2)").arg(open.runId).arg(open.bindingId);
    // A run's URBs, each way, as the session's counter sees them pass.
    const auto report = test ? std::function<void()>() : reportCounters(session, [session, open] {
        const device::usb::usbip::UrbCounter &urbs = session->urbs();
        return protocol::DeviceCounters { open.runId, open.bindingId, qint64(urbs.answered()),
            qint64(urbs.submitted()), 0, 0, protocol::DeviceCounters::Unit::Urbs };
    });
    connect(session, &UsbipServerSession::ended, session,
        [session, what, report](const QString &reason) {
            qCInfo(lcForward).noquote() << "USB/IP connection of" << what << "ended:" << reason;
            if (report)
                report();
            session->deleteLater();
        });
}

} // namespace cloop::forward
