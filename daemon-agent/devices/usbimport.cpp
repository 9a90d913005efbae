#include "daemon-agent/devices/usbimport.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/device/usb/usbsysfs.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsocketpump.h"
#include "daemon-agent/agentlogging.h"

#include <QCoreApplication>
#include <QThreadPool>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cloop::agent {

namespace usbip = device::usb::usbip;

namespace {
// The kernel shows an enumerated device's bus id in the port's status line;
// there is no uevent for the port itself, so the line is read again.
constexpr int kPollIntervalMs = 20;
} // namespace

UsbImport::UsbImport(
    tunnel::Channel *channel, QString busId, device::SysfsRoot roots, QObject *parent)
    : QObject(parent)
    , m_channel(channel)
    , m_busId(std::move(busId))
    , m_roots(roots)
    , m_vhci(std::move(roots))
{
    m_poll.setInterval(kPollIntervalMs);
    connect(&m_poll, &QTimer::timeout, this, &UsbImport::checkEnumerated);
    connect(channel, &tunnel::Channel::readyRead, this, &UsbImport::onReadable);
    connect(channel, &tunnel::Channel::closed, this,
        [this](protocol::CloseCode code, const QString &reason) {
            if (m_pump)
                return; // the pump reports it
            const QString why = tunnel::describeClose(code, reason);
            fail(m_refusal.isEmpty()
                    ? QStringLiteral("the stream ended before the import: %1").arg(why)
                    : QStringLiteral("the forwarder refused the import (%1): %2")
                          .arg(m_refusal, why));
        });
}

UsbImport::~UsbImport()
{
    if (m_state != State::Ended)
        stop(QStringLiteral("the agent is stopping"));
}

void UsbImport::start()
{
    auto request = usbip::encodeImportRequest(m_busId.toLatin1());
    if (!request) {
        fail(request.error().message);
        return;
    }
    if (!m_vhci.isLoaded()) {
        fail(QStringLiteral("the kernel's vhci-hcd driver is not loaded (modprobe vhci-hcd)"));
        return;
    }
    m_channel->write(*request);
    // The whole attachment is bounded, the forwarder's answer included.
    m_enumerating.start();
    m_poll.start();
}

void UsbImport::onReadable()
{
    if (m_state != State::Requesting || !m_channel || !m_refusal.isEmpty())
        return;
    // Only the reply: what follows it belongs to the kernel.
    m_reply += m_channel->read(usbip::kImportReplySize - m_reply.size());
    auto decoded = usbip::decodeImportReply(m_reply);
    if (!decoded) {
        fail(QStringLiteral("the forwarder's import reply is malformed: %1")
                 .arg(decoded.error().message));
        return;
    }
    if (!*decoded)
        return;
    const usbip::ImportReply reply = (*decoded)->message;
    if (reply.status != 0 || !reply.device) {
        // The close that follows says why in words.
        m_refusal = usbip::describeStatus(reply.status);
        return;
    }
    if (reply.device->busId != m_busId.toLatin1()) {
        fail(QStringLiteral("the forwarder answered for bus id %1, not %2")
                 .arg(QString::fromLatin1(reply.device->busId), m_busId));
        return;
    }
    attach(reply.device->deviceId(), reply.device->speed);
}

