#include "hub/server/rundispatcher.h"

#include "hub/server/runlogreceiver.h"

#include "hub/server/deviceupgrades.h"

#include "common/logging.h"
#include "common/protocol/agentcapabilities.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/protocolversion.h"
#include "common/util/clock.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/deviceplan.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/executorservice.h"
#include "hub/domain/runlifecycle.h"
#include "hub/domain/runservice.h"
#include "hub/hubcore.h"
#include "hub/server/daemongateway.h"
#include "hub/server/devicestreams.h"
#include "hub/server/forwarderreach.h"
#include "hub/server/runlogreceiver.h"
#include "hub/storage/database.h"
#include "hub/storage/runlogstore.h"

#include <QPointer>

#include <algorithm>
#include <memory>
#include <utility>

namespace cloop::hub {

using namespace protocol;
using protocol::CloseCode;

RunDispatcher::RunDispatcher(HubCore &core, RunService &runs, DaemonGateway &executors,
    RunLogStore &logs, DeviceStreams &devices, const ForwarderReach &forwarders,
    std::chrono::milliseconds grace, QObject *parent)
    : QObject(parent)
    , m_core(core)
    , m_lifecycle(core.runLifecycle())
    , m_executors(executors)
    , m_logs(logs)
    , m_devices(devices)
    , m_forwarders(forwarders)
    , m_grace(grace)
    , m_refusalLog(lcHub(), QStringLiteral("refused executor reports"), 5, std::chrono::minutes(1))
{
    connect(
        &runs, &RunService::runQueued, this, &RunDispatcher::dispatchQueued, Qt::QueuedConnection);
    // A USB device a run let go of may be what a queued run waits for.
    connect(&m_devices, &DeviceStreams::streamEnded, this, &RunDispatcher::dispatchQueued,
        Qt::QueuedConnection);
    connect(&m_lifecycle, &RunLifecycle::runEnded, this, &RunDispatcher::onRunEnded);
    // Another member's runs: one queued there may be this member's to give
    // to its agents; one that ended there (cancelled, lost) may hold devices
    // or run on an agent here.
    connect(&m_core.events(), &EventBus::published, this, [this](const HubEvent &event) {
        if (!event.isFromAnotherMember())
            return;
        if (event.name == api::hubeventname::kRunQueued) {
            scheduleDispatch();
        } else if (event.name == api::hubeventname::kRunFinished) {
            if (auto run = m_lifecycle.find(event.data.value(QLatin1String("id")).toInteger()))
                onRunEnded(*run);
        }
    });
    // A binding that ends takes its device out of every run at once.
    connect(&m_core.events(), &EventBus::published, this, [this](const HubEvent &event) {
        if (event.name != QLatin1String("binding.ended"))
            return;
        const qint64 bindingId = event.data.value(QLatin1String("id")).toInteger();
        const QString state = event.data.value(QLatin1String("state")).toString();
        const QString by = event.data.value(QLatin1String("ended_by")).toString();
        const QString reason = event.data.value(QLatin1String("end_reason")).toString();
        QString cause = QStringLiteral("binding %1 ended (%2").arg(bindingId).arg(state);
        if (!by.isEmpty())
            cause += QStringLiteral(" by ") + by;
        cause += QLatin1Char(')');
        if (!reason.isEmpty())
            cause += QStringLiteral(": ") + reason;
        m_devices.detachBinding(bindingId, cause);
    });
    connect(&executors, &DaemonGateway::controlReceived, this, &RunDispatcher::onControl);
    connect(&executors, &DaemonGateway::daemonConnected, this, &RunDispatcher::onExecutorConnected);
    connect(&executors, &DaemonGateway::daemonDisconnected, this,
        &RunDispatcher::onExecutorDisconnected);

    // Runs a previous hub process left with an executor get the same grace:
    // their agent may well reconnect and carry on.
    m_startupGrace.setSingleShot(true);
    connect(&m_startupGrace, &QTimer::timeout, this, [this] {
        auto active = m_lifecycle.unfinished();
        if (!active)
            return;
        for (const RunRecord &run : std::as_const(*active)) {
            if (run.executorId && !isConnectedAnywhere(*run.executorId))
                loseRunsOf(*run.executorId,
                    QStringLiteral("its executor did not come back after the hub restarted"));
        }
    });
    m_startupGrace.start(m_grace);
    m_absenceCheck.setInterval(
        std::min<std::chrono::milliseconds>(m_grace / 3, std::chrono::seconds(5)));
    connect(&m_absenceCheck, &QTimer::timeout, this, &RunDispatcher::checkAbsentExecutors);
    m_finishRetry.setInterval(std::chrono::seconds(1));
    connect(&m_finishRetry, &QTimer::timeout, this, &RunDispatcher::recordUnrecordedFinishes);
}

void RunDispatcher::setExecutorsElsewhere(ExecutorsElsewhere executors)
{
    m_executorsElsewhere = std::move(executors);
    m_absenceCheck.start();
}

bool RunDispatcher::isConnectedAnywhere(qint64 executorId) const
{
    if (m_executors.isConnected(executorId))
        return true;
    if (!m_executorsElsewhere)
        return false;
    // A member that cannot tell loses nobody's runs.
    const auto elsewhere = m_executorsElsewhere();
    return !elsewhere || elsewhere->contains(executorId);
}

void RunDispatcher::checkAbsentExecutors()
{
    auto active = m_lifecycle.unfinished();
    if (!active)
        return;
    const QDateTime now = m_core.clock().now();
    QSet<qint64> holding;
    for (const RunRecord &run : std::as_const(*active)) {
        if (run.executorId && run.dispatchedAt.isValid())
            holding.insert(*run.executorId);
    }
    for (auto it = m_absentSince.begin(); it != m_absentSince.end();)
        it = holding.contains(it.key()) ? std::next(it) : m_absentSince.erase(it);
    for (const qint64 executorId : std::as_const(holding)) {
        if (isConnectedAnywhere(executorId) || m_graceTimers.contains(executorId)) {
            m_absentSince.remove(executorId);
            continue;
        }
        const QDateTime since = m_absentSince.value(executorId);
        if (!since.isValid()) {
            m_absentSince.insert(executorId, now);
            continue;
        }
        if (since.msecsTo(now) >= m_grace.count()) {
            m_absentSince.remove(executorId);
            loseRunsOf(executorId,
                QStringLiteral("its executor is connected to no member of the hub cluster and did "
                               "not come back within %1 s")
                    .arg(m_grace.count() / 1000));
        }
    }
}

int RunDispatcher::ceilingOf(const ExecutorRecord &executor, const RunRecord &run)
{
    auto capabilities = AgentCapabilities::fromJson(executor.capabilities);
    if (!capabilities)
        return 0;
    // Sandboxed runs go to container agents, host-process runs to agents in
    // host mode: an agent never does the other kind. Every agent installs
    // harnesses.
    const bool hostMode = capabilities->mode == AgentCapabilities::Mode::Host;
    if (run.harness.isEmpty() && hostMode != run.hostProcess)
        return 0;
    return std::max(1, capabilities->maxConcurrent);
}

void RunDispatcher::holdBackUpgrading(const DeviceUpgrades &upgrades)
{
    m_upgrades = &upgrades;
    connect(&upgrades, &DeviceUpgrades::changed, this, [this] { scheduleDispatch(); });
}

void RunDispatcher::dispatchQueued()
{
    if (m_dispatching)
        return;
    m_dispatching = true;
    auto queue = m_lifecycle.queued();
    if (!queue) {
        qCWarning(lcHub).noquote() << "cannot read the run queue:" << queue.error().message;
        m_dispatching = false;
        return;
    }
    for (const RunRecord &run : std::as_const(*queue))
        dispatchRun(run);
    m_dispatching = false;
}

void RunDispatcher::refuseRun(const RunRecord &run, const Error &reason)
{
    if (m_lifecycle.end(run.id, RunLifecycle::Ending::failed(reason.message))) {
        qCWarning(lcHub).noquote() << "run" << run.id << "refused:" << reason.message;
        Q_EMIT runRefused(reason.code);
    }
}

void RunDispatcher::onRunEnded(const RunRecord &run)
{
    if (run.executorId) {
        if (auto held = m_dispatchedThisSession.find(*run.executorId);
            held != m_dispatchedThisSession.end())
            held->remove(run.id);
    }
    switch (run.state) {
    case RunRecord::State::Cancelled:
        m_devices.detachRun(run.id, QStringLiteral("the run was cancelled"));
        break;
    case RunRecord::State::Lost:
        m_devices.detachRun(run.id, QStringLiteral("the run was lost: %1").arg(run.error));
        break;
    default:
        m_devices.detachRun(run.id, QStringLiteral("the run ended"));
        break;
    }
    // A run cancelled while an executor had it: the executor stops it.
    if (run.state == RunRecord::State::Cancelled && run.executorId
        && run.wasDispatchedTo(*run.executorId)) {
        if (tunnel::TunnelConnection *session = m_executors.session(*run.executorId))
            session->sendControl(RunCancel { run.id, run.error });
    }
    scheduleDispatch();
}

void RunDispatcher::scheduleDispatch()
{
    // Runs often end several at once (an executor's runs lost together):
    // the queue is served once after them.
    if (std::exchange(m_dispatchScheduled, true))
        return;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_dispatchScheduled = false;
            dispatchQueued();
        },
        Qt::QueuedConnection);
}

