#pragma once

#include "common/protocol/controlmessage.h"
#include "common/util/logthrottle.h"
#include "hub/storage/runstore.h"

namespace cloop::tunnel {
class Channel;
class TunnelConnection;
} // namespace cloop::tunnel

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <chrono>
#include <functional>
#include <optional>

namespace cloop::hub {

class DaemonGateway;
struct DevicePlanInput;
class DeviceStreams;
class DeviceUpgrades;
struct ExecutorRecord;
class ForwarderReach;
class HubCore;
struct PlannedDevice;
class RunLifecycle;
class RunLogStore;
class RunService;

// Gives queued runs to connected executor agents, oldest first, never more
// at once than an agent's ceiling (max_concurrent in what it reported), and
// follows what the agents report back. An agent that stays away longer than
// the grace period loses its runs; one that comes back in time keeps them.
// Runs change only through RunLifecycle; whenever one ends (whoever ended
// it), onRunEnded gives back what it held and serves the queue again.
class RunDispatcher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunDispatcher)

public:
    static constexpr std::chrono::milliseconds kDefaultGrace { 45'000 };

    RunDispatcher(HubCore &core, RunService &runs, DaemonGateway &executors, RunLogStore &logs,
        DeviceStreams &devices, const ForwarderReach &forwarders,
        std::chrono::milliseconds grace = kDefaultGrace, QObject *parent = nullptr);

    // An agent that drains for an upgrade is given no run until it is back
    // on its new version; its queued runs wait for it (or go elsewhere).
    void holdBackUpgrading(const DeviceUpgrades &upgrades);

    // In a cluster: the executors other members hold. A run none of this
    // member's agents can take waits for theirs unless none of those can
    // take it either.
    // Their runs are never lost while they are connected there, and the
    // runs of an executor connected nowhere (its member died with it) are
    // lost after the grace period by whichever member notices.
    // None: this member cannot tell now (its records did not answer lately).
    using ExecutorsElsewhere = std::function<std::optional<QList<qint64>>()>;
    void setExecutorsElsewhere(ExecutorsElsewhere executors);

    // Serves the queue now; also runs whenever something changed.
    void dispatchQueued();

Q_SIGNALS:
    // A queued run was ended because no executor could ever take it; `code`
    // is the reason's error code (executor_cannot_attach, not_bound, …).
    void runRefused(const QString &code);

private:
    // Gives one queued run to an executor that can take it and its devices;
    // ends it at once when no connected executor ever could.
    void dispatchRun(const RunRecord &run);
    // Step 1: the run's project's bindings now, their forwarders, and what
    // the gateways and streams know about them; false when unreadable.
    bool readPlanInput(const RunRecord &run, DevicePlanInput &input);
    // Steps 4 and 5 for a run the plan found devices for: its device
    // streams, then its start on the executor's session.
    void startRun(const RunRecord &run, qint64 executorId, tunnel::TunnelConnection &session,
        const QList<PlannedDevice> &plan);
    // Ends a queued run that cannot run, saying why.
    void refuseRun(const RunRecord &run, const Error &reason);
    // Whether an executor another member holds could take the run's devices.
    bool anotherMemberCouldTake(DevicePlanInput &input);
    // Whatever ended the run: its devices are detached, its executor hears
    // of a cancel, and the queue is served again (once, soon).
    void onRunEnded(const RunRecord &run);
    void scheduleDispatch();
    void onControl(qint64 executorId, const protocol::ControlMessage &message);
    // Records an agent's report that a run finished; one the records cannot
    // take now (full, unreachable) is kept and tried again every second.
    void recordFinish(qint64 executorId, const protocol::RunFinished &finished);
    void recordUnrecordedFinishes();
    // An executor reports only on runs dispatched to it: the run, or nothing
    // when it is not one; a refusal is logged, a few lines a minute at most
    // since an executor can repeat it.
    std::optional<RunRecord> ownRun(qint64 executorId, qint64 runId, QLatin1StringView what);
    void logRefusal(qint64 executorId, const QString &what);
    // Runs the hub gave this executor before its current session that the
    // agent does not hold never reached it: they are lost, not waited for.
    // Then the devices of the runs it holds stream again, and what it keeps
    // for a device its run no longer holds is released.
    void reconcile(qint64 executorId, const protocol::RunsHeld &held);
    // The devices a held run holds by the records, for streams to resume;
    // after a hub restart this process never lent them itself.
    void takeBackDevices(qint64 executorId, const RunRecord &run);
    // Ends one run as lost, with the reason, unless it had already ended.
    void loseRun(qint64 runId, const QString &reason);
    void onExecutorConnected(qint64 executorId);
    void onExecutorDisconnected(qint64 executorId);
    void loseRunsOf(qint64 executorId, const QString &reason);
    // A run's output arrives on a channel the agent opens per run and connection.
    void acceptLogChannel(qint64 executorId, tunnel::Channel *channel);
    // How many runs of this kind the executor takes at once (0: none).
    static int ceilingOf(const ExecutorRecord &executor, const RunRecord &run);

    HubCore &m_core;
    RunLifecycle &m_lifecycle;
    DaemonGateway &m_executors;
    RunLogStore &m_logs;
    DeviceStreams &m_devices;
    const ForwarderReach &m_forwarders;
    std::chrono::milliseconds m_grace;
    const DeviceUpgrades *m_upgrades = nullptr;
    ExecutorsElsewhere m_executorsElsewhere;
    QHash<qint64, QTimer *> m_graceTimers;
    // Per executor, the runs dispatched on its current session and not yet
    // finished: those may legitimately be missing from a runs.held that
    // crossed their start. Bounded by the executor's ceiling.
    QHash<qint64, QSet<qint64>> m_dispatchedThisSession;
    util::LogThrottle m_refusalLog;
    QTimer m_startupGrace;
    // In a cluster: since when each executor with active runs was seen
    // connected nowhere.
    QHash<qint64, QDateTime> m_absentSince;
    QTimer m_absenceCheck;
    void checkAbsentExecutors();
    bool isConnectedAnywhere(qint64 executorId) const;
    struct UnrecordedFinish
    {
        qint64 executorId = 0;
        protocol::RunFinished finished;
    };
    QHash<qint64, UnrecordedFinish> m_unrecordedFinishes;
    QTimer m_finishRetry;
    bool m_dispatching = false;
    bool m_dispatchScheduled = false;
};

} // namespace cloop::hub
