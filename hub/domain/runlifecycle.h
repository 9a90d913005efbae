#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/storage/runstore.h"

#include <QObject>

#include <functional>
#include <optional>

namespace cloop::hub {

class EventBus;

// A run's life after it was queued, as the hub decides and its executor
// reports: dispatched, running, its output stored, ended. This is the
// dispatcher's side of the run records; what people ask for goes through
// RunService.
//
// Every end of a run goes through end(), whoever decides it: the executor's
// report, a refusal at dispatch, a loss, a cancel. It changes the state
// once, then emits runEnded so that what the run held is given back (the
// dispatcher detaches its devices, tells its executor of a cancel and
// serves the queue again), then publishes run.finished.
class RunLifecycle final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunLifecycle)

public:
    // How a run ends.
    struct Ending
    {
        RunRecord::State state = RunRecord::State::Failed; // a final state
        std::optional<int> exitCode;
        QString error; // why, unless it succeeded
        // Set: the executor's report, which applies only to a run
        // dispatched to that executor; unset: the hub's own decision.
        std::optional<qint64> reportedBy;

        static Ending failed(const QString &why)
        {
            return { RunRecord::State::Failed, {}, why, {} };
        }
        static Ending lost(const QString &why) { return { RunRecord::State::Lost, {}, why, {} }; }
        static Ending cancelled(const QString &why)
        {
            return { RunRecord::State::Cancelled, {}, why, {} };
        }
        // What the executor said: succeeded with exit code 0 and no error.
        static Ending reported(
            qint64 executorId, std::optional<int> exitCode, const QString &error);
    };

    RunLifecycle(RunStore &runs, EventBus &events, const Clock &clock);

    Result<RunRecord> find(qint64 runId);
    // Oldest first: the order the queue is served in.
    Result<QList<RunRecord>> queued();
    // Every run that has not ended, on any executor or none.
    Result<QList<RunRecord>> unfinished();
    Result<QList<RunRecord>> activeOn(qint64 executorId);

    // The run goes to that executor with those devices lent to it, or
    // nothing changes (another member dispatched it, or a device is busy:
    // device_busy).
    Result<RunRecord> markDispatched(
        qint64 runId, qint64 executorId, const QList<RunStore::LentDevice> &devices = {});
    // Whether a run anywhere in the cluster holds that forwarder's device.
    Result<bool> isDeviceHeld(qint64 forwarderId);
    // What the run holds now, by the records every member shares.
    Result<QList<RunStore::LentDevice>> lentTo(qint64 runId) { return m_runs.lentTo(runId); }
    // The executor's report that the workload started; published as run.started.
    Result<RunRecord> markRunning(qint64 runId, qint64 executorId);
    // How far the run's output is stored, and where the executor said it
    // ends. On every piece of output: one statement, nothing published.
    Status setLogEnd(qint64 runId, qint64 end);
    Status setLogExpected(qint64 runId, qint64 end);

    // Ends the run, once: a run that already ended stays as it is and the
    // call fails ("run_state"). `alsoRecord` runs in the same transaction
    // as the state change (a cancel's audit entry).
    Result<RunRecord> end(qint64 runId, const Ending &ending,
        const std::function<Status(const RunRecord &)> &alsoRecord = {});

Q_SIGNALS:
    // Emitted by end() after the change committed and before run.finished
    // is published, so whatever the run held is free when people hear of it.
    void runEnded(const cloop::hub::RunRecord &run);

private:
    RunStore &m_runs;
    EventBus &m_events;
    const Clock &m_clock;
};

} // namespace cloop::hub
