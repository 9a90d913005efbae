#include "hub/storage/runstore.h"

#include "hub/storage/database.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace cloop::hub {

namespace {

const QString kColumns = QStringLiteral(
    "SELECT r.id, r.project_id, p.path, r.requested_by, r.executor_id, r.virtual_executor, "
    "r.image, r.argv, "
    "r.host_process, r.state, r.exit_code, r.error, r.created_at, r.dispatched_at, r.started_at, "
    "r.finished_at, "
    "r.log_end, r.log_expected, r.runtime, r.harness FROM runs r LEFT JOIN projects p ON p.id = "
    "r.project_id");

RunRecord::State stateFromName(const QString &name)
{
    return api::Run::parseState(name).value_or(RunRecord::State::Lost);
}

RunRecord readRun(const Rows &q)
{
    RunRecord run;
    run.id = q.value(0).toLongLong();
    run.projectId = q.value(1).isNull() ? 0 : q.value(1).toLongLong();
    run.projectPath = q.value(2).toString();
    run.requestedBy = q.value(3).toString();
    if (!q.value(4).isNull())
        run.executorId = q.value(4).toLongLong();
    run.virtualExecutor = q.value(5).toString();
    run.image = q.value(6).toString();
    for (const QJsonValue &arg : QJsonDocument::fromJson(q.value(7).toString().toUtf8()).array())
        run.argv.append(arg.toString());
    run.hostProcess = q.value(8).toInt() != 0;
    run.state = stateFromName(q.value(9).toString());
    if (!q.value(10).isNull())
        run.exitCode = q.value(10).toInt();
    run.error = q.value(11).toString();
    run.createdAt = fromDbTime(q.value(12));
    run.dispatchedAt = fromDbTime(q.value(13));
    run.startedAt = fromDbTime(q.value(14));
    run.finishedAt = fromDbTime(q.value(15));
    run.logEnd = q.value(16).toLongLong();
    if (!q.value(17).isNull())
        run.logExpected = q.value(17).toLongLong();
    run.runtime = q.value(18).toString();
    run.harness = q.value(19).toString();
    return run;
}

QVariant nullIfEmpty(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

} // namespace

QString runStateName(RunRecord::State state)
{
    return QString(api::Run::stateName(state));
}

Result<QList<RunRecord>> RunStore::select(const QString &where, const QVariantList &binds)
{
    return m_db.queryAll(kColumns + where, binds, readRun);
}

Result<RunRecord> RunStore::create(const NewRun &run, const QDateTime &now)
{
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO runs (project_id, requested_by, executor_id, virtual_executor, "
                       "runtime, image, argv, "
                       "host_process, state, created_at, harness) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                       "'queued', ?, ?) RETURNING id"),
        { run.projectId != 0 ? QVariant(run.projectId) : QVariant(QMetaType(QMetaType::LongLong)),
            run.requestedBy,
            run.executorId ? QVariant(*run.executorId) : QVariant(QMetaType(QMetaType::LongLong)),
            nullIfEmpty(run.virtualExecutor), nullIfEmpty(run.runtime), nullIfEmpty(run.image),
            QString::fromUtf8(
                QJsonDocument(QJsonArray::fromStringList(run.argv)).toJson(QJsonDocument::Compact)),
            run.hostProcess ? 1 : 0, toDbTime(now), nullIfEmpty(run.harness) });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(ErrorCode::StorageError, QStringLiteral("run insert returned no id"));
    return find(inserted->value(0).toLongLong());
}

Result<RunRecord> RunStore::find(qint64 id)
{
    auto found = select(QStringLiteral(" WHERE r.id = ?"), { id });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return Error::make(
            QStringLiteral("not_found"), QStringLiteral("no run with id %1").arg(id));
    return found->first();
}

Result<QList<RunRecord>> RunStore::list(
    std::optional<QList<qint64>> projectIds, bool includeFinished)
{
    QString where = QStringLiteral(" WHERE 1 = 1");
    QVariantList binds;
    if (!includeFinished)
        where += QStringLiteral(" AND r.state IN ('queued', 'dispatched', 'running')");
    if (projectIds) {
        if (projectIds->isEmpty())
            return QList<RunRecord>();
        QStringList marks;
        for (const qint64 projectId : *projectIds) {
            marks.append(QStringLiteral("?"));
            binds.append(projectId);
        }
        where += QStringLiteral(" AND r.project_id IN (%1)").arg(marks.join(QLatin1Char(',')));
    }
    return select(where + QStringLiteral(" ORDER BY r.id"), binds);
}

Result<QList<RunRecord>> RunStore::queued()
{
    return select(QStringLiteral(" WHERE r.state = 'queued' ORDER BY r.id"), {});
}

Result<QList<RunRecord>> RunStore::activeOn(qint64 executorId)
{
    return select(
        QStringLiteral(
            " WHERE r.executor_id = ? AND r.state IN ('dispatched', 'running') ORDER BY r.id"),
        { executorId });
}

Result<RunRecord> RunStore::transition(qint64 id, const QStringList &from,
    const QString &assignments, const QVariantList &binds, std::optional<qint64> onExecutor)
{
    QStringList quoted;
    for (const QString &state : from)
        quoted.append(QLatin1Char('\'') + state + QLatin1Char('\''));
    QString where = QStringLiteral("id = ? AND state IN (%1)").arg(quoted.join(QLatin1Char(',')));
    QVariantList values = QVariantList(binds) << id;
    if (onExecutor) {
        where += QStringLiteral(" AND executor_id = ? AND dispatched_at IS NOT NULL");
        values << *onExecutor;
    }
    auto updated
        = m_db.query(QStringLiteral("UPDATE runs SET %1 WHERE %2").arg(assignments, where), values);
    if (!updated)
        return updated.error();
    auto run = find(id);
    if (!run)
        return run.error();
    if (updated->numRowsAffected() == 1)
        return run;
    if (onExecutor && !run->wasDispatchedTo(*onExecutor))
        return Error::make(QStringLiteral("run_state"),
            QStringLiteral("run %1 was not dispatched to executor %2").arg(id).arg(*onExecutor));
    return Error::make(QStringLiteral("run_state"),
        QStringLiteral("run %1 is %2; it cannot change that way")
            .arg(id)
            .arg(runStateName(run->state)));
}