bool RunDispatcher::readPlanInput(const RunRecord &run, DevicePlanInput &input)
{
    input.run = run;
    auto lent = m_core.bindings().forDispatch(run.projectId);
    if (!lent) {
        qCWarning(lcHub).noquote()
            << "run" << run.id << "waits: cannot read its bindings:" << lent.error().message;
        return false;
    }
    for (const BindingService::Lent &each : std::as_const(*lent)) {
        input.bindings.append(each.binding);
        input.forwarders.insert(each.forwarder.id, each.forwarder);
    }
    input.forwarderConnected = [this](qint64 id) { return m_forwarders.isReachable(id); };
    input.segmentMtu = [this](qint64 id) -> std::optional<int> {
        const auto state = m_forwarders.deviceState(id);
        return state ? std::optional<int>(state->mtu) : std::nullopt;
    };
    input.deviceInUse = [this](qint64 id) {
        if (m_devices.holdsForwarder(id))
            return true;
        // Held by a run another member dispatched; when the records cannot
        // tell, it counts as held.
        auto held = m_lifecycle.isDeviceHeld(id);
        return !held || *held;
    };
    input.usbBusId = [this](qint64 id) -> std::optional<QString> {
        const auto state = m_forwarders.deviceState(id);
        return state && state->usb ? std::optional<QString>(state->usbBusId) : std::nullopt;
    };
    return true;
}

