#include "hub/server/devicestreams.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "hub/domain/eventbus.h"
#include "hub/server/daemongateway.h"

#include <algorithm>

namespace cloop::hub {

using protocol::CloseCode;

DeviceStreams::DeviceStreams(
    DaemonGateway &forwarders, DaemonGateway &executors, EventBus &events, QObject *parent)
    : QObject(parent)
    , m_forwarders(forwarders)
    , m_executors(executors)
    , m_events(events)
{ }

DeviceStreams::~DeviceStreams()
{
    // The daemons see their streams end with the hub.
    const auto keys = [this] {
        QList<Key> out;
        for (const auto &[key, stream] : m_streams)
            out.append(key);
        return out;
    }();
    for (const Key &key : keys)
        finish(key, QStringLiteral("the hub is stopping"));
}

Status DeviceStreams::open(
    const RunRecord &run, qint64 executorId, const QList<PlannedDevice> &devices)
{
    tunnel::TunnelConnection *agent = m_executors.session(executorId);
    if (!agent && !devices.isEmpty())
        return Error::make(QStringLiteral("executor_offline"),
            QStringLiteral("executor %1 went away").arg(executorId));
    for (const PlannedDevice &device : devices) {
        tunnel::TunnelConnection *forwarder = m_forwarders.session(device.forwarder.id);
        if (!forwarder) {
            detachRun(run.id, QStringLiteral("forwarder %1 went away").arg(device.forwarder.id));
            return Error::make(QStringLiteral("forwarder_offline"),
                QStringLiteral("forwarder %1 (%2) went away while run %3 was dispatched")
                    .arg(device.forwarder.id)
                    .arg(device.forwarder.name)
                    .arg(run.id));
        }
        const bool usb = device.device.kind == protocol::DeviceSpec::Kind::Usb;
        const protocol::ChannelOpen toForwarder = usb
            ? protocol::ChannelOpen { protocol::UsbOpen {
                protocol::UsbOpen::Purpose::Run, run.id, device.binding.id, {} } }
            : protocol::ChannelOpen { protocol::SegmentOpen { run.id, device.binding.id, {} } };
        const protocol::AgentDeviceOpen toAgent { run.id, device.binding.id, device.device.name,
            device.device.kind, usb ? device.device.busId : QString() };
        auto forwarderSide = forwarder->channels()->openChannel(toForwarder);
        auto agentSide = forwarderSide ? agent->channels()->openChannel(toAgent)
                                       : Result<tunnel::Channel *>(forwarderSide.error());
        if (!forwarderSide || !agentSide) {
            if (forwarderSide)
                (*forwarderSide)
                    ->close(
                        CloseCode::Refused, QStringLiteral("the agent's side could not be opened"));
            const Error error = forwarderSide ? agentSide.error() : forwarderSide.error();
            detachRun(run.id, error.message);
            return error;
        }
        const Key key { run.id, device.binding.id };
        Stream &stream = m_streams[key];
        stream = Stream { run.id, run.projectId, device.binding.id, device.forwarder.id, executorId,
            device.device.name, *forwarderSide, *agentSide, nullptr };
        for (tunnel::Channel *side : { *forwarderSide, *agentSide }) {
            connect(side, &tunnel::Channel::opened, this, [this, key] { joinIfReady(key); });
            // Before the join, a side that ends takes the stream with it.
            connect(side, &tunnel::Channel::closed, this,
                [this, key](CloseCode, const QString &reason) {
                    auto found = m_streams.find(key);
                    if (found != m_streams.end() && !found->second.splice)
                        finish(key,
                            reason.isEmpty() ? QStringLiteral("a side of the stream closed")
                                             : reason);
                });
        }
        qCInfo(lcHub).noquote() << "run" << run.id << "gets" << device.device.name
                                << "from forwarder" << device.forwarder.id << "on binding"
                                << device.binding.id;
    }
    return {};
}

void DeviceStreams::joinIfReady(const Key &key)
{
    auto found = m_streams.find(key);
    if (found == m_streams.end())
        return;
    Stream &stream = found->second;
    tunnel::Channel *forwarderSide = stream.forwarderSide.data();
    tunnel::Channel *agentSide = stream.agentSide.data();
    if (stream.splice || !forwarderSide || !agentSide
        || forwarderSide->state() != tunnel::Channel::State::Open
        || agentSide->state() != tunnel::Channel::State::Open)
        return;
    stream.splice = new tunnel::ChannelSplice(forwarderSide, agentSide, this);
    connect(stream.splice, &tunnel::ChannelSplice::ended, this,
        [this, key](CloseCode, const QString &reason) { finish(key, reason); });
    m_events.publish(HubEvent { QString(api::hubeventname::kDeviceAttached),
        { { QStringLiteral("run_id"), stream.runId },
            { QStringLiteral("binding_id"), stream.bindingId },
            { QStringLiteral("forwarder_id"), stream.forwarderId },
            { QStringLiteral("executor_id"), stream.executorId },
            { QStringLiteral("device"), stream.deviceName } },
        stream.projectId });
}

std::map<qint64, DeviceStreams::Relayed> DeviceStreams::relayedByBinding() const
{
    std::map<qint64, Relayed> totals = m_relayedByEnded;
    for (const auto &[key, stream] : m_streams) {
        // The splice joins the forwarder's side (A) to the agent's (B).
        if (const tunnel::ChannelSplice *splice = stream.splice.data()) {
            Relayed &relayed = totals[stream.bindingId];
            relayed.toAgent += splice->bytesAToB();
            relayed.toForwarder += splice->bytesBToA();
        }
    }
    return totals;
}

void DeviceStreams::finish(const Key &key, const QString &cause)
{
    auto found = m_streams.find(key);
    if (found == m_streams.end())
        return;
    Stream stream = found->second;
    m_streams.erase(found);
    if (tunnel::ChannelSplice *splice = stream.splice.data()) {
        splice->disconnect(this);
        splice->end(CloseCode::Normal, cause);
        Relayed &relayed = m_relayedByEnded[stream.bindingId];
        relayed.toAgent += splice->bytesAToB();
        relayed.toForwarder += splice->bytesBToA();
        splice->deleteLater();
    } else {
        for (tunnel::Channel *side : { stream.forwarderSide.data(), stream.agentSide.data() }) {
            if (side && side->state() != tunnel::Channel::State::Closed) {
                side->disconnect(this);
                side->close(CloseCode::Refused, cause);
            }
        }
    }
    qCInfo(lcHub).noquote() << "run" << stream.runId << "detached" << stream.deviceName
                            << "(binding" << stream.bindingId << "):" << cause;
    Q_EMIT streamEnded(stream.forwarderId);
    m_events.publish(HubEvent { QString(api::hubeventname::kDeviceDetached),
        { { QStringLiteral("run_id"), stream.runId },
            { QStringLiteral("binding_id"), stream.bindingId },
            { QStringLiteral("forwarder_id"), stream.forwarderId },
            { QStringLiteral("executor_id"), stream.executorId },
            { QStringLiteral("device"), stream.deviceName }, { QStringLiteral("reason"), cause } },
        stream.projectId });
}

bool DeviceStreams::holdsForwarder(qint64 forwarderId) const
{
    return std::any_of(m_streams.cbegin(), m_streams.cend(),
        [forwarderId](const auto &entry) { return entry.second.forwarderId == forwarderId; });
}

void DeviceStreams::detachRun(qint64 runId, const QString &cause)
{
    detachWhere([runId](const Key &key) { return key.first == runId; }, cause);
}

void DeviceStreams::detachBinding(qint64 bindingId, const QString &cause)
{
    detachWhere([bindingId](const Key &key) { return key.second == bindingId; }, cause);
}

void DeviceStreams::detachWhere(
    const std::function<bool(const Key &)> &matches, const QString &cause)
{
    // Collected first: finishing a stream erases it from the map.
    QList<Key> keys;
    for (const auto &[key, stream] : m_streams) {
        if (matches(key))
            keys.append(key);
    }
    for (const Key &key : keys)
        finish(key, cause);
}

} // namespace cloop::hub
