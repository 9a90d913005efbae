#include "hub/server/rundispatcher.h"

#include "common/logging.h"
#include "common/protocol/agentcapabilities.h"
#include "hub/domain/clock.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/runservice.h"
#include "hub/hubcore.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/runlogstore.h"
#include "hub/storage/runstore.h"

#include <QPointer>

#include <memory>

namespace cloop::hub {

using namespace protocol;
using protocol::CloseCode;

RunDispatcher::RunDispatcher(HubCore &core, RunService &runs, DaemonGateway &executors, RunLogStore &logs,
                             std::chrono::milliseconds grace, QObject *parent)
    : QObject(parent), m_core(core), m_runs(runs), m_executors(executors), m_logs(logs), m_grace(grace)
{
    connect(&runs, &RunService::runQueued, this, &RunDispatcher::dispatchQueued, Qt::QueuedConnection);
    connect(&runs, &RunService::runCancelled, this, [this](qint64 runId, qint64 executorId, const QString &reason) {
        if (tunnel::TunnelConnection *session = m_executors.session(executorId))
            session->sendControl(RunCancel{runId, reason});
        QMetaObject::invokeMethod(this, &RunDispatcher::dispatchQueued, Qt::QueuedConnection);
    });
    connect(&executors, &DaemonGateway::controlReceived, this, &RunDispatcher::onControl);
    connect(&executors, &DaemonGateway::daemonConnected, this, &RunDispatcher::onExecutorConnected);
    connect(&executors, &DaemonGateway::daemonDisconnected, this, &RunDispatcher::onExecutorDisconnected);

    // Runs a previous hub process left with an executor get the same grace:
    // their agent may well reconnect and carry on.
    m_startupGrace.setSingleShot(true);
    connect(&m_startupGrace, &QTimer::timeout, this, [this] {
        auto active = m_core.runStore().list(std::nullopt, false);
        if (!active)
            return;
        for (const RunRecord &run : std::as_const(*active)) {
            if (run.executorId && !m_executors.isConnected(*run.executorId))
                loseRunsOf(*run.executorId, QStringLiteral("its executor did not come back after the hub restarted"));
        }
    });
    m_startupGrace.start(m_grace);
}

int RunDispatcher::ceilingOf(qint64 executorId, bool hostProcess) const
{
    auto executor = m_core.executorStore().find(executorId);
    if (!executor)
        return 0;
    auto capabilities = AgentCapabilities::fromJson(executor->capabilities);
    if (!capabilities)
        return 0;
    // Sandboxed runs go to container agents, host-process runs to agents in
    // host mode: an agent never does the other kind.
    const bool hostMode = capabilities->mode == AgentCapabilities::Mode::Host;
    if (hostMode != hostProcess)
        return 0;
    return std::max(1, capabilities->maxConcurrent);
}

void RunDispatcher::dispatchQueued()
{
    if (m_dispatching)
        return;
    m_dispatching = true;
    auto queue = m_core.runStore().queued();
    if (!queue) {
        qCWarning(lcHub).noquote() << "cannot read the run queue:" << queue.error().message;
        m_dispatching = false;
        return;
    }
    for (const RunRecord &run : std::as_const(*queue)) {
        const QList<qint64> candidates = run.executorId ? QList<qint64>{*run.executorId} : m_executors.connectedIds();
        for (const qint64 executorId : candidates) {
            tunnel::TunnelConnection *session = m_executors.session(executorId);
            if (!session)
                continue;
            auto active = m_core.runStore().activeOn(executorId);
            if (!active || active->size() >= ceilingOf(executorId, run.hostProcess))
                continue;
            auto dispatched = m_core.runStore().markDispatched(run.id, executorId, m_core.clock().now());
            if (!dispatched)
                break;
            RunStart start;
            start.runId = run.id;
            start.image = run.image;
            start.runtime = run.runtime;
            start.argv = run.argv;
            start.workdir = QStringLiteral("runs/%1").arg(run.id);
            start.hostProcess = run.hostProcess;
            start.env = {{QStringLiteral("CLOOP_RUN_ID"), QString::number(run.id)},
                         {QStringLiteral("CLOOP_PROJECT"), run.projectPath}};
            session->sendControl(start);
            m_dispatchedThisSession[executorId].insert(run.id);
            qCInfo(lcHub).noquote() << "run" << run.id << "dispatched to executor" << executorId;
            break;
        }
    }
    m_dispatching = false;
}

void RunDispatcher::onControl(qint64 executorId, const ControlMessage &message)
{
    const QDateTime now = m_core.clock().now();
    const auto belongsHere = [&](qint64 runId) {
        auto run = m_core.runStore().find(runId);
        return run && run->executorId == executorId;
    };
    if (const auto *started = std::get_if<RunStarted>(&message)) {
        if (!belongsHere(started->runId))
            return;
        if (auto running = m_core.runStore().markRunning(started->runId, now); running)
            m_core.events().publish(HubEvent{QStringLiteral("run.started"), RunService::runJson(*running),
                                             running->projectId, now});
        return;
    }
    if (const auto *held = std::get_if<RunsHeld>(&message)) {
        reconcile(executorId, *held);
        return;
    }
    if (const auto *finished = std::get_if<RunFinished>(&message)) {
        if (!belongsHere(finished->runId))
            return;
        m_dispatchedThisSession[executorId].remove(finished->runId);
        if (Status expected = m_core.runStore().setLogExpected(finished->runId, finished->endOffset); !expected)
            qCWarning(lcHub).noquote() << expected.error().message;
        const bool succeeded = finished->exitCode && *finished->exitCode == 0 && finished->error.isEmpty();
        auto ended = m_core.runStore().finish(finished->runId,
                                              succeeded ? RunRecord::State::Succeeded : RunRecord::State::Failed,
                                              finished->exitCode, finished->error, now);
        if (ended) {
            qCInfo(lcHub).noquote() << "run" << ended->id << runStateName(ended->state)
                                    << (ended->exitCode ? QStringLiteral("exit %1").arg(*ended->exitCode) : ended->error);
            m_core.events().publish(HubEvent{QStringLiteral("run.finished"), RunService::runJson(*ended),
                                             ended->projectId, now});
        }
        dispatchQueued();
    }
}

void RunDispatcher::onExecutorConnected(qint64 executorId)
{
    if (QTimer *timer = m_graceTimers.take(executorId))
        timer->deleteLater();
    m_dispatchedThisSession.remove(executorId);
    if (tunnel::TunnelConnection *session = m_executors.session(executorId)) {
        connect(session->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
                [this, executorId](tunnel::Channel *channel) { acceptLogChannel(executorId, channel); });
    }
    dispatchQueued();
}

void RunDispatcher::acceptLogChannel(qint64 executorId, tunnel::Channel *channel)
{
    const QJsonObject meta = channel->metadata();
    const qint64 runId = meta.value(QLatin1String("run_id")).toInteger();
    auto run = m_core.runStore().find(runId);
    if (meta.value(QLatin1String("kind")).toString() != QLatin1String("run-log") || !run || run->executorId != executorId) {
        channel->refuse(QStringLiteral("no run %1 of this executor takes output").arg(runId));
        return;
    }
    channel->accept();
    // The agent resends from where the stored log ends: nothing is lost or
    // stored twice across reconnects.
    auto decoder = std::make_shared<LogRecordDecoder>(static_cast<quint64>(run->logEnd));
    tunnel::TunnelConnection *session = m_executors.session(executorId);
    session->sendControl(RunAck{runId, run->logEnd});
    QPointer<tunnel::Channel> guarded(channel);
    QPointer<tunnel::TunnelConnection> guardedSession(session);
    connect(channel, &tunnel::Channel::readyRead, this, [this, runId, decoder, guarded, guardedSession] {
        if (!guarded)
            return;
        if (Status fed = decoder->feed(guarded->readAll()); !fed) {
            qCWarning(lcHub).noquote() << "run" << runId << "log refused:" << fed.error().message;
            guarded->close(CloseCode::ProtocolError, fed.error().message);
            return;
        }
        const QList<LogRecord> records = decoder->takeRecords();
        if (records.isEmpty())
            return;
        if (Status stored = m_logs.append(runId, records); !stored) {
            qCWarning(lcHub).noquote() << "run" << runId << "log not stored:" << stored.error().message;
            guarded->close(CloseCode::Overflow, stored.error().message);
            return;
        }
        const qint64 end = static_cast<qint64>(records.last().end());
        if (Status recorded = m_core.runStore().setLogEnd(runId, end); !recorded)
            qCWarning(lcHub).noquote() << recorded.error().message;
        if (guardedSession)
            guardedSession->sendControl(RunAck{runId, end});
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
        loseRunsOf(executorId, QStringLiteral("its executor went away and did not come back within %1 s")
                                       .arg(m_grace.count() / 1000));
    });
    m_graceTimers.insert(executorId, timer);
    timer->start(m_grace);
}

void RunDispatcher::reconcile(qint64 executorId, const RunsHeld &held)
{
    auto active = m_core.runStore().activeOn(executorId);
    if (!active) {
        qCWarning(lcHub).noquote() << "cannot reconcile the runs of executor" << executorId << ":" << active.error().message;
        return;
    }
    const QSet<qint64> holds(held.runIds.cbegin(), held.runIds.cend());
    const QSet<qint64> inFlight = m_dispatchedThisSession.value(executorId);
    bool freed = false;
    for (const RunRecord &run : std::as_const(*active)) {
        if (holds.contains(run.id) || inFlight.contains(run.id))
            continue;
        freed |= loseRun(run.id, QStringLiteral("its executor does not have it (the start never reached the agent)"));
    }
    if (freed)
        dispatchQueued();
}

void RunDispatcher::loseRunsOf(qint64 executorId, const QString &reason)
{
    auto active = m_core.runStore().activeOn(executorId);
    if (!active)
        return;
    for (const RunRecord &run : std::as_const(*active))
        loseRun(run.id, reason);
    dispatchQueued();
}

bool RunDispatcher::loseRun(qint64 runId, const QString &reason)
{
    const QDateTime now = m_core.clock().now();
    auto lost = m_core.runStore().finish(runId, RunRecord::State::Lost, std::nullopt, reason, now);
    if (!lost)
        return false;
    qCWarning(lcHub).noquote() << "run" << runId << "lost:" << reason;
    m_core.events().publish(HubEvent{QStringLiteral("run.finished"), RunService::runJson(*lost), lost->projectId, now});
    return true;
}

} // namespace cloop::hub