void RunDispatcher::dispatchRun(const RunRecord &run)
{
    DevicePlanInput input;
    if (!readPlanInput(run, input))
        return;
    std::optional<Error> refusal;
    bool capableButBusy = false;
    const QList<qint64> candidates
        = run.executorId ? QList<qint64> { *run.executorId } : m_executors.connectedIds();
    for (const qint64 executorId : candidates) {
        tunnel::TunnelConnection *session = m_executors.session(executorId);
        if (!session)
            continue;
        if (m_upgrades && m_upgrades->isUpgrading(executorId)) {
            capableButBusy = true;
            continue;
        }
        auto executor = m_core.executors().forDispatch(executorId);
        if (!executor)
            continue;
        if (!run.harness.isEmpty() && executor->protocol < kMinimumForHarnessInstall)
            return refuseRun(run,
                Error::make(QStringLiteral("harness_install_unsupported"),
                    QStringLiteral("executor %1 (%2) speaks protocol %3, and installs harnesses "
                                   "from %4 on: upgrade its agent first")
                        .arg(executorId)
                        .arg(executor->name)
                        .arg(executor->protocol)
                        .arg(kMinimumForHarnessInstall)));
        input.executor = *executor;
        // Steps 2 and 3.
        auto plan = planDevices(input);
        if (!plan) {
            // Queued until the run holding the device lets go of it.
            if (plan.error().is(ErrorCode::DeviceBusy)) {
                qCDebug(lcHub).noquote() << plan.error().message;
                return;
            }
            if (!plan.error().is(ErrorCode::ExecutorCannotAttach))
                return refuseRun(run, plan.error());
            refusal = plan.error();
            continue;
        }
        auto active = m_lifecycle.activeOn(executorId);
        const int ceiling = ceilingOf(*executor, run);
        if (!active || active->size() >= ceiling) {
            capableButBusy |= ceiling > 0;
            continue;
        }
        return startRun(run, executorId, *session, *plan);
    }
    // No connected executor can take the run's devices, and none that could
    // is merely busy: waiting would not help.
    if (refusal && !capableButBusy && !anotherMemberCouldTake(input))
        refuseRun(run, *refusal);
}

