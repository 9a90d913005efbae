#pragma once

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/controlmessage.h"
#include "common/runs/outputjournal.h"
#include "daemon-agent/harness/harnesshome.h"
#include "daemon-agent/runs/runpolicy.h"
#include "daemon-agent/sandbox/runspec.h"
#include "daemon-agent/workroot/workroot.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>
#include <map>
#include <memory>

namespace cloop::tunnel {
class Channel;
class ChannelMultiplexer;
} // namespace cloop::tunnel

namespace cloop::agent {

class DeviceAttacher;
class SandboxDriver;

// The runs the hub gave this agent: each workload confined to its run
// directory and started in a sandbox; what happens to it is reported back
// as control messages (started, finished with the exit code or the engine's
// own error). Everything from the hub is checked again here.
class RunSupervisor final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunSupervisor)

public:
    // The policy of an agent in `mode` as the user it runs as.
    RunSupervisor(
        WorkRoot workRoot, protocol::AgentCapabilities::Mode mode, QObject *parent = nullptr);
    RunSupervisor(WorkRoot workRoot, RunPolicy policy, QObject *parent = nullptr);
    ~RunSupervisor() override;

    // Runs a previous process of this agent recorded and left behind: their
    // sandboxes are removed (nothing else is touched) and the hub is told.
    void recoverLeftovers();

    void start(const protocol::RunStart &run);
    void cancel(const protocol::RunCancel &cancel);
    // The hub stored a run's output up to the offset (also where to resume).
    void acknowledge(const protocol::RunAck &ack);
    int activeCount() const { return static_cast<int>(m_active.size()); }
    // Every run this process still has: waiting for its devices, running,
    // or with output to deliver.
    QList<qint64> heldRunIds() const;

    // The tunnel is up (again): every run with output the hub lacks gets a
    // log channel on it. Null when the tunnel went down.
    void setChannels(tunnel::ChannelMultiplexer *channels);
    // Output retained per run while the hub has not stored it.
    void setRetainBytes(qsizetype bytes) { m_retainBytes = bytes; }
    // Where runs' forwarded devices are attached (not owned; may be null:
    // then a run with devices is refused).
    void setDeviceAttacher(DeviceAttacher *attacher);
    qsizetype retainedBytes() const;
    // How runs that install a harness (RunStart::harness) are done.
    void setHarnessInstalls(HarnessInstalls installs) { m_harnessInstalls = std::move(installs); }
    const HarnessInstalls &harnessInstalls() const { return m_harnessInstalls; }
    // Makes the default image (PodmanSandbox::ensureDefaultImage unless
    // told otherwise). It runs on a thread of its own, since an import can
    // take seconds: this thread carries the runs' device streams and the
    // tunnel's heartbeat meanwhile. It must not touch the supervisor.
    using ImagePreparer = std::function<Status()>;
    void setImagePreparer(ImagePreparer preparer) { m_prepareImage = std::move(preparer); }

Q_SIGNALS:
    void report(const cloop::protocol::ControlMessage &message);
    // An installer ended (however it ended), just before its run's finish
    // is reported: what is on PATH may have changed.
    void harnessInstallEnded(const QString &name);

private:
    struct Active
    {
        SandboxDriver *sandbox = nullptr;
        QString harness; // the run installs it
        bool timedOut = false;
    };

    // One run's output on its way to the hub: what it has not acknowledged
    // (bounded, with explicit gaps), and what was sent on this connection.
    struct Log
    {
        std::unique_ptr<runs::OutputJournal> journal;
        QPointer<tunnel::Channel> channel;
        quint64 sent = 0;
        bool resumed = false; // the hub said where to start on this channel
        bool finished = false;
    };

    void refuse(qint64 runId, const QString &error);
    // The run's workdir (made, confined) and the user its workload runs as.
    Result<std::pair<QString, QString>> prepareWorkspace(const protocol::RunStart &run) const;
    // The installer of the device's own table, as the workload user on the
    // host, with the harness home as its HOME; bounded in time.
    void startHarnessInstall(const protocol::RunStart &run);
    // What the hub asked for, as the sandbox is told it; devices and the
    // workdir are added once they are known to be ready.
    RunSpec specFor(const protocol::RunStart &run, const QString &user) const;
    // The run's attached devices: their nodes, the variable naming them and,
    // for a segment, the capabilities to configure it.
    Status addDevices(const protocol::RunStart &run, RunSpec &spec);
    // Whether the run must wait for the default image, which is then
    // being made; it starts (or is refused) once that is done.
    bool awaitImage(const protocol::RunStart &run, const RunSpec &spec, const QString &workdir);
    void imagePrepared(const Status &prepared);
    void launch(const protocol::RunStart &run, const RunSpec &spec, const QString &workdir);
    void sandboxFinished(qint64 runId, int exitCode, const QString &error);
    // The start waits until its devices have attached (or failed to).
    void waitForDevices(const protocol::RunStart &run);
    void openLogChannel(qint64 runId, Log &log);
    void pump(qint64 runId);
    void forgetIfDone(qint64 runId);
    // The runs with a sandbox, kept in the work root so a restarted agent
    // knows what is its own to clean up.
    void recordActiveRuns() const;
    QString stateFilePath() const;
    // What the run's sandbox is known by on this machine: the hub's run id
    // is unique only among that hub's runs.
    QString sandboxIdFor(qint64 runId) const;

    WorkRoot m_workRoot;
    RunPolicy m_policy;
    QHash<qint64, Active> m_active;
    std::map<qint64, Log> m_logs; // a journal is not copyable
    QPointer<tunnel::ChannelMultiplexer> m_channels;
    qsizetype m_retainBytes = runs::OutputJournal::kDefaultRetainBytes;
    DeviceAttacher *m_devices = nullptr;
    QHash<qint64, protocol::RunStart> m_waitingForDevices;
    struct ImageWait
    {
        protocol::RunStart run;
        RunSpec spec;
        QString workdir;
    };
    std::map<qint64, ImageWait> m_waitingForImage;
    ImagePreparer m_prepareImage;
    QPointer<QThread> m_imageWorker;
    bool m_imageReady = false;
    HarnessInstalls m_harnessInstalls;
};

} // namespace cloop::agent