Result<RunRecord> RunStore::markDispatched(qint64 id, qint64 executorId, const QDateTime &now)
{
    return transition(id, { QStringLiteral("queued") },
        QStringLiteral("state = 'dispatched', executor_id = ?, dispatched_at = ?"),
        { executorId, toDbTime(now) });
}

Result<RunRecord> RunStore::markRunning(qint64 id, qint64 executorId, const QDateTime &now)
{
    return transition(id, { QStringLiteral("dispatched") },
        QStringLiteral("state = 'running', started_at = ?"), { toDbTime(now) }, executorId);
}

namespace {

const QString kFinishAssignments
    = QStringLiteral("state = ?, exit_code = ?, error = ?, finished_at = ?");

QVariantList finishBinds(
    RunRecord::State final, std::optional<int> exitCode, const QString &error, const QDateTime &now)
{
    return { runStateName(final),
        exitCode ? QVariant(*exitCode) : QVariant(QMetaType(QMetaType::Int)), nullIfEmpty(error),
        toDbTime(now) };
}

} // namespace

Result<RunRecord> RunStore::finishOn(qint64 executorId, qint64 id, RunRecord::State final,
    std::optional<int> exitCode, const QString &error, const QDateTime &now)
{
    return transition(id, { QStringLiteral("dispatched"), QStringLiteral("running") },
        kFinishAssignments, finishBinds(final, exitCode, error, now), executorId);
}

Result<RunRecord> RunStore::finish(qint64 id, RunRecord::State final, std::optional<int> exitCode,
    const QString &error, const QDateTime &now)
{
    return transition(id,
        { QStringLiteral("queued"), QStringLiteral("dispatched"), QStringLiteral("running") },
        kFinishAssignments, finishBinds(final, exitCode, error, now));
}

Status RunStore::setLogEnd(qint64 id, qint64 logEnd)
{
    auto updated
        = m_db.query(QStringLiteral("UPDATE runs SET log_end = ? WHERE id = ?"), { logEnd, id });
    if (!updated)
        return updated.error();
    return {};
}

Status RunStore::setLogExpected(qint64 id, qint64 logExpected)
{
    auto updated = m_db.query(
        QStringLiteral("UPDATE runs SET log_expected = ? WHERE id = ?"), { logExpected, id });
    if (!updated)
        return updated.error();
    return {};
}

Status RunStore::lendDevices(qint64 runId, qint64 executorId, const QList<LentDevice> &devices)
{
    for (const LentDevice &device : devices) {
        if (device.exclusive) {
            auto holder = m_db.queryAll(
                QStringLiteral("SELECT run_id FROM lent_devices WHERE exclusive_forwarder = ?"),
                { device.forwarderId }, [](const Rows &q) { return q.value(0).toLongLong(); });
            if (!holder)
                return holder.error();
            if (!holder->isEmpty())
                return Error::make(ErrorCode::DeviceBusy,
                    QStringLiteral("the device of forwarder %1 is lent to run %2")
                        .arg(device.forwarderId)
                        .arg(holder->constFirst()));
        }
        auto inserted = m_db.query(
            QStringLiteral("INSERT INTO lent_devices (run_id, binding_id, forwarder_id, "
                           "executor_id, exclusive_forwarder, device) VALUES (?, ?, ?, ?, ?, ?)"),
            { runId, device.bindingId, device.forwarderId, executorId,
                device.exclusive ? QVariant(device.forwarderId)
                                 : QVariant(QMetaType::fromType<qint64>()),
                device.name });
        // Another member lent it between the check and the insert.
        if (!inserted)
            return Error::make(ErrorCode::DeviceBusy,
                QStringLiteral("the device of forwarder %1 was just lent to another run (%2)")
                    .arg(device.forwarderId)
                    .arg(inserted.error().message));
    }
    return {};
}

Status RunStore::releaseDevices(qint64 runId)
{
    auto removed
        = m_db.query(QStringLiteral("DELETE FROM lent_devices WHERE run_id = ?"), { runId });
    if (!removed)
        return removed.error();
    return {};
}

Result<QList<RunStore::LentDevice>> RunStore::lentTo(qint64 runId)
{
    return m_db.queryAll(
        QStringLiteral("SELECT binding_id, forwarder_id, exclusive_forwarder IS NOT NULL, device "
                       "FROM lent_devices WHERE run_id = ? ORDER BY binding_id"),
        { runId }, [](const Rows &q) {
            return LentDevice { q.value(0).toLongLong(), q.value(1).toLongLong(),
                q.value(2).toBool(), q.value(3).toString() };
        });
}

Result<bool> RunStore::isDeviceHeld(qint64 forwarderId)
{
    return m_db.queryOne(
        QStringLiteral("SELECT COUNT(*) FROM lent_devices WHERE exclusive_forwarder = ?"),
        { forwarderId }, [](const Rows &q) { return q.value(0).toLongLong() > 0; },
        Error::make(ErrorCode::StorageError, QStringLiteral("no count of lent devices")));
}

} // namespace cloop::hub