bool RunDispatcher::anotherMemberCouldTake(DevicePlanInput &input)
{
    if (!m_executorsElsewhere)
        return false;
    const auto elsewhere = m_executorsElsewhere();
    // A member that cannot tell refuses nothing on the others' behalf.
    if (!elsewhere)
        return true;
    for (const qint64 executorId : *elsewhere) {
        if (input.run.executorId && *input.run.executorId != executorId)
            continue;
        auto executor = m_core.executors().forDispatch(executorId);
        if (!executor || ceilingOf(*executor, input.run) == 0)
            continue;
        input.executor = *executor;
        auto plan = planDevices(input);
        if (plan || !plan.error().is(ErrorCode::ExecutorCannotAttach))
            return true;
    }
    return false;
}

void RunDispatcher::startRun(const RunRecord &run, qint64 executorId,
    tunnel::TunnelConnection &session, const QList<PlannedDevice> &plan)
{
    QList<RunStore::LentDevice> lent;
    for (const PlannedDevice &device : plan)
        lent.append({ device.binding.id, device.forwarder.id,
            device.device.kind == protocol::DeviceSpec::Kind::Usb, device.device.name });
    auto dispatched = m_lifecycle.markDispatched(run.id, executorId, lent);
    if (!dispatched) {
        // Another member gave it, or lent its device first: it is theirs,
        // or it waits for the device.
        qCDebug(lcHub).noquote() << "run" << run.id
                                 << "not dispatched here:" << dispatched.error().message;
        return;
    }
    // Step 4: the streams first, so the agent has its device channels
    // before it reads the start and attaches before the workload runs.
    if (Status opened = m_devices.open(*dispatched, executorId, plan); !opened) {
        if (m_lifecycle.end(run.id, RunLifecycle::Ending::failed(opened.error().message)))
            qCWarning(lcHub).noquote() << "run" << run.id << "failed:" << opened.error().message;
        return;
    }
    RunStart start;
    start.runId = run.id;
    start.image = run.image;
    start.runtime = run.runtime;
    start.argv = run.argv;
    start.workdir = QStringLiteral("runs/%1").arg(run.id);
    start.hostProcess = run.hostProcess;
    start.harness = run.harness;
    start.env = { { QStringLiteral("CLOOP_RUN_ID"), QString::number(run.id) } };
    if (!run.projectPath.isEmpty())
        start.env.insert(QStringLiteral("CLOOP_PROJECT"), run.projectPath);
    for (const PlannedDevice &device : plan)
        start.devices.append(device.device);
    session.sendControl(start);
    m_dispatchedThisSession[executorId].insert(run.id);
    qCInfo(lcHub).noquote() << "run" << run.id << "dispatched to executor" << executorId
                            << (plan.isEmpty()
                                       ? QString()
                                       : QStringLiteral("with %1 device(s)").arg(plan.size()));
}

