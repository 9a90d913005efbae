#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/runstore.h"

#include <QJsonObject>
#include <QObject>

namespace cloop::hub {

class AccessPolicy;
class EventBus;
class ExecutorStore;
class ProjectStore;
class RunLifecycle;
class VirtualExecutorStore;

// A project's runs as people ask for them: created queued (by anyone with a
// role in the project), listed, read, cancelled. Who runs them, and when, is
// the dispatcher's business: it hears of a queued run through runQueued and
// of a cancel, like every end of a run, through RunLifecycle::runEnded.
class RunService final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunService)

public:
    RunService(RunStore &runs, RunLifecycle &lifecycle, ProjectStore &projects,
        ExecutorStore &executors, VirtualExecutorStore &virtualExecutors,
        const AccessPolicy &policy, EventBus &events, const Clock &clock);

    // {"project", "argv": [..], "image", "executor_id", "virtual_executor", "host_process"}
    Result<RunRecord> create(const ApiPrincipal &caller, const QJsonObject &body);
    Result<QList<RunRecord>> list(const ApiPrincipal &caller, bool includeFinished);
    Result<RunRecord> find(const ApiPrincipal &caller, qint64 runId);
    Result<RunRecord> cancel(const ApiPrincipal &caller, qint64 runId, const QString &reason);
    // A hub administrator asks an executor to install a harness with its
    // own installer table: a run of no project, pinned to that executor,
    // whose output is stored as any run's. The name is the device's to
    // know; the hub checks only its form.
    Result<RunRecord> installHarness(
        const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body);

Q_SIGNALS:
    void runQueued(qint64 runId);

private:
    RunStore &m_runs;
    RunLifecycle &m_lifecycle;
    ProjectStore &m_projects;
    ExecutorStore &m_executors;
    VirtualExecutorStore &m_virtualExecutors;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    const Clock &m_clock;
};

} // namespace cloop::hub
