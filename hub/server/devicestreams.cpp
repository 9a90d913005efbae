#include "hub/server/devicestreams.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "hub/domain/eventbus.h"
#include "hub/server/daemongateway.h"
#include "hub/server/forwarderreach.h"

#include <algorithm>

namespace cloop::hub {

using protocol::CloseCode;

DeviceStreams::DeviceStreams(
    ForwarderReach &forwarders, DaemonGateway &executors, EventBus &events, QObject *parent)
    : QObject(parent)
    , m_forwarders(forwarders)
    , m_executors(executors)
    , m_events(events)
{
    // Wherever in the cluster the forwarder connected again.
    connect(&m_events, &EventBus::published, this, [this](const HubEvent &event) {
        if (event.name == api::hubeventname::kForwarderConnected)
            giveBack(event.data.value(QLatin1String("id")).toInteger());
    });
}

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
        finish(key, QStringLiteral("the hub is stopping"), true);
}

Status DeviceStreams::open(
    const RunRecord &run, qint64 executorId, const QList<PlannedDevice> &devices)
{
    if (!m_executors.session(executorId) && !devices.isEmpty())
        return Error::make(QStringLiteral("executor_offline"),
            QStringLiteral("executor %1 went away").arg(executorId));
    for (const PlannedDevice &device : devices) {
        if (!m_forwarders.isReachable(device.forwarder.id)) {
            detachRun(run.id, QStringLiteral("forwarder %1 went away").arg(device.forwarder.id));
            return Error::make(QStringLiteral("forwarder_offline"),
                QStringLiteral("forwarder %1 (%2) went away while run %3 was dispatched")
                    .arg(device.forwarder.id)
                    .arg(device.forwarder.name)
                    .arg(run.id));
        }
        const Key key { run.id, device.binding.id };
        const Lent &lent = m_lent[key] = Lent { run.projectId, executorId, device };
        if (Status opened = openStream(key, lent); !opened) {
            detachRun(run.id, opened.error().message);
            return opened;
        }
    }
    return {};
}

Status DeviceStreams::openStream(const Key &key, const Lent &lent)
{
    tunnel::TunnelConnection *agent = m_executors.session(lent.executorId);
    if (!agent)
        return Error::make(QStringLiteral("daemon_offline"),
            QStringLiteral("executor %1 is not connected").arg(lent.executorId));
    const auto [runId, bindingId] = key;
    const protocol::ForwardedDevice &device = lent.device.device;
    const bool usb = device.kind == protocol::DeviceSpec::Kind::Usb;
    const protocol::ChannelOpen toForwarder = usb
        ? protocol::ChannelOpen { protocol::UsbOpen {
            protocol::UsbOpen::Purpose::Run, runId, bindingId, {} } }
        : protocol::ChannelOpen { protocol::SegmentOpen { runId, bindingId, {} } };
    const protocol::AgentDeviceOpen toAgent { runId, bindingId, device.name, device.kind,
        usb ? device.busId : QString() };
    auto forwarderSide = m_forwarders.openChannel(lent.device.forwarder.id, toForwarder);
    auto agentSide = forwarderSide ? agent->channels()->openChannel(toAgent)
                                   : Result<tunnel::Channel *>(forwarderSide.error());
    if (!forwarderSide || !agentSide) {
        if (forwarderSide)
            (*forwarderSide)
                ->close(CloseCode::Refused, QStringLiteral("the agent's side could not be opened"));
        return forwarderSide ? agentSide.error() : forwarderSide.error();
    }
    m_streams[key] = Stream { runId, lent.projectId, bindingId, lent.device.forwarder.id,
        lent.executorId, device.name, *forwarderSide, *agentSide, nullptr };
    for (tunnel::Channel *side : { *forwarderSide, *agentSide }) {
        connect(side, &tunnel::Channel::opened, this, [this, key] { joinIfReady(key); });
        // Before the join, a side that ends takes the stream with it.
        connect(
            side, &tunnel::Channel::closed, this, [this, key](CloseCode, const QString &reason) {
                auto found = m_streams.find(key);
                if (found != m_streams.end() && !found->second.splice)
                    finish(key,
                        reason.isEmpty() ? QStringLiteral("a side of the stream closed") : reason);
            });
    }
    qCInfo(lcHub).noquote() << "run" << runId << "gets" << device.name << "from forwarder"
                            << lent.device.forwarder.id << "on binding" << bindingId;
    return {};
}

void DeviceStreams::giveBack(qint64 forwarderId)
{
    QList<Key> keys;
    for (const auto &[key, lent] : m_lent)
        if (lent.device.forwarder.id == forwarderId && m_streams.count(key) == 0)
            keys.append(key);
    for (const Key &key : keys) {
        const Lent lent = m_lent.at(key);
        if (Status opened = openStream(key, lent); !opened)
            qCWarning(lcHub).noquote()
                << "run" << key.first << "cannot get" << lent.device.device.name
                << "back:" << opened.error().message;
        else
            qCInfo(lcHub).noquote() << "run" << key.first << "gets" << lent.device.device.name
                                    << "back: forwarder" << forwarderId << "returned";
    }
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

void DeviceStreams::finish(const Key &key, const QString &cause, bool forGood)
{
    if (forGood) {
        const auto lent = m_lent.find(key);
        if (lent == m_lent.end())
            return;
        const qint64 forwarderId = lent->second.device.forwarder.id;
        m_lent.erase(lent);
        if (m_streams.count(key) == 0) {
            // It waited for its forwarder to come back: nothing streams.
            Q_EMIT streamEnded(forwarderId);
            return;
        }
    }
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
    return std::any_of(m_lent.cbegin(), m_lent.cend(), [forwarderId](const auto &entry) {
        return entry.second.device.forwarder.id == forwarderId;
    });
}

QList<std::pair<qint64, qint64>> DeviceStreams::lentKeys() const
{
    QList<std::pair<qint64, qint64>> keys;
    for (const auto &[key, lent] : m_lent)
        keys.append(key);
    return keys;
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
    for (const auto &[key, lent] : m_lent) {
        if (matches(key))
            keys.append(key);
    }
    for (const Key &key : keys)
        finish(key, cause, true);
}

} // namespace cloop::hub