std::optional<RunRecord> RunDispatcher::ownRun(
    qint64 executorId, qint64 runId, QLatin1StringView what)
{
    auto run = m_lifecycle.find(runId);
    if (run && run->wasDispatchedTo(executorId))
        return *run;
    QString why;
    if (!run)
        why = QStringLiteral("there is no such run");
    else if (run->state == RunRecord::State::Queued)
        why = QStringLiteral("it is queued, not dispatched");
    else if (run->dispatchedAt.isValid())
        why = QStringLiteral("it was dispatched to another executor");
    else
        why = QStringLiteral("it was never dispatched");
    logRefusal(
        executorId, QStringLiteral("%1 for run %2 refused: %3").arg(what).arg(runId).arg(why));
    return std::nullopt;
}

void RunDispatcher::logRefusal(qint64 executorId, const QString &what)
{
    if (m_refusalLog.admit())
        qCWarning(lcHub).noquote() << "executor" << executorId << what;
}

void RunDispatcher::onControl(qint64 executorId, const ControlMessage &message)
{
    if (const auto *started = std::get_if<RunStarted>(&message)) {
        if (!ownRun(executorId, started->runId, messagetype::kRunStarted))
            return;
        // A start that crossed a cancel or a loss changes nothing.
        if (auto running = m_lifecycle.markRunning(started->runId, executorId); !running)
            qCDebug(lcHub).noquote() << running.error().message;
        return;
    }
    if (const auto *held = std::get_if<RunsHeld>(&message)) {
        reconcile(executorId, *held);
        return;
    }
    if (const auto *finished = std::get_if<RunFinished>(&message)) {
        // A finish after a cancel or a loss still says where the log ends.
        if (!ownRun(executorId, finished->runId, messagetype::kRunFinished))
            return;
        recordFinish(executorId, *finished);
    }
}

namespace {
// The records could not take the change now, and will later.
bool recordsUnavailable(const Error &error)
{
    return error.is(ErrorCode::StorageError) || error.code == kStorageFull
        || error.code == kDatabaseUnreachable;
}
} // namespace

void RunDispatcher::recordFinish(qint64 executorId, const RunFinished &finished)
{
    const Status expected = m_lifecycle.setLogExpected(finished.runId, finished.endOffset);
    auto ended = m_lifecycle.end(finished.runId,
        RunLifecycle::Ending::reported(executorId, finished.exitCode, finished.error));
    if (ended) {
        m_unrecordedFinishes.remove(finished.runId);
        qCInfo(lcHub).noquote() << "run" << ended->id << runStateName(ended->state)
                                << (ended->exitCode
                                           ? QStringLiteral("exit %1").arg(*ended->exitCode)
                                           : ended->error);
        if (!expected)
            qCWarning(lcHub).noquote() << expected.error().message;
        return;
    }
    const Error &failed = expected ? ended.error() : expected.error();
    if (!recordsUnavailable(failed)) {
        // Ended already (a cancel or a loss crossed the report).
        m_unrecordedFinishes.remove(finished.runId);
        qCDebug(lcHub).noquote() << ended.error().message;
        return;
    }
    // The agent reports a finish once: it waits here until it is recorded.
    if (!m_unrecordedFinishes.contains(finished.runId))
        qCWarning(lcHub).noquote()
            << "run" << finished.runId << "finish waits to be recorded:" << failed.message;
    m_unrecordedFinishes.insert(finished.runId, { executorId, finished });
    if (!m_finishRetry.isActive())
        m_finishRetry.start();
}

