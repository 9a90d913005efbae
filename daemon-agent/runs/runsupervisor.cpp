#include "daemon-agent/runs/runsupervisor.h"

#include "daemon-agent/agentlogging.h"
#include "daemon-agent/sandbox/podmansandbox.h"
#include "daemon-agent/sandbox/runspec.h"

namespace cloop::agent {

using namespace protocol;

RunSupervisor::RunSupervisor(WorkRoot workRoot, AgentCapabilities::Mode mode, QObject *parent)
    : QObject(parent), m_workRoot(std::move(workRoot)), m_mode(mode)
{
}

RunSupervisor::~RunSupervisor()
{
    // The sandboxes are children; their destructors remove their containers.
    for (const Active &active : std::as_const(m_active))
        active.sandbox->disconnect(this);
}

void RunSupervisor::refuse(qint64 runId, const QString &error)
{
    qCWarning(lcAgent).noquote() << "run" << runId << "refused:" << error;
    Q_EMIT report(RunFinished{runId, std::nullopt, error, 0});
}

void RunSupervisor::start(const RunStart &run)
{
    if (m_active.contains(run.runId))
        return; // the hub repeated itself after a reconnect
    if (run.hostProcess)
        return refuse(run.runId, QStringLiteral("host-process runs are not supported by this agent; it runs every "
                                                "workload in a sandbox"));
    if (m_mode != AgentCapabilities::Mode::Container)
        return refuse(run.runId, QStringLiteral("this agent is in host mode and has no sandbox for the run"));
    if (Status root = m_workRoot.ensureRoot(); !root)
        return refuse(run.runId, root.error().message);
    auto workdir = m_workRoot.runDirectory(run.workdir);
    if (!workdir)
        return refuse(run.runId, workdir.error().message);

    RunSpec spec;
    spec.runId = QString::number(run.runId);
    if (!run.image.isEmpty())
        spec.image = run.image;
    if (!run.runtime.isEmpty())
        spec.runtime = run.runtime;
    spec.argv = run.argv;
    spec.env = run.env;
    spec.workdir = *workdir;
    auto user = m_workRoot.workloadUser();
    if (!user)
        return refuse(run.runId, user.error().message);
    spec.user = *user;
    if (Status valid = spec.validate(); !valid)
        return refuse(run.runId, valid.error().message);
    if (spec.image == RunSpec::defaultImage() && !m_imageReady) {
        // The default image is made here from busybox, so runs need no registry.
        if (Status image = PodmanSandbox::ensureDefaultImage(); !image)
            return refuse(run.runId, image.error().message);
        m_imageReady = true;
    }

    auto *sandbox = new PodmanSandbox(this);
    const qint64 runId = run.runId;
    m_active.insert(runId, Active{sandbox, 0});
    connect(sandbox, &SandboxDriver::started, this, [this, runId](qint64) { Q_EMIT report(RunStarted{runId}); });
    connect(sandbox, &SandboxDriver::output, this, [this, runId](SandboxDriver::Stream, const QByteArray &bytes) {
        // The bytes go into the run's log stream (a later step); their count
        // already bounds what the hub may expect.
        if (auto it = m_active.find(runId); it != m_active.end())
            it->outputBytes += bytes.size();
    });
    connect(sandbox, &SandboxDriver::finished, this, [this, runId](int exitCode, const QString &error) {
        const Active active = m_active.take(runId);
        RunFinished finished{runId, std::nullopt, error, active.outputBytes};
        if (error.isEmpty())
            finished.exitCode = exitCode;
        qCInfo(lcAgent).noquote() << "run" << runId << "finished:" << (error.isEmpty() ? QStringLiteral("exit %1").arg(exitCode) : error);
        Q_EMIT report(finished);
        if (active.sandbox)
            active.sandbox->deleteLater();
    });
    if (Status started = sandbox->start(spec); !started) {
        m_active.remove(runId);
        sandbox->deleteLater();
        return refuse(runId, started.error().message);
    }
    qCInfo(lcAgent).noquote() << "run" << runId << "starting in" << *workdir;
}

void RunSupervisor::cancel(const RunCancel &cancel)
{
    auto it = m_active.find(cancel.runId);
    if (it == m_active.end())
        return;
    qCInfo(lcAgent).noquote() << "run" << cancel.runId << "cancelled:" << cancel.reason;
    it->sandbox->cancel();
}

} // namespace cloop::agent
