#include "hub/domain/runlifecycle.h"

#include "common/api/hubeventname.h"

#include "common/util/clock.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/recordjson.h"
#include "hub/storage/database.h"

namespace cloop::hub {

RunLifecycle::Ending RunLifecycle::Ending::reported(
    qint64 executorId, std::optional<int> exitCode, const QString &error)
{
    const bool succeeded = exitCode && *exitCode == 0 && error.isEmpty();
    return { succeeded ? RunRecord::State::Succeeded : RunRecord::State::Failed, exitCode, error,
        executorId };
}

RunLifecycle::RunLifecycle(RunStore &runs, EventBus &events, const Clock &clock)
    : m_runs(runs)
    , m_events(events)
    , m_clock(clock)
{ }

Result<RunRecord> RunLifecycle::find(qint64 runId)
{
    return m_runs.find(runId);
}

Result<QList<RunRecord>> RunLifecycle::queued()
{
    return m_runs.queued();
}

Result<QList<RunRecord>> RunLifecycle::unfinished()
{
    return m_runs.list(std::nullopt, false);
}

Result<QList<RunRecord>> RunLifecycle::activeOn(qint64 executorId)
{
    return m_runs.activeOn(executorId);
}

Result<RunRecord> RunLifecycle::markDispatched(
    qint64 runId, qint64 executorId, const QList<RunStore::LentDevice> &devices)
{
    // One change: of members dispatching at once, one gives the run (the
    // guarded state), and a device is lent to one run only.
    Database::Transaction transaction(m_runs.database());
    auto dispatched = m_runs.markDispatched(runId, executorId, m_clock.now());
    if (!dispatched)
        return dispatched.error();
    if (Status lent = m_runs.lendDevices(runId, executorId, devices); !lent)
        return lent.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return dispatched;
}

Result<bool> RunLifecycle::isDeviceHeld(qint64 forwarderId)
{
    return m_runs.isDeviceHeld(forwarderId);
}

Result<RunRecord> RunLifecycle::markRunning(qint64 runId, qint64 executorId)
{
    const QDateTime now = m_clock.now();
    Database::Transaction transaction(m_runs.database());
    auto running = m_runs.markRunning(runId, executorId, now);
    if (!running)
        return running.error();
    m_events.publish(HubEvent {
        QString(api::hubeventname::kRunStarted), runJson(*running), running->projectId, now });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return running;
}

Status RunLifecycle::setLogEnd(qint64 runId, qint64 end)
{
    return m_runs.setLogEnd(runId, end);
}

Status RunLifecycle::setLogExpected(qint64 runId, qint64 end)
{
    return m_runs.setLogExpected(runId, end);
}

Result<RunRecord> RunLifecycle::end(
    qint64 runId, const Ending &ending, const std::function<Status(const RunRecord &)> &alsoRecord)
{
    const QDateTime now = m_clock.now();
    Database::Transaction transaction(m_runs.database());
    auto ended = ending.reportedBy
        ? m_runs.finishOn(
            *ending.reportedBy, runId, ending.state, ending.exitCode, ending.error, now)
        : m_runs.finish(runId, ending.state, ending.exitCode, ending.error, now);
    if (!ended)
        return ended.error();
    if (alsoRecord) {
        if (Status recorded = alsoRecord(*ended); !recorded)
            return recorded.error();
    }
    // What the run was lent goes back with its end.
    if (Status released = m_runs.releaseDevices(ended->id); !released)
        return released.error();
    // The dispatcher hears first (it detaches the run's devices), then the
    // subscribers; both only once the end committed.
    m_runs.database().afterCommit([this, run = *ended] { Q_EMIT runEnded(run); });
    m_events.publish(HubEvent {
        QString(api::hubeventname::kRunFinished), runJson(*ended), ended->projectId, now });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return ended;
}

} // namespace cloop::hub