void RunDispatcher::recordUnrecordedFinishes()
{
    const auto waiting = m_unrecordedFinishes;
    for (const auto &[executorId, finished] : waiting)
        recordFinish(executorId, finished);
    if (m_unrecordedFinishes.isEmpty())
        m_finishRetry.stop();
}

void RunDispatcher::onExecutorConnected(qint64 executorId)
{
    if (QTimer *timer = m_graceTimers.take(executorId))
        timer->deleteLater();
    m_dispatchedThisSession.remove(executorId);
    if (tunnel::TunnelConnection *session = m_executors.session(executorId)) {
        connect(session->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
            [this, executorId](
                tunnel::Channel *channel) { acceptLogChannel(executorId, channel); });
    }
    dispatchQueued();
}

void RunDispatcher::acceptLogChannel(qint64 executorId, tunnel::Channel *channel)
{
    const auto open = protocol::RunLogOpen::fromMetadata(channel->metadata());
    if (!open) {
        logRefusal(executorId,
            QStringLiteral("opened a channel of kind \"%1\": refused: %2")
                .arg(protocol::claimedChannelKind(channel->metadata()), open.error().message));
        channel->refuse(QStringLiteral("an executor opens run-log channels only: %1")
                            .arg(open.error().message));
        return;
    }
    const qint64 runId = open->runId;
    const auto run = ownRun(executorId, runId, QLatin1StringView("run output"));
    if (!run) {
        channel->refuse(QStringLiteral("no run %1 of this executor takes output").arg(runId));
        return;
    }
    channel->accept();
    // The agent resends from where the stored log ends: nothing is lost or
    // stored twice across reconnects. That end is where the output stream
    // ends, whatever the cap or the budget trimmed from the log's start.
    qint64 resume = run->logEnd;
    if (auto stored = m_logs.endOf(runId); !stored) {
        qCWarning(lcHub).noquote()
            << QStringLiteral("run %1:").arg(runId) << stored.error().message;
    } else if (static_cast<qint64>(*stored) > resume) {
        // Stored, but the hub stopped before it noted so.
        resume = static_cast<qint64>(*stored);
        if (Status recorded = m_lifecycle.setLogEnd(runId, resume); !recorded)
            qCWarning(lcHub).noquote() << recorded.error().message;
    }
    tunnel::TunnelConnection *session = m_executors.session(executorId);
    session->sendControl(RunAck { runId, resume });
    auto *receiver = new RunLogReceiver(runId, resume, channel, m_logs);
    QPointer<tunnel::TunnelConnection> guardedSession(session);
    connect(receiver, &RunLogReceiver::stored, this, [this, runId, guardedSession](qint64 end) {
        if (Status recorded = m_lifecycle.setLogEnd(runId, end); !recorded)
            qCWarning(lcHub).noquote() << recorded.error().message;
        if (guardedSession)
            guardedSession->sendControl(RunAck { runId, end });
    });
}

void RunDispatcher::onExecutorDisconnected(qint64 executorId)
{
    m_dispatchedThisSession.remove(executorId);
    if (m_graceTimers.contains(executorId))
        return;
    auto *timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, executorId] {
        if (QTimer *own = m_graceTimers.take(executorId))
            own->deleteLater();
        // It came back through another member of the cluster.
        if (isConnectedAnywhere(executorId))
            return;
        loseRunsOf(executorId,
            QStringLiteral("its executor went away and did not come back within %1 s")
                .arg(m_grace.count() / 1000));
    });
    m_graceTimers.insert(executorId, timer);
    timer->start(m_grace);
}

