#include "daemon-agent/devices/deviceattacher.h"

#include "common/device/l2/tapdevice.h"
#include "common/tunnel/channelmultiplexer.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/devices/attachmentledger.h"
#include "daemon-agent/devices/tapport.h"

namespace cloop::agent {

using protocol::ForwardedDevice;
using protocol::RunStart;

DeviceAttacher::DeviceAttacher(QString workRoot, QObject *parent)
    : QObject(parent), m_ledger(std::make_unique<AttachmentLedger>(std::move(workRoot)))
{
}

DeviceAttacher::~DeviceAttacher()
{
    for (auto &[key, attached] : m_ports) {
        attached.port->disconnect(this);
        delete attached.port;
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

void DeviceAttacher::acceptChannel(tunnel::Channel *channel)
{
    const QJsonObject meta = channel->metadata();
    const qint64 runId = meta.value(QLatin1String("run_id")).toInteger();
    const qint64 bindingId = meta.value(QLatin1String("binding_id")).toInteger();
    const QString name = meta.value(QLatin1String("name")).toString().left(64);
    const Key key{runId, bindingId};
    if (runId <= 0 || bindingId <= 0 || m_ports.count(key) != 0) {
        channel->refuse(QStringLiteral("a device channel needs a new run and binding"));
        return;
    }
    auto tap = device::l2::TapDevice::create(device::l2::TapDevice::Options{});
    if (!tap) {
        qCWarning(lcAgent).noquote() << QStringLiteral("run %1 cannot attach %2: %3").arg(runId).arg(name, tap.error().message);
        channel->refuse(tap.error().message);
        return;
    }
    channel->accept();
    const QString hostName = (*tap)->name();
    auto *port = new TapPort(std::move(*tap), channel, this);
    m_ports[key] = Attached{name, port};
    connect(port, &TapPort::ended, this, [this, key](const QString &reason) { drop(key, reason); });
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 has %2 on %3 (binding %4)").arg(runId).arg(name, hostName).arg(bindingId);
}

Status DeviceAttacher::checkReady(const RunStart &run) const
{
    for (const ForwardedDevice &device : run.devices) {
        if (device.kind != QLatin1String("l2"))
            return Error::make(QStringLiteral("device_unavailable"),
                               QStringLiteral("%1: this agent cannot attach %2 devices").arg(device.name, device.kind));
        if (m_ports.count(Key{run.runId, device.bindingId}) == 0)
            return Error::make(QStringLiteral("device_unavailable"),
                               QStringLiteral("%1 (binding %2) could not be attached on this machine; see the agent's log")
                                       .arg(device.name)
                                       .arg(device.bindingId));
        if (Status valid = device::l2::validateInterfaceName(device.target); !valid)
            return valid.error();
        if (!device.address.isEmpty()) {
            if (Status valid = device::l2::validateInterfaceAddress(device.address); !valid)
                return valid.error();
        }
    }
    return {};
}

QString DeviceAttacher::environmentValue(const RunStart &run)
{
    QStringList entries;
    for (const ForwardedDevice &device : run.devices)
        entries.append(QStringLiteral("%1=%2:%3").arg(device.name, device.kind, device.target));
    return entries.join(QLatin1Char(','));
}

void DeviceAttacher::sandboxStarted(const RunStart &run, qint64 pid)
{
    for (const ForwardedDevice &device : run.devices) {
        auto found = m_ports.find(Key{run.runId, device.bindingId});
        if (found == m_ports.end())
            continue; // its stream ended before the sandbox ran
        device::l2::TapDevice &tap = found->second.port->tap();
        const QString hostName = tap.name();
        const std::optional<QString> address = device.address.isEmpty() ? std::nullopt : std::optional(device.address);
        if (Status moved = tap.moveInto(pid, device.target, address, device.mtu); !moved) {
            qCWarning(lcAgent).noquote()
                    << QStringLiteral("run %1 could not get %2: %3").arg(run.runId).arg(device.name, moved.error().message);
            drop(found->first, QStringLiteral("could not move it into the sandbox: %1").arg(moved.error().message));
            continue;
        }
        const Attachment attachment{run.runId, device.bindingId, device.kind, hostName, device.target, pid};
        if (Status recorded = m_ledger->record(attachment); !recorded)
            qCWarning(lcAgent).noquote() << "cannot record the attachment:" << recorded.error().message;
        qCInfo(lcAgent).noquote() << QStringLiteral("run %1 sees %2 as %3%4")
                                             .arg(run.runId)
                                             .arg(device.name, device.target,
                                                  device.address.isEmpty() ? QString() : QLatin1Char(' ') + device.address);
    }
}

void DeviceAttacher::runEnded(qint64 runId)
{
    QList<Key> keys;
    for (const auto &[key, attached] : m_ports) {
        if (key.first == runId)
            keys.append(key);
    }
    for (const Key &key : keys)
        drop(key, QStringLiteral("the run ended"));
}

void DeviceAttacher::drop(const Key &key, const QString &reason)
{
    auto found = m_ports.find(key);
    if (found == m_ports.end())
        return;
    const Attached attached = found->second;
    m_ports.erase(found);
    attached.port->disconnect(this);
    if (!attached.port->hasEnded())
        attached.port->stop(reason);
    // The TAP goes with its port, wherever it was moved.
    attached.port->deleteLater();
    if (Status forgotten = m_ledger->forget(key.first, key.second); !forgotten)
        qCWarning(lcAgent).noquote() << "cannot update the attachment record:" << forgotten.error().message;
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 lost %2: %3").arg(key.first).arg(attached.name, reason);
    Q_EMIT detached(key.first, attached.name, reason);
}

} // namespace cloop::agent
