#pragma once

#include "common/api/run.h"

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::hub {

class Database;

struct RunRecord
{
    // queued -> dispatched -> running -> succeeded | failed | cancelled | lost
    using State = api::Run::State; // spelled once, where the admin API spells it

    qint64 id = 0;
    qint64 projectId = 0; // 0: the executor's own maintenance, of no project
    QString projectPath;
    QString requestedBy;
    std::optional<qint64> executorId; // asked for, or the one it went to
    QString virtualExecutor;
    QString runtime; // from the virtual executor; empty: the agent's default
    QString image;
    QStringList argv;
    bool hostProcess = false;
    State state = State::Queued;
    std::optional<int> exitCode;
    QString error;
    QDateTime createdAt;
    QDateTime dispatchedAt;
    QDateTime startedAt;
    QDateTime finishedAt;
    qint64 logEnd = 0; // the run's log is stored up to here
    std::optional<qint64> logExpected; // where the agent said it ends
    QString harness; // set: the run installs this harness on its executor

    bool logComplete() const { return logExpected && logEnd >= *logExpected; }
    bool isFinished() const
    {
        return state == State::Succeeded || state == State::Failed || state == State::Cancelled
            || state == State::Lost;
    }
    // A run queued for (pinned to) an executor already names it; only once
    // dispatched is it that executor's to report on (started, finished,
    // output), in whatever state it went on to.
    bool wasDispatchedTo(qint64 executor) const
    {
        return executorId == executor && state != State::Queued && dispatchedAt.isValid();
    }
};

QString runStateName(RunRecord::State state);

struct NewRun
{
    qint64 projectId = 0; // 0: of no project (a harness install)
    QString requestedBy;
    std::optional<qint64> executorId;
    QString virtualExecutor;
    QString runtime;
    QString image;
    QStringList argv;
    bool hostProcess = false;
    QString harness;
};

// Runs and their life on the hub. State changes are guarded by the state
// they leave, so a late message (a finish after a cancel) changes nothing.
class RunStore
{
public:
    explicit RunStore(Database &db)
        : m_db(db)
    { }
    Database &database() { return m_db; }

    Result<RunRecord> create(const NewRun &run, const QDateTime &now);
    Result<RunRecord> find(qint64 id);
    Result<QList<RunRecord>> list(std::optional<QList<qint64>> projectIds, bool includeFinished);
    // Oldest first: the order the queue is served in.
    Result<QList<RunRecord>> queued();
    Result<QList<RunRecord>> activeOn(qint64 executorId);

    Result<RunRecord> markDispatched(qint64 id, qint64 executorId, const QDateTime &now);
    // The executor's reports: they move a run only from the states after its
    // dispatch, and only when it was dispatched to that executor.
    Result<RunRecord> markRunning(qint64 id, qint64 executorId, const QDateTime &now);
    Result<RunRecord> finishOn(qint64 executorId, qint64 id, RunRecord::State final,
        std::optional<int> exitCode, const QString &error, const QDateTime &now);
    // The hub's own decisions (refused, cancelled, lost): from queued,
    // dispatched or running to a final state.
    Result<RunRecord> finish(qint64 id, RunRecord::State final, std::optional<int> exitCode,
        const QString &error, const QDateTime &now);
    Status setLogEnd(qint64 id, qint64 logEnd);
    Status setLogExpected(qint64 id, qint64 logExpected);

    // The devices a run was lent at its dispatch, shared by the cluster's
    // members: a device one run at a time may hold (USB) is held until the
    // run ends or its binding does, and no member can lend it twice.
    struct LentDevice
    {
        qint64 bindingId = 0;
        qint64 forwarderId = 0;
        bool exclusive = false;
        QString name; // "fwd-lab"
    };
    // device_busy when another run holds one of them (nothing is written).
    Status lendDevices(qint64 runId, qint64 executorId, const QList<LentDevice> &devices);
    Status releaseDevices(qint64 runId);
    // Whether a run holds that forwarder's device for itself.
    Result<bool> isDeviceHeld(qint64 forwarderId);
    // What the run holds now (an ended binding's device is no longer there).
    Result<QList<LentDevice>> lentTo(qint64 runId);

private:
    Result<QList<RunRecord>> select(const QString &where, const QVariantList &binds);
    // `onExecutor`: the change applies only to a run dispatched to it.
    Result<RunRecord> transition(qint64 id, const QStringList &from, const QString &assignments,
        const QVariantList &binds, std::optional<qint64> onExecutor = std::nullopt);

    Database &m_db;
};

} // namespace cloop::hub
