#include "hub/domain/runservice.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/protocol/agentcapabilities.h"
#include "common/protocol/controlmessage.h"
#include "common/util/clock.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/recordjson.h"
#include "hub/domain/runlifecycle.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"
#include "hub/storage/virtualexecutorstore.h"

#include <QJsonArray>

namespace cloop::hub {

namespace {
Error invalid(const QString &message)
{
    return Error::make(QStringLiteral("invalid_request"), message);
}
} // namespace

RunService::RunService(RunStore &runs, RunLifecycle &lifecycle, ProjectStore &projects,
    ExecutorStore &executors, VirtualExecutorStore &virtualExecutors, const AccessPolicy &policy,
    EventBus &events, const Clock &clock)
    : m_runs(runs)
    , m_lifecycle(lifecycle)
    , m_projects(projects)
    , m_executors(executors)
    , m_virtualExecutors(virtualExecutors)
    , m_policy(policy)
    , m_events(events)
    , m_clock(clock)
{ }

Result<RunRecord> RunService::create(const ApiPrincipal &caller, const QJsonObject &body)
{
    const QString path = body.value(QLatin1String("project")).toString();
    auto project = m_projects.findProject(path);
    if (!project)
        return project.error();
    if (Status allowed
        = m_policy.require(caller, project->id, AccessPolicy::ProjectAction::StartRun);
        !allowed)
        return allowed.error();

    NewRun run;
    run.projectId = project->id;
    run.requestedBy = caller.actor();
    const QJsonValue argv = body.value(QLatin1String("argv"));
    if (!argv.isArray() || argv.toArray().isEmpty() || argv.toArray().size() > protocol::kMaxArgv)
        return invalid(QStringLiteral(
            "\"argv\" must be an array of 1..%1 strings: the command and its arguments")
                           .arg(protocol::kMaxArgv));
    for (const QJsonValue &arg : argv.toArray()) {
        if (!arg.isString() || arg.toString().size() > protocol::kMaxArgLength
            || arg.toString().contains(QChar(u'\0')))
            return invalid(
                QStringLiteral("\"argv\" entries must be strings of at most %1 characters")
                    .arg(protocol::kMaxArgLength));
        run.argv.append(arg.toString());
    }
    run.image = body.value(QLatin1String("image")).toString();
    if (run.image.size() > 256 || run.image.startsWith(QLatin1Char('-')))
        return invalid(QStringLiteral("\"image\" is not an image reference"));
    run.virtualExecutor = body.value(QLatin1String("virtual_executor")).toString();
    if (!run.virtualExecutor.isEmpty()) {
        // A virtual executor names the agent and the sandbox settings.
        auto virtualExecutor = m_virtualExecutors.find(run.virtualExecutor);
        if (!virtualExecutor)
            return virtualExecutor.error();
        if (body.contains(QLatin1String("executor_id")) || body.contains(QLatin1String("executor")))
            return invalid(QStringLiteral(
                "give \"executor_id\", \"executor\" or \"virtual_executor\", not more than one"));
        run.executorId = virtualExecutor->executorId;
        run.runtime = virtualExecutor->runtime;
    }
    run.hostProcess = body.value(QLatin1String("host_process")).toBool(false);
    const QJsonValue executorId = body.value(QLatin1String("executor_id"));
    const QJsonValue executorName = body.value(QLatin1String("executor"));
    const bool byId = !executorId.isUndefined() && !executorId.isNull();
    const bool byName = !executorName.isUndefined() && !executorName.isNull();
    if (byId && byName)
        return invalid(QStringLiteral("give \"executor_id\" or \"executor\" (a name), not both"));
    if (byName && !executorName.isString())
        return invalid(QStringLiteral("\"executor\" must be an executor's name"));
    if (byId || byName) {
        auto record = byId ? m_executors.find(executorId.toInteger())
                           : m_executors.findActive(executorName.toString());
        if (!record)
            return record.error();
        if (record->isRevoked())
            return Error::make(QStringLiteral("executor_revoked"),
                QStringLiteral("executor %1 (%2) was revoked").arg(record->id).arg(record->name));
        run.executorId = record->id;
    }
    Database::Transaction transaction(m_runs.database());
    auto created = m_runs.create(run, m_clock.now());
    if (!created)
        return created.error();
    if (Status audited
        = AuditLog(m_runs.database())
              .append(run.requestedBy, auditaction::kRunStart,
                  QStringLiteral("run:%1").arg(created->id),
                  { { QStringLiteral("project"), path },
                      { QStringLiteral("argv"), QJsonArray::fromStringList(run.argv) } });
        !audited)
        return audited.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kRunQueued), runJson(*created),
        created->projectId, m_clock.now() });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "queued run" << created->id << "of" << path;
    Q_EMIT runQueued(created->id);
    return created;
}

Result<RunRecord> RunService::installHarness(
    const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::InstallHarness);
        !allowed)
        return allowed.error();
    const QJsonValue name = body.value(QLatin1String("name"));
    if (!name.isString() || !protocol::AgentCapabilities::isHarnessName(name.toString()))
        return invalid(QStringLiteral(
            "\"name\" must be a harness's name: what it is called on PATH (\"claude\")"));
    auto executor = m_executors.find(executorId);
    if (!executor)
        return executor.error();
    if (executor->isRevoked())
        return Error::make(QStringLiteral("executor_revoked"),
            QStringLiteral("executor %1 (%2) was revoked").arg(executor->id).arg(executor->name));
    NewRun run;
    run.requestedBy = caller.actor();
    run.executorId = executor->id;
    run.harness = name.toString();
    Database::Transaction transaction(m_runs.database());
    auto created = m_runs.create(run, m_clock.now());
    if (!created)
        return created.error();
    if (Status audited = AuditLog(m_runs.database())
                             .append(run.requestedBy, auditaction::kExecutorHarnessInstall,
                                 QStringLiteral("executor:%1").arg(executor->id),
                                 { { QStringLiteral("harness"), run.harness },
                                     { QStringLiteral("run_id"), created->id } });
        !audited)
        return audited.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kRunQueued), runJson(*created),
        created->projectId, m_clock.now() });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "asked executor" << executor->id << "to install"
                            << run.harness << "in run" << created->id;
    Q_EMIT runQueued(created->id);
    return created;
}

Result<QList<RunRecord>> RunService::list(const ApiPrincipal &caller, bool includeFinished)
{
    auto visible = m_policy.visibleProjects(caller);
    if (!visible)
        return visible.error();
    return m_runs.list(*visible, includeFinished);
}

Result<RunRecord> RunService::find(const ApiPrincipal &caller, qint64 runId)
{
    auto run = m_runs.find(runId);
    if (!run)
        return run.error();
    if (Status allowed
        = m_policy.require(caller, run->projectId, AccessPolicy::ProjectAction::ReadRun);
        !allowed)
        return allowed.error();
    return run;
}

Result<RunRecord> RunService::cancel(
    const ApiPrincipal &caller, qint64 runId, const QString &reason)
{
    auto run = find(caller, runId);
    if (!run)
        return run.error();
    const QString why = reason.isEmpty()
        ? QStringLiteral("cancelled by %1").arg(caller.userName)
        : QStringLiteral("cancelled by %1: %2").arg(caller.userName, reason);
    return m_lifecycle.end(runId, RunLifecycle::Ending::cancelled(why), [&](const RunRecord &) {
        return AuditLog(m_runs.database())
            .append(caller.actor(), auditaction::kRunCancel, QStringLiteral("run:%1").arg(runId),
                { { QStringLiteral("reason"), reason } });
    });
}

} // namespace cloop::hub
