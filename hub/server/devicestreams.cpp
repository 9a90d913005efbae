#include "hub/server/devicestreams.h"

#include "common/api/hubeventname.h"

#include "common/crypto/secrets.h"
#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "hub/domain/eventbus.h"
#include "hub/relay/relayedstream.h"
#include "hub/relay/relaylegdoor.h"
#include "hub/server/daemongateway.h"
#include "hub/server/forwarderreach.h"
#include "hub/storage/auditlog.h"

#include <QTimer>

#include <algorithm>

namespace cloop::hub {

using protocol::CloseCode;

namespace {

// What device.attached and device.detached say of every device.
QJsonObject deviceFields(
    qint64 runId, qint64 bindingId, qint64 forwarderId, qint64 executorId, const QString &device)
{
    return { { QStringLiteral("run_id"), runId }, { QStringLiteral("binding_id"), bindingId },
        { QStringLiteral("forwarder_id"), forwarderId },
        { QStringLiteral("executor_id"), executorId }, { QStringLiteral("device"), device } };
}

} // namespace

DeviceStreams::DeviceStreams(ForwarderReach &forwarders, DaemonGateway &executors, EventBus &events,
    AuditLog &audit, QObject *parent)
    : QObject(parent)
    , m_forwarders(forwarders)
    , m_executors(executors)
    , m_events(events)
    , m_audit(audit)
{
    // Wherever in the cluster the forwarder connected again.
    connect(&m_events, &EventBus::published, this, [this](const HubEvent &event) {
        if (event.name == api::hubeventname::kForwarderConnected)
            giveBack(event.data.value(QLatin1String("id")).toInteger());
    });
}

DeviceStreams::~DeviceStreams()
{
    // The daemons see their streams end with the hub, as lost: the runs
    // still hold their devices (lent_devices), and the hub that starts next
    // resumes them.
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
        const Lent &lent = m_lent[key] = Lent { run.projectId, executorId, device, std::nullopt };
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
    const qint64 forwarderId = lent.device.forwarder.id;
    const protocol::ForwardedDevice &device = lent.device.device;
    const bool usb = device.kind == protocol::DeviceSpec::Kind::Usb;
    const protocol::ChannelOpen toForwarder = usb
        ? protocol::ChannelOpen { protocol::UsbOpen {
            protocol::UsbOpen::Purpose::Run, runId, bindingId, {}, std::nullopt } }
        : protocol::ChannelOpen { protocol::SegmentOpen { runId, bindingId, {}, std::nullopt } };
    protocol::AgentDeviceOpen toAgent { runId, bindingId, device.name, device.kind,
        usb ? device.busId : QString(), std::nullopt };
    // Through another member, the agent comes to the holder for the bytes
    // itself when it can: one hub on the path, not two.
    std::optional<Result<tunnel::Channel *>> forwarderSide;
    if (mayGoDirect(lent.executorId, forwarderId)) {
        const QString ticket = secrets::generateTicket();
        auto leg = m_forwarders.openDirectLeg(forwarderId, toForwarder,
            ForwarderReach::DirectLegAsk { lent.executorId, toAgent, ticket });
        if (leg) {
            toAgent.direct = protocol::DirectLeg { leg->memberUrl, ticket };
            forwarderSide = leg->handle;
        } else if (leg.error().code != ForwarderReach::kNoDirectLeg) {
            forwarderSide = leg.error();
        }
    }
    // Held here: both daemons come for the bytes on legs of their own,
    // relayed on a relay thread, when they can.
    QPointer<RelayedStream> relayed;
    protocol::ChannelOpen toForwarderHandle = toForwarder;
    protocol::AgentDeviceOpen toAgentHandle = toAgent;
    if (!forwarderSide && mayRelayOnLegs(lent.executorId, forwarderId)) {
        const bool resumable
            = m_executors.protocolOf(lent.executorId) >= protocol::kMinimumForResumableStreams;
        auto expected = m_relayDoor->expect(RelayedStream::Plan {
            forwarderId, lent.executorId, LegJoin::Openings { toForwarder, toAgent, resumable } });
        relayed = expected.stream;
        std::visit(
            [&expected](auto &open) {
                if constexpr (requires { open.leg; })
                    open.leg = expected.forwarderLeg;
            },
            toForwarderHandle);
        toAgentHandle.direct = expected.agentLeg;
    }
    if (!forwarderSide)
        forwarderSide = m_forwarders.openChannel(forwarderId, toForwarderHandle);
    auto agentSide = *forwarderSide ? agent->channels()->openChannel(toAgentHandle)
                                    : Result<tunnel::Channel *>(forwarderSide->error());
    if (!*forwarderSide || !agentSide) {
        if (*forwarderSide)
            (**forwarderSide)
                ->close(CloseCode::Refused, QStringLiteral("the agent's side could not be opened"));
        if (relayed) {
            relayed->end(CloseCode::Refused, QStringLiteral("its handles could not be opened"));
            relayed->deleteLater();
        }
        return *forwarderSide ? agentSide.error() : forwarderSide->error();
    }
    const bool direct = toAgent.direct.has_value();
    m_streams[key] = Stream { runId, lent.projectId, bindingId, forwarderId, lent.executorId,
        device.name, **forwarderSide, *agentSide, nullptr, direct, relayed };
    if (relayed) {
        connect(relayed, &RelayedStream::joined, this, [this, key] { recordJoin(key); });
        connect(relayed, &RelayedStream::ended, this,
            [this, key](CloseCode code, const QString &reason) {
                // A lost leg while both daemons stay: opened again soon.
                finish(key, reason);
                if (code == CloseCode::ConnectionLost)
                    reopenSoon(key);
            });
        // Legs that never joined carried nothing (a daemon too busy to come
        // for its leg in time, or whose dial gave up just as its stream
        // came): the tunnels carry the stream, or say why they cannot.
        connect(relayed, &RelayedStream::legsFailed, this,
            [this, key](const QString &reason) { fallBackToRelay(key, reason); });
    }
    for (tunnel::Channel *side : { **forwarderSide, *agentSide }) {
        connect(side, &tunnel::Channel::opened, this, [this, key] { joinIfReady(key); });
        // Before the join, a side that ends takes the stream with it; so
        // does a leg's handle at any time.
        connect(side, &tunnel::Channel::closed, this,
            [this, key, side](CloseCode code, const QString &reason) {
                auto found = m_streams.find(key);
                if (found == m_streams.end() || found->second.splice)
                    return;
                const bool onLegs = !found->second.relayed.isNull();
                const bool unreachable = reason.startsWith(protocol::kDirectLegUnreachable);
                if (unreachable
                    && (onLegs
                        || (found->second.direct && side == found->second.agentSide.data()))) {
                    fallBackToRelay(key, reason.mid(protocol::kDirectLegUnreachable.size()));
                    return;
                }
                finish(
                    key, reason.isEmpty() ? QStringLiteral("a side of the stream closed") : reason);
                // A daemon whose leg was lost says so on its handle, maybe
                // before the relay thread does.
                if (onLegs && code == CloseCode::ConnectionLost)
                    reopenSoon(key);
            });
    }
    const QString way = direct ? QStringLiteral(" (a direct leg to %1)").arg(toAgent.direct->url)
        : relayed              ? QStringLiteral(" (on legs, relayed on a relay thread)")
                               : QString();
    qCInfo(lcHub).noquote() << QStringLiteral("run %1 gets %2 from forwarder %3 on binding %4%5")
                                   .arg(runId)
                                   .arg(device.name)
                                   .arg(forwarderId)
                                   .arg(bindingId)
                                   .arg(way);
    return {};
}

bool DeviceStreams::mayRelayOnLegs(qint64 executorId, qint64 forwarderId)
{
    return m_relayDoor && m_forwarders.isHeldHere(forwarderId)
        && m_forwarders.protocolHere(forwarderId) >= protocol::kMinimumForRelayLegs
        && m_executors.protocolOf(executorId) >= protocol::kMinimumForRelayLegs
        && !legsFailedLately(executorId, forwarderId);
}

bool DeviceStreams::legsFailedLately(qint64 executorId, qint64 forwarderId)
{
    const auto relayOnly = m_relayOnly.find({ executorId, forwarderId });
    if (relayOnly == m_relayOnly.end())
        return false;
    if (!relayOnly->second.hasExpired())
        return true;
    m_relayOnly.erase(relayOnly);
    return false;
}

bool DeviceStreams::mayGoDirect(qint64 executorId, qint64 forwarderId)
{
    return m_executors.protocolOf(executorId) >= protocol::kMinimumForDirectStreams
        && !m_forwarders.isHeldHere(forwarderId) && !legsFailedLately(executorId, forwarderId);
}

void DeviceStreams::fallBackToRelay(const Key &key, const QString &reason)
{
    const auto found = m_streams.find(key);
    if (found == m_streams.end())
        return;
    const Stream stream = found->second;
    m_streams.erase(found);
    const QString why = stream.relayed
        ? QStringLiteral("its legs did not carry it: %1").arg(reason.left(200))
        : QStringLiteral("executor %1 could not reach this member").arg(stream.executorId);
    if (tunnel::ChannelSplice *splice = stream.splice.data()) {
        splice->disconnect(this);
        splice->end(CloseCode::Refused, why);
        splice->deleteLater();
    } else {
        if (RelayedStream *relayed = stream.relayed.data()) {
            relayed->disconnect(this);
            relayed->end(CloseCode::Refused, why);
            relayed->deleteLater();
        }
        // The agent's handle says so too: it waits for the stream on its
        // tunnel rather than giving the device up.
        for (tunnel::Channel *handle : { stream.forwarderSide.data(), stream.agentSide.data() }) {
            if (handle && handle->state() != tunnel::Channel::State::Closed) {
                handle->disconnect(this);
                handle->close(CloseCode::Refused, QString(protocol::kDirectLegUnreachable) + why);
            }
        }
    }
    // Not again for a while, for these two.
    m_relayOnly[{ stream.executorId, stream.forwarderId }] = QDeadlineTimer(kRelayOnlyFor);
    if (stream.relayed)
        qCWarning(lcHub).noquote()
            << "run" << stream.runId << "gets" << stream.deviceName << "on the tunnels:" << why;
    else
        qCWarning(lcHub).noquote()
            << "executor" << stream.executorId << "could not reach the member holding forwarder"
            << stream.forwarderId << QStringLiteral("(%1): run").arg(reason.left(200))
            << stream.runId << "gets" << stream.deviceName << "through this member";
    const auto lent = m_lent.find(key);
    if (lent == m_lent.end())
        return;
    if (Status opened = openStream(key, lent->second); !opened)
        qCWarning(lcHub).noquote() << "run" << stream.runId << "cannot get" << stream.deviceName
                                   << ":" << opened.error().message;
}

void DeviceStreams::giveBack(qint64 forwarderId)
{
    reopenWhere([forwarderId](const Lent &lent) { return lent.device.forwarder.id == forwarderId; },
        QStringLiteral("forwarder %1 returned").arg(forwarderId));
}

void DeviceStreams::resume(qint64 executorId)
{
    reopenWhere(
        [this, executorId](const Lent &lent) {
            return lent.executorId == executorId
                && m_forwarders.isReachable(lent.device.forwarder.id);
        },
        QStringLiteral("executor %1 returned").arg(executorId));
}

void DeviceStreams::adopt(
    qint64 runId, qint64 projectId, qint64 executorId, const PlannedDevice &device)
{
    const Key key { runId, device.binding.id };
    if (m_lent.count(key) != 0)
        return;
    m_lent[key] = Lent { projectId, executorId, device, QStringLiteral("the hub restarted") };
    qCInfo(lcHub).noquote() << "run" << runId << "still holds" << device.device.name << "(binding"
                            << device.binding.id << "), lent before the hub restarted";
}

void DeviceStreams::reopenWhere(
    const std::function<bool(const Lent &)> &matches, const QString &why)
{
    QList<Key> keys;
    for (const auto &[key, lent] : m_lent)
        if (matches(lent) && m_streams.count(key) == 0)
            keys.append(key);
    for (const Key &key : keys) {
        const Lent lent = m_lent.at(key);
        if (Status opened = openStream(key, lent); !opened)
            qCWarning(lcHub).noquote()
                << "run" << key.first << "cannot get" << lent.device.device.name
                << "back:" << opened.error().message;
        else
            qCInfo(lcHub).noquote()
                << "run" << key.first << "gets" << lent.device.device.name << "back:" << why;
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
    // Handles of legs: the relay thread joins the stream.
    if (stream.relayed)
        return;
    if (stream.splice || !forwarderSide || !agentSide
        || forwarderSide->state() != tunnel::Channel::State::Open
        || agentSide->state() != tunnel::Channel::State::Open)
        return;
    auto *splice = new tunnel::ChannelSplice(forwarderSide, agentSide, this);
    stream.splice = splice;
    // Such an agent keeps what it attached when the forwarder's end goes,
    // for the stream that follows.
    if (m_executors.protocolOf(stream.executorId) >= protocol::kMinimumForResumableStreams)
        splice->setAResumable(true);
    connect(
        splice, &tunnel::ChannelSplice::ended, this, [this, key](CloseCode, const QString &reason) {
            // A direct leg's handles are joined at once; the agent says
            // there whether it reached the holder.
            const auto ended = m_streams.find(key);
            if (ended != m_streams.end() && ended->second.direct
                && reason.startsWith(protocol::kDirectLegUnreachable))
                fallBackToRelay(key, reason.mid(protocol::kDirectLegUnreachable.size()));
            else
                finish(key, reason);
        });
    recordJoin(key);
}

void DeviceStreams::recordJoin(const Key &key)
{
    const auto found = m_streams.find(key);
    if (found == m_streams.end())
        return;
    const Stream &stream = found->second;
    const auto lent = m_lent.find(key);
    if (lent != m_lent.end() && lent->second.lostBecause) {
        recordReattach(stream, *std::exchange(lent->second.lostBecause, std::nullopt));
        return;
    }
    m_events.publish(HubEvent { QString(api::hubeventname::kDeviceAttached),
        deviceFields(stream.runId, stream.bindingId, stream.forwarderId, stream.executorId,
            stream.deviceName),
        stream.projectId });
}

void DeviceStreams::reopenSoon(const Key &key)
{
    // Not at once: a leg that drops again at once is not dialled in a loop.
    QTimer::singleShot(kReopenPause, this, [this, key] {
        const auto lent = m_lent.find(key);
        if (lent == m_lent.end() || m_streams.count(key) != 0
            || !m_executors.session(lent->second.executorId)
            || !m_forwarders.isReachable(lent->second.device.forwarder.id))
            return;
        const Lent *wanted = &lent->second;
        reopenWhere([wanted](const Lent &candidate) { return &candidate == wanted; },
            QStringLiteral("its leg was lost while both daemons stayed"));
    });
}

void DeviceStreams::recordReattach(const Stream &stream, const QString &lostBecause)
{
    QJsonObject data = deviceFields(
        stream.runId, stream.bindingId, stream.forwarderId, stream.executorId, stream.deviceName);
    data.insert(QStringLiteral("after"), lostBecause);
    // The audit entry's subject names the run.
    QJsonObject details = data;
    details.remove(QStringLiteral("run_id"));
    if (Status audited = m_audit.append(QStringLiteral("hub"), auditaction::kRunDeviceReattach,
            QStringLiteral("run:%1").arg(stream.runId), details);
        !audited)
        qCWarning(lcHub).noquote()
            << "the re-attach of" << stream.deviceName << "to run" << stream.runId
            << "could not be audited:" << audited.error().message;
    qCInfo(lcHub).noquote() << "run" << stream.runId << "re-attached" << stream.deviceName
                            << "(binding" << stream.bindingId << ") after:" << lostBecause;
    data.insert(QStringLiteral("reattached"), true);
    m_events.publish(
        HubEvent { QString(api::hubeventname::kDeviceAttached), data, stream.projectId });
}

std::map<qint64, DeviceStreams::Relayed> DeviceStreams::relayedByBinding() const
{
    std::map<qint64, Relayed> totals = m_relayedByEnded;
    for (const auto &[key, stream] : m_streams) {
        // The splice joins the forwarder's side (A) to the agent's (B).
        if (const tunnel::ChannelSplice *splice = stream.splice.data()) {
            Relayed &relayed = totals[stream.bindingId];
            relayed.forwarderId = stream.forwarderId;
            relayed.toAgent += splice->bytesAToB();
            relayed.toForwarder += splice->bytesBToA();
        } else if (const RelayedStream *legs = stream.relayed.data()) {
            Relayed &relayed = totals[stream.bindingId];
            relayed.forwarderId = stream.forwarderId;
            relayed.toAgent += legs->bytesToAgent();
            relayed.toForwarder += legs->bytesToForwarder();
        }
    }
    return totals;
}

void DeviceStreams::finish(const Key &key, const QString &cause, bool forGood)
{
    if (!forGood) {
        if (const auto lent = m_lent.find(key); lent != m_lent.end())
            lent->second.lostBecause = cause;
        endStream(key, cause, false);
        return;
    }
    const auto lent = m_lent.find(key);
    if (lent == m_lent.end())
        return;
    const Lent released = lent->second;
    m_lent.erase(lent);
    if (m_streams.count(key) != 0) {
        endStream(key, cause, true);
    } else {
        publishReleased(key, released, cause);
        Q_EMIT streamEnded(released.device.forwarder.id);
    }
    // Said on the agent's tunnel whether a stream was here or not: one that
    // was away left the agent keeping what it attached, and a direct leg's
    // bytes do not pass the splice ended here.
    tellReleased(key, released, cause);
}

void DeviceStreams::endStream(const Key &key, const QString &cause, bool forGood)
{
    // A stream the run keeps its device through ends as lost: an agent that
    // resumes streams keeps the device for the next.
    const CloseCode code = forGood ? CloseCode::Normal : CloseCode::ConnectionLost;
    auto found = m_streams.find(key);
    if (found == m_streams.end())
        return;
    Stream stream = found->second;
    m_streams.erase(found);
    if (tunnel::ChannelSplice *splice = stream.splice.data()) {
        splice->disconnect(this);
        splice->end(code, cause);
        Relayed &relayed = m_relayedByEnded[stream.bindingId];
        relayed.forwarderId = stream.forwarderId;
        relayed.toAgent += splice->bytesAToB();
        relayed.toForwarder += splice->bytesBToA();
        splice->deleteLater();
    } else {
        if (RelayedStream *legs = stream.relayed.data()) {
            legs->disconnect(this);
            legs->end(code, cause);
            Relayed &relayed = m_relayedByEnded[stream.bindingId];
            relayed.forwarderId = stream.forwarderId;
            relayed.toAgent += legs->bytesToAgent();
            relayed.toForwarder += legs->bytesToForwarder();
            legs->deleteLater();
        }
        for (tunnel::Channel *side : { stream.forwarderSide.data(), stream.agentSide.data() }) {
            if (side && side->state() != tunnel::Channel::State::Closed) {
                side->disconnect(this);
                side->close(forGood ? CloseCode::Refused : code, cause);
            }
        }
    }
    qCInfo(lcHub).noquote() << "run" << stream.runId << "detached" << stream.deviceName
                            << "(binding" << stream.bindingId << "):" << cause;
    Q_EMIT streamEnded(stream.forwarderId);
    QJsonObject data = deviceFields(
        stream.runId, stream.bindingId, stream.forwarderId, stream.executorId, stream.deviceName);
    data.insert(QStringLiteral("reason"), cause);
    data.insert(QStringLiteral("kept"), !forGood);
    m_events.publish(
        HubEvent { QString(api::hubeventname::kDeviceDetached), data, stream.projectId });
}

void DeviceStreams::publishReleased(const Key &key, const Lent &lent, const QString &cause)
{
    const auto [runId, bindingId] = key;
    qCInfo(lcHub).noquote() << "run" << runId << "released" << lent.device.device.name << "(binding"
                            << bindingId << "):" << cause;
    QJsonObject data = deviceFields(
        runId, bindingId, lent.device.forwarder.id, lent.executorId, lent.device.device.name);
    data.insert(QStringLiteral("reason"), cause);
    data.insert(QStringLiteral("kept"), false);
    m_events.publish(
        HubEvent { QString(api::hubeventname::kDeviceDetached), data, lent.projectId });
}

void DeviceStreams::tellReleased(const Key &key, const Lent &lent, const QString &cause)
{
    const auto [runId, bindingId] = key;
    tunnel::TunnelConnection *agent = m_executors.session(lent.executorId);
    if (agent && m_executors.protocolOf(lent.executorId) >= protocol::kMinimumForResumableStreams)
        agent->sendControl(protocol::DeviceReleased { runId, bindingId, cause });
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