void RunDispatcher::reconcile(qint64 executorId, const RunsHeld &held)
{
    auto active = m_lifecycle.activeOn(executorId);
    if (!active) {
        qCWarning(lcHub).noquote() << "cannot reconcile the runs of executor" << executorId << ":"
                                   << active.error().message;
        return;
    }
    QSet<qint64> holds(held.runIds.cbegin(), held.runIds.cend());
    const QSet<qint64> inFlight = m_dispatchedThisSession.value(executorId);
    for (const RunRecord &run : std::as_const(*active)) {
        if (inFlight.contains(run.id))
            continue;
        if (holds.remove(run.id)) {
            takeBackDevices(executorId, run);
            continue;
        }
        loseRun(run.id,
            QStringLiteral("its executor does not have it (the start never reached the agent)"));
    }
    for (const auto &[runId, bindingId] : held.keptDevices) {
        if (m_devices.lends(runId, bindingId))
            continue;
        if (tunnel::TunnelConnection *session = m_executors.session(executorId))
            session->sendControl(DeviceReleased { runId, bindingId,
                QStringLiteral("the run no longer holds it (its binding or run ended while the "
                               "stream was away)") });
    }
    m_devices.resume(executorId);
    // What is left are finished runs whose output the agent still sends, or
    // runs it was never given: those it may not claim, and they change nothing.
    QList<qint64> foreign;
    for (const qint64 runId : std::as_const(holds)) {
        auto run = m_lifecycle.find(runId);
        if (!run || !run->wasDispatchedTo(executorId))
            foreign.append(runId);
    }
    if (!foreign.isEmpty()) {
        std::sort(foreign.begin(), foreign.end());
        QStringList ids;
        for (const qint64 runId : std::as_const(foreign))
            ids.append(QString::number(runId));
        logRefusal(executorId,
            QStringLiteral("%1 names runs that were never dispatched to it: %2: ignored")
                .arg(messagetype::kRunsHeld, ids.join(QStringLiteral(", "))));
    }
}

void RunDispatcher::takeBackDevices(qint64 executorId, const RunRecord &run)
{
    auto lent = m_lifecycle.lentTo(run.id);
    if (!lent) {
        qCWarning(lcHub).noquote()
            << "run" << run.id << "cannot get its devices back:" << lent.error().message;
        return;
    }
    if (lent->isEmpty())
        return;
    auto bindings = m_core.bindings().forDispatch(run.projectId);
    if (!bindings) {
        qCWarning(lcHub).noquote()
            << "run" << run.id << "cannot get its devices back:" << bindings.error().message;
        return;
    }
    for (const RunStore::LentDevice &device : std::as_const(*lent)) {
        if (m_devices.lends(run.id, device.bindingId))
            continue;
        const auto binding = std::find_if(
            bindings->cbegin(), bindings->cend(), [&device](const BindingService::Lent &each) {
                return each.binding.id == device.bindingId;
            });
        // Ended a moment ago: its sweep releases the record.
        if (binding == bindings->cend())
            continue;
        PlannedDevice planned { binding->binding, binding->forwarder, {} };
        planned.device.bindingId = device.bindingId;
        planned.device.name = device.name;
        planned.device.kind = device.exclusive ? protocol::DeviceSpec::Kind::Usb
                                               : protocol::DeviceSpec::Kind::Segment;
        if (device.exclusive) {
            const auto state = m_forwarders.deviceState(device.forwarderId);
            if (state && state->usb)
                planned.device.busId = state->usbBusId;
        }
        m_devices.adopt(run.id, run.projectId, executorId, planned);
    }
}

void RunDispatcher::loseRunsOf(qint64 executorId, const QString &reason)
{
    auto active = m_lifecycle.activeOn(executorId);
    if (!active)
        return;
    for (const RunRecord &run : std::as_const(*active))
        loseRun(run.id, reason);
}

void RunDispatcher::loseRun(qint64 runId, const QString &reason)
{
    if (m_lifecycle.end(runId, RunLifecycle::Ending::lost(reason)))
        qCWarning(lcHub).noquote() << "run" << runId << "lost:" << reason;
}

} // namespace cloop::hub
