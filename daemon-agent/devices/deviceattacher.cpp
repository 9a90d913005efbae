#include "daemon-agent/devices/deviceattacher.h"

#include "common/device/l2/tapdevice.h"
#include "common/tunnel/channelmultiplexer.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/devices/attachmentledger.h"
#include "daemon-agent/devices/sandboxdevicenode.h"
#include "daemon-agent/devices/tapport.h"
#include "daemon-agent/devices/usbimport.h"

#include <QFile>
#include <QScopeGuard>
#include <QTimer>

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloop::agent {

using protocol::ForwardedDevice;
using protocol::RunStart;

DeviceAttacher::DeviceAttacher(QString workRoot, device::SysfsRoot roots, QObject *parent)
    : QObject(parent)
    , m_roots(std::move(roots))
    , m_ledger(std::make_unique<AttachmentLedger>(std::move(workRoot), m_roots))
{ }

DeviceAttacher::~DeviceAttacher()
{
    for (auto &[key, attached] : m_ports) {
        QObject *holder = attached.port ? static_cast<QObject *>(attached.port) : attached.usb;
        holder->disconnect(this);
        delete holder;
    }
}

void DeviceAttacher::recoverLeftovers()
{
    const AttachmentLedger::Recovery recovery = m_ledger->recoverLeftovers();
    for (const QString &removed : recovery.removed)
        qCInfo(lcAgent).noquote() << "removed" << removed << "left by a previous agent process";
    for (const QString &skipped : recovery.skipped)
        qCWarning(lcAgent).noquote() << "left alone:" << skipped;
}

void DeviceAttacher::acceptChannel(tunnel::Channel *channel, const protocol::AgentDeviceOpen &open)
{
    const qint64 runId = open.runId;
    const qint64 bindingId = open.bindingId;
    const QString &name = open.name;
    const Key key { runId, bindingId };
    if (m_ports.count(key) != 0) {
        channel->refuse(QStringLiteral("a device channel needs a new run and binding"));
        return;
    }
    // A stream that comes back to a running sandbox: its forwarder restarted.
    const auto running = m_sandboxes.find(runId);
    std::optional<ForwardedDevice> returning;
    if (running != m_sandboxes.end()) {
        for (const ForwardedDevice &device : running->second.devices)
            if (device.bindingId == bindingId && device.kind == open.deviceKind)
                returning = device;
        if (!returning) {
            const QString why = QStringLiteral("the run's start named no such device");
            qCWarning(lcAgent).noquote()
                << QStringLiteral("run %1 does not take %2 back: %3").arg(runId).arg(name, why);
            channel->refuse(why);
            return;
        }
    }
    if (open.direct) {
        dialDirectLeg(channel, key, open);
        return;
    }
    // The stream that replaces a failed direct leg: the start waits for it.
    const bool awaited = m_relayAwaited.erase(key) != 0;
    const auto settled = qScopeGuard([this, awaited, runId] {
        if (awaited)
            Q_EMIT devicesSettled(runId);
    });
    if (awaited)
        qCInfo(lcAgent).noquote()
            << QStringLiteral("run %1 gets %2 through its hub").arg(runId).arg(name);
    if (open.deviceKind == protocol::DeviceSpec::Kind::Usb) {
        acceptUsbChannel(channel, key, name, open.busId);
        return;
    }
    if (m_paused.count(key) != 0) {
        resume(channel, key, name);
        return;
    }
    auto tap = device::l2::TapDevice::create(device::l2::TapDevice::Options {});
    if (!tap) {
        qCWarning(lcAgent).noquote() << QStringLiteral("run %1 cannot attach %2: %3")
                                            .arg(runId)
                                            .arg(name, tap.error().message);
        channel->refuse(tap.error().message);
        return;
    }
    channel->accept();
    const QString hostName = (*tap)->name();
    auto *port = new TapPort(std::move(*tap), channel, this);
    m_ports[key] = Attached { name, port, nullptr };
    watchPort(key, port);
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 has %2 on %3 (binding %4)")
                                     .arg(runId)
                                     .arg(name, hostName)
                                     .arg(bindingId);
    m_endings.erase(key);
    if (returning)
        moveIntoSandbox(key, *returning, running->second.pid);
}

void DeviceAttacher::acceptUsbChannel(
    tunnel::Channel *channel, const Key &key, const QString &name, const QString &busId)
{
    channel->accept();
    auto *usb = new UsbImport(channel, busId, m_roots, this);
    m_ports[key] = Attached { name, nullptr, usb };
    connect(usb, &UsbImport::ready, this, [this, key, usb] {
        Attachment attachment { key.first, key.second, QStringLiteral("usb"), usb->localBusId(),
            usb->nodePath(), 0 };
        attachment.vhciPort = usb->vhciPort();
        attachment.usbDeviceId = usb->deviceId();
        if (Status recorded = m_ledger->record(attachment); !recorded)
            qCWarning(lcAgent).noquote()
                << "cannot record the attachment:" << recorded.error().message;
        // Its forwarder came back while the sandbox ran.
        if (m_sandboxes.count(key.first) != 0)
            giveNodeToSandbox(key);
        Q_EMIT devicesSettled(key.first);
    });
    connect(usb, &UsbImport::ended, this, [this, key](const QString &reason) {
        drop(key, reason);
        Q_EMIT devicesSettled(key.first);
    });
    usb->start();
    qCInfo(lcAgent).noquote() << QStringLiteral(
        "run %1 imports %2 (USB bus id %3 on the forwarder, binding %4)")
                                     .arg(key.first)
                                     .arg(name, busId)
                                     .arg(key.second);
}

void DeviceAttacher::dialDirectLeg(
    tunnel::Channel *handle, const Key &key, const protocol::AgentDeviceOpen &open)
{
    if (!m_dialer) {
        handle->refuse(QString(protocol::kDirectLegUnreachable)
            + QStringLiteral("this agent dials no other hub member"));
        return;
    }
    if (const auto dialling = m_dialling.find(key);
        dialling != m_dialling.end() && dialling->second) {
        handle->refuse(QStringLiteral("a device channel needs a new run and binding"));
        return;
    }
    // The leg carries this device's stream only: the same opening, without
    // a leg of its own.
    const auto isItsStream = [open](const QJsonObject &metadata) {
        const auto stream = protocol::AgentDeviceOpen::fromMetadata(metadata);
        return stream && !stream->direct && stream->runId == open.runId
            && stream->bindingId == open.bindingId && stream->deviceKind == open.deviceKind
            && stream->busId == open.busId;
    };
    auto *dial = new daemon::StreamLegDial(handle, *open.direct,
        QStringLiteral("run %1's %2 (binding %3)")
            .arg(open.runId)
            .arg(open.name)
            .arg(open.bindingId),
        isItsStream, m_dialer, daemon::StreamLegDial::kDialBound, this);
    m_dialling[key] = dial;
    connect(dial, &daemon::StreamLegDial::arrived, this, [this, key](tunnel::Channel *stream) {
        m_dialling.erase(key);
        const auto streamOpen = protocol::AgentDeviceOpen::fromMetadata(stream->metadata());
        if (streamOpen)
            acceptChannel(stream, *streamOpen);
        else
            stream->refuse(streamOpen.error().message);
        Q_EMIT devicesSettled(key.first);
    });
    connect(dial, &daemon::StreamLegDial::failed, this, [this, key](const QString &) {
        m_dialling.erase(key);
        m_relayAwaited[key] = QDeadlineTimer(kRelayAwaited);
        QTimer::singleShot(kRelayAwaited, this, [this, key] {
            const auto awaited = m_relayAwaited.find(key);
            if (awaited == m_relayAwaited.end() || !awaited->second.hasExpired())
                return;
            m_relayAwaited.erase(awaited);
            m_endings[key] = QStringLiteral("its stream never came after its direct leg failed");
            Q_EMIT devicesSettled(key.first);
        });
    });
    connect(dial, &daemon::StreamLegDial::ended, this, [this, key, dial] {
        const auto dialling = m_dialling.find(key);
        if (dialling != m_dialling.end() && dialling->second == dial) {
            m_dialling.erase(dialling);
            m_endings[key] = QStringLiteral("the hub ended its stream before it came");
            Q_EMIT devicesSettled(key.first);
        }
    });
    dial->start();
}

bool DeviceAttacher::isPending(const RunStart &run) const
{
    for (const ForwardedDevice &device : run.devices) {
        const Key key { run.runId, device.bindingId };
        if (const auto dialling = m_dialling.find(key);
            dialling != m_dialling.end() && dialling->second)
            return true;
        if (const auto awaited = m_relayAwaited.find(key);
            awaited != m_relayAwaited.end() && !awaited->second.hasExpired())
            return true;
        const auto found = m_ports.find(Key { run.runId, device.bindingId });
        if (found != m_ports.end() && found->second.usb
            && found->second.usb->state() != UsbImport::State::Ready
            && !found->second.usb->hasEnded())
            return true;
    }
    return false;
}

Status DeviceAttacher::checkReady(const RunStart &run) const
{
    for (const ForwardedDevice &device : run.devices) {
        const auto found = m_ports.find(Key { run.runId, device.bindingId });
        if (found == m_ports.end()) {
            const auto ending = m_endings.find(Key { run.runId, device.bindingId });
            return Error::make(QStringLiteral("device_unavailable"),
                QStringLiteral("%1 (binding %2) could not be attached on this machine: %3")
                    .arg(device.name)
                    .arg(device.bindingId)
                    .arg(ending != m_endings.end()
                            ? ending->second
                            : QStringLiteral("its stream never came; see the agent's log")));
        }
        if (device.kind == protocol::DeviceSpec::Kind::Usb) {
            if (!found->second.usb || found->second.usb->state() != UsbImport::State::Ready)
                return Error::make(QStringLiteral("device_unavailable"),
                    QStringLiteral("%1 (binding %2) is not attached yet")
                        .arg(device.name)
                        .arg(device.bindingId));
            continue;
        }
        if (Status valid = device::l2::validateInterfaceName(device.target); !valid)
            return valid.error();
        if (!device.address.isEmpty()) {
            if (Status valid = device::l2::validateInterfaceAddress(device.address); !valid)
                return valid.error();
        }
    }
    return {};
}

QString DeviceAttacher::environmentValue(const RunStart &run) const
{
    QStringList entries;
    for (const ForwardedDevice &device : run.devices) {
        QString where = device.target;
        if (device.kind == protocol::DeviceSpec::Kind::Usb) {
            const auto found = m_ports.find(Key { run.runId, device.bindingId });
            where = found != m_ports.end() && found->second.usb ? found->second.usb->nodePath()
                                                                : QString();
        }
        entries.append(QStringLiteral("%1=%2:%3")
                           .arg(device.name, protocol::deviceKindName(device.kind), where));
    }
    return entries.join(QLatin1Char(','));
}

Result<QList<RunSpec::DeviceNode>> DeviceAttacher::deviceNodes(
    const RunStart &run, const QString &user) const
{
    QList<RunSpec::DeviceNode> nodes;
    for (const ForwardedDevice &device : run.devices) {
        const auto found = m_ports.find(Key { run.runId, device.bindingId });
        if (device.kind != protocol::DeviceSpec::Kind::Usb || found == m_ports.end()
            || !found->second.usb)
            continue;
        const QString node = found->second.usb->nodePath();
        const QString hostPath = m_roots.path(node);
        // The workload runs as its own user; the node exists only while this
        // run has the device, so it may own it.
        const QStringList ids = user.split(QLatin1Char(':'));
        if (ids.size() == 2) {
            if (::chown(QFile::encodeName(hostPath).constData(), ids[0].toUInt(), ids[1].toUInt())
                != 0)
                return Error::make(QStringLiteral("device_unavailable"),
                    QStringLiteral("%1: cannot hand %2 to the workload's user: %3")
                        .arg(device.name, node, QString::fromLocal8Bit(std::strerror(errno))));
        }
        nodes.append(RunSpec::DeviceNode { hostPath, node });
    }
    return nodes;
}

void DeviceAttacher::sandboxStarted(const RunStart &run, qint64 pid, const QString &user)
{
    Sandbox &sandbox = m_sandboxes[run.runId] = Sandbox { pid, run.devices, user, {}, {} };
    for (const ForwardedDevice &device : run.devices) {
        const Key key { run.runId, device.bindingId };
        auto found = m_ports.find(key);
        if (found == m_ports.end())
            continue; // its stream ended before the sandbox ran
        if (found->second.usb) {
            const QString node = found->second.usb->nodePath();
            sandbox.nodes[device.bindingId] = { node };
            sandbox.firstNodes[device.bindingId] = node;
        } else
            moveIntoSandbox(key, device, pid);
    }
}

void DeviceAttacher::giveNodeToSandbox(const Key &key)
{
    auto found = m_ports.find(key);
    auto running = m_sandboxes.find(key.first);
    if (found == m_ports.end() || !found->second.usb || running == m_sandboxes.end())
        return;
    const QString node = found->second.usb->nodePath();
    const SandboxDeviceNode sandbox(m_roots, running->second.pid);
    if (Status placed = sandbox.place(node, running->second.user); !placed) {
        qCWarning(lcAgent).noquote() << QStringLiteral("run %1 could not get %2 back: %3")
                                            .arg(key.first)
                                            .arg(found->second.name, placed.error().message);
        drop(key,
            QStringLiteral("could not give it to the sandbox: %1").arg(placed.error().message));
        return;
    }
    QStringList placed { node };
    // Where the workload first found it: a path it kept still opens the
    // device, though the kernel numbered it anew.
    const QString first = running->second.firstNodes.value(key.second);
    if (!first.isEmpty() && first != node) {
        if (Status kept = sandbox.place(node, running->second.user, first); kept)
            placed.append(first);
        else
            qCWarning(lcAgent).noquote()
                << QStringLiteral("run %1 has %2 only as %3: %4")
                       .arg(key.first)
                       .arg(found->second.name, node, kept.error().message);
    }
    running->second.nodes[key.second] = placed;
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 has %2 back as %3")
                                     .arg(key.first)
                                     .arg(found->second.name, placed.join(QStringLiteral(" and ")));
}

void DeviceAttacher::moveIntoSandbox(const Key &key, const ForwardedDevice &device, qint64 pid)
{
    auto found = m_ports.find(key);
    if (found == m_ports.end() || !found->second.port)
        return;
    device::l2::TapDevice &tap = found->second.port->tap();
    const QString hostName = tap.name();
    const std::optional<QString> address
        = device.address.isEmpty() ? std::nullopt : std::optional(device.address);
    if (Status moved = tap.moveInto(pid, device.target, address, device.mtu); !moved) {
        qCWarning(lcAgent).noquote() << QStringLiteral("run %1 could not get %2: %3")
                                            .arg(key.first)
                                            .arg(device.name, moved.error().message);
        drop(key,
            QStringLiteral("could not move it into the sandbox: %1").arg(moved.error().message));
        return;
    }
    const Attachment attachment { key.first, device.bindingId,
        protocol::deviceKindName(device.kind), hostName, device.target, pid };
    if (Status recorded = m_ledger->record(attachment); !recorded)
        qCWarning(lcAgent).noquote() << "cannot record the attachment:" << recorded.error().message;
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 sees %2 as %3%4")
                                     .arg(key.first)
                                     .arg(device.name, device.target,
                                         device.address.isEmpty()
                                             ? QString()
                                             : QLatin1Char(' ') + device.address);
}

void DeviceAttacher::watchPort(const Key &key, TapPort *port)
{
    connect(port, &TapPort::ended, this, [this, key, port](const QString &reason) {
        if (mayPause(key, *port))
            pause(key, reason);
        else
            drop(key, reason);
    });
}

bool DeviceAttacher::mayPause(const Key &key, const TapPort &port) const
{
    const auto found = m_ports.find(key);
    return m_streamsResume && port.endedByLostLink() && m_sandboxes.count(key.first) != 0
        && found != m_ports.end() && found->second.port == &port && port.tap().isMoved();
}

void DeviceAttacher::pause(const Key &key, const QString &reason)
{
    auto found = m_ports.find(key);
    if (found == m_ports.end() || !found->second.port)
        return;
    TapPort *port = found->second.port;
    const QString name = found->second.name;
    m_ports.erase(found);
    port->disconnect(this);
    std::unique_ptr<device::l2::TapDevice> tap = port->takeTap();
    port->deleteLater();
    // The attachment record stays: the TAP is still in the sandbox.
    qCInfo(lcAgent).noquote() << QStringLiteral(
        "run %1 keeps %2 in its sandbox while its stream is away: %3")
                                     .arg(key.first)
                                     .arg(name, reason);
    m_paused[key] = Paused { name, std::move(tap) };
}

void DeviceAttacher::resume(tunnel::Channel *channel, const Key &key, const QString &name)
{
    auto paused = m_paused.find(key);
    Q_ASSERT(paused != m_paused.end());
    std::unique_ptr<device::l2::TapDevice> tap = std::move(paused->second.tap);
    m_paused.erase(paused);
    channel->accept();
    auto *port = new TapPort(std::move(tap), channel, this);
    m_ports[key] = Attached { name, port, nullptr };
    watchPort(key, port);
    m_endings.erase(key);
    qCInfo(lcAgent).noquote() << QStringLiteral(
        "run %1 has %2 back on the same interface (binding %3)")
                                     .arg(key.first)
                                     .arg(name)
                                     .arg(key.second);
}

void DeviceAttacher::release(qint64 runId, qint64 bindingId, const QString &reason)
{
    const Key key { runId, bindingId };
    if (m_ports.count(key) != 0) {
        drop(key, reason);
        return;
    }
    auto paused = m_paused.find(key);
    if (paused == m_paused.end())
        return;
    const QString name = paused->second.name;
    // The TAP goes with its descriptor, from the sandbox too.
    m_paused.erase(paused);
    reportLost(key, name, reason);
}

QList<std::pair<qint64, qint64>> DeviceAttacher::pausedKeys() const
{
    QList<Key> keys;
    for (const auto &[key, paused] : m_paused)
        keys.append(key);
    return keys;
}

void DeviceAttacher::forgetAttachment(const Key &key)
{
    if (Status forgotten = m_ledger->forget(key.first, key.second); !forgotten)
        qCWarning(lcAgent).noquote()
            << "cannot update the attachment record:" << forgotten.error().message;
}

void DeviceAttacher::runEnded(qint64 runId)
{
    QList<Key> pausedKeys;
    for (const auto &[key, paused] : m_paused) {
        if (key.first == runId)
            pausedKeys.append(key);
    }
    for (const Key &key : pausedKeys) {
        m_paused.erase(key);
        forgetAttachment(key);
    }
    QList<Key> keys;
    for (const auto &[key, attached] : m_ports) {
        if (key.first == runId)
            keys.append(key);
    }
    for (const Key &key : keys)
        drop(key, QStringLiteral("the run ended"));
    QList<QPointer<daemon::StreamLegDial>> dials;
    for (const auto &[key, dial] : m_dialling) {
        if (key.first == runId)
            dials.append(dial);
    }
    std::erase_if(m_dialling, [runId](const auto &entry) { return entry.first.first == runId; });
    std::erase_if(
        m_relayAwaited, [runId](const auto &entry) { return entry.first.first == runId; });
    for (daemon::StreamLegDial *dial : dials)
        delete dial;
    m_sandboxes.erase(runId);
    std::erase_if(m_endings, [runId](const auto &entry) { return entry.first.first == runId; });
}

void DeviceAttacher::drop(const Key &key, const QString &reason)
{
    auto found = m_ports.find(key);
    if (found == m_ports.end())
        return;
    const Attached attached = found->second;
    m_ports.erase(found);
    if (attached.port) {
        attached.port->disconnect(this);
        if (!attached.port->hasEnded())
            attached.port->stop(reason);
        // The TAP goes with its port, wherever it was moved.
        attached.port->deleteLater();
    } else {
        // The sandbox keeps no node of a device that went: the kernel may
        // give its number to another one.
        if (auto running = m_sandboxes.find(key.first); running != m_sandboxes.end()) {
            const QStringList nodes = running->second.nodes.take(key.second);
            for (const QString &node : nodes) {
                if (Status removed = SandboxDeviceNode(m_roots, running->second.pid).remove(node);
                    !removed)
                    qCWarning(lcAgent).noquote() << removed.error().message;
            }
        }
        attached.usb->disconnect(this);
        // Frees the vhci port; the node goes with the device.
        if (!attached.usb->hasEnded())
            attached.usb->stop(reason);
        attached.usb->deleteLater();
    }
    reportLost(key, attached.name, reason);
}

void DeviceAttacher::reportLost(const Key &key, const QString &name, const QString &reason)
{
    m_endings[key] = reason;
    forgetAttachment(key);
    qCInfo(lcAgent).noquote()
        << QStringLiteral("run %1 lost %2: %3").arg(key.first).arg(name, reason);
    Q_EMIT detached(key.first, name, reason);
}

} // namespace cloop::agent