void UsbImport::attach(quint32 deviceId, quint32 speed)
{
    int ends[2] = { -1, -1 };
    // SOCK_STREAM: vhci_hcd refuses any other socket type.
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
        fail(QStringLiteral("socketpair: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
        return;
    }
    util::Fd ours(ends[0]);
    util::Fd kernels(ends[1]);
    if (Status kept = m_vhci.keepHostDriversOff(); !kept)
        qCWarning(lcAgent).noquote()
            << "this machine's own drivers may take imported USB devices:" << kept.error().message;
    auto port = m_vhci.attach(kernels.get(), deviceId, speed);
    if (!port) {
        fail(port.error().message);
        return;
    }
    // The kernel holds its own reference now.
    kernels.reset();
    m_port = *port;
    m_deviceId = deviceId;
    m_state = State::Enumerating;
    // vhci starts enumerating at once: the bytes must flow from now on.
    m_pump = new tunnel::ChannelSocketPump(std::move(ours), m_channel, this);
    connect(m_pump, &tunnel::ChannelSocketPump::ended, this,
        [this](const QString &reason) { fail(reason); });
    qCInfo(lcAgent).noquote() << "USB device" << m_busId << "attached on vhci port" << m_port
                              << "devid" << QString::number(deviceId, 16) << "speed" << speed;
}

void UsbImport::checkEnumerated()
{
    if (m_state == State::Requesting && m_enumerating.elapsed() > kEnumerationTimeoutMs) {
        fail(QStringLiteral("the forwarder did not answer the import within %1 s")
                 .arg(kEnumerationTimeoutMs / 1000));
        return;
    }
    if (m_state != State::Enumerating)
        return;
    const auto port = m_vhci.port(m_port);
    if (!port || (!port->isUsed() && !port->isAttaching())) {
        fail(QStringLiteral("vhci_hcd let go of port %1 while the device enumerated").arg(m_port));
        return;
    }
    // busnum, devnum and the node take no lock of the device.
    const auto node = port->isUsed() && port->localBusId != QLatin1String("0-0")
        ? device::usb::deviceNodePath(m_roots, port->localBusId)
        : std::nullopt;
    if (node && m_roots.exists(*node) && !m_probing) {
        // The node comes before the kernel has chosen a configuration and
        // made the interfaces, which are what the sandbox's program claims.
        // Reading the configuration takes the device's lock, which the
        // kernel holds while it waits for URBs this thread pumps: the look
        // happens on another thread, or the two would wait on each other.
        m_probing = true;
        const QString localBusId = port->localBusId;
        const bool settle = m_nodeSeen.isValid() && m_nodeSeen.elapsed() > kConfigurationWaitMs;
        if (!m_nodeSeen.isValid())
            m_nodeSeen.start();
        QPointer<UsbImport> self(this);
        QThreadPool::globalInstance()->start(
            [self, roots = m_roots, localBusId, settle, path = *node] {
                const bool configured = isConfigured(roots, localBusId);
                QString problem;
                // Claimable by the sandbox's program; still probed by no driver here.
                if (configured || settle) {
                    if (Status authorized = VhciController(roots).authorizeInterfaces(localBusId);
                        !authorized)
                        problem = authorized.error().message;
                }
                QMetaObject::invokeMethod(
                    qApp,
                    [self, localBusId, path, configured, settle, problem] {
                        if (self)
                            self->probed(localBusId, path, configured || settle, problem);
                    },
                    Qt::QueuedConnection);
            });
    }
    if (m_enumerating.elapsed() > kEnumerationTimeoutMs)
        fail(QStringLiteral("the USB device did not enumerate within %1 s")
                 .arg(kEnumerationTimeoutMs / 1000));
}

void UsbImport::probed(
    const QString &localBusId, const QString &node, bool settled, const QString &problem)
{
    m_probing = false;
    if (m_state != State::Enumerating || !settled)
        return;
    if (!problem.isEmpty())
        qCWarning(lcAgent).noquote()
            << "cannot authorize the interfaces of" << localBusId << ":" << problem;
    m_poll.stop();
    m_localBusId = localBusId;
    m_nodePath = node;
    m_state = State::Ready;
    qCInfo(lcAgent).noquote() << "USB device" << m_busId << "is" << m_localBusId << "here, node"
                              << m_nodePath
                              << QStringLiteral("(%1 ms)").arg(m_enumerating.elapsed());
    Q_EMIT ready();
}

bool UsbImport::isConfigured(const device::SysfsRoot &roots, const QString &localBusId)
{
    const QString dir = QStringLiteral("/sys/bus/usb/devices/") + localBusId;
    const QString configuration
        = roots.readAttribute(dir + QLatin1String("/bConfigurationValue")).value_or(QString());
    if (configuration.isEmpty() || configuration == QLatin1String("0"))
        return false;
    bool ok = false;
    const int interfaces = roots.readAttribute(dir + QLatin1String("/bNumInterfaces"))
                               .value_or(QString())
                               .toInt(&ok);
    if (!ok)
        return false;
    return device::usb::listInterfaces(roots, localBusId).size() >= interfaces;
}

void UsbImport::stop(const QString &reason)
{
    fail(reason);
}

void UsbImport::fail(const QString &reason)
{
    if (m_state == State::Ended)
        return;
    m_state = State::Ended;
    m_poll.stop();
    // Stopped from here while the connection lives: detach first, while the
    // port is surely this import's; the kernel closes its side and frees
    // the port at once. Once the connection has ended, the kernel frees the
    // port on its own (it saw the end), and a detach would race it.
    const bool connectionLives = m_pump && !m_pump->hasEnded();
    if (m_port >= 0 && connectionLives) {
        const auto port = m_vhci.port(m_port);
        if (port && !port->isFree() && port->deviceId == m_deviceId) {
            Status detached = m_vhci.detach(m_port);
            const auto after = detached ? std::nullopt : m_vhci.port(m_port);
            if (!detached && !(after && after->isFree()))
                qCWarning(lcAgent).noquote()
                    << "cannot detach vhci port" << m_port << ":" << detached.error().message;
        }
    }
    if (m_pump) {
        m_pump->disconnect(this);
        if (!m_pump->hasEnded())
            m_pump->stop(reason);
    } else if (tunnel::Channel *channel = m_channel.data();
               channel && channel->state() != tunnel::Channel::State::Closed) {
        channel->close(protocol::CloseCode::Normal, reason);
    }
    if (m_channel)
        m_channel->disconnect(this);
    qCInfo(lcAgent).noquote() << "USB device" << m_busId << "detached:" << reason;
    Q_EMIT ended(reason);
}

} // namespace cloop::agent
