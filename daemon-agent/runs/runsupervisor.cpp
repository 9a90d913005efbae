#include "daemon-agent/runs/runsupervisor.h"

#include "common/tunnel/channelmultiplexer.h"
#include "common/util/atomicfile.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/devices/deviceattacher.h"
#include "daemon-agent/harness/harnesspath.h"
#include "daemon-agent/sandbox/hostprocessdriver.h"
#include "daemon-agent/sandbox/podmansandbox.h"
#include "daemon-agent/sandbox/runspec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QThread>
#include <QTimer>

#include <QJsonObject>

#include <algorithm>

#include <unistd.h>

namespace cloop::agent {

using namespace protocol;

namespace {
// What a host-process workload's PATH is made of, before harness folders.
constexpr const char *kHostPath = "/usr/local/bin:/usr/bin:/bin";
} // namespace

RunSupervisor::RunSupervisor(WorkRoot workRoot, AgentCapabilities::Mode mode, QObject *parent)
    : RunSupervisor(std::move(workRoot), RunPolicy(mode, ::geteuid() == 0), parent)
{ }

RunSupervisor::RunSupervisor(WorkRoot workRoot, RunPolicy policy, QObject *parent)
    : QObject(parent)
    , m_workRoot(std::move(workRoot))
    , m_policy(policy)
{ }

RunSupervisor::~RunSupervisor()
{
    // The sandboxes are children; their destructors remove their containers.
    for (const Active &active : std::as_const(m_active))
        active.sandbox->disconnect(this);
    // An import under way finishes (its podman steps are bounded): a
    // podman ended mid-import could leave its storage locked.
    if (m_imageWorker) {
        m_imageWorker->disconnect(this);
        m_imageWorker->wait();
    }
}

QString RunSupervisor::sandboxIdFor(qint64 runId) const
{
    return QStringLiteral("%1-%2").arg(m_workRoot.sandboxTag()).arg(runId);
}

QString RunSupervisor::stateFilePath() const
{
    return m_workRoot.rootPath() + QLatin1Char('/') + WorkRoot::kRunsFile;
}

void RunSupervisor::recordActiveRuns() const
{
    QJsonArray ids;
    for (auto it = m_active.cbegin(); it != m_active.cend(); ++it)
        ids.append(it.key());
    if (Status root = m_workRoot.ensureRoot(); !root)
        return;
    if (Status written = util::writeFileAtomically(stateFilePath(),
            QJsonDocument(QJsonObject { { QStringLiteral("runs"), ids } }).toJson(), 0600);
        !written)
        qCWarning(lcAgent).noquote() << "cannot record the active runs:" << written.error().message;
}

void RunSupervisor::recoverLeftovers()
{
    QFile file(stateFilePath());
    if (!file.open(QIODevice::ReadOnly))
        return;
    const QJsonArray ids = QJsonDocument::fromJson(file.read(1024 * 1024))
                               .object()
                               .value(QLatin1String("runs"))
                               .toArray();
    file.close();
    for (const QJsonValue &value : ids) {
        const qint64 runId = value.toInteger();
        if (runId <= 0)
            continue;
        const QString name = PodmanSandbox::containerNameFor(sandboxIdFor(runId));
        QProcess removal;
        removal.start(QStringLiteral("podman"),
            { QStringLiteral("rm"), QStringLiteral("-f"), QStringLiteral("--time"),
                QStringLiteral("0"), name });
        removal.waitForFinished(30'000);
        qCInfo(lcAgent).noquote() << "removed" << name << "left by a previous agent process";
        Q_EMIT report(RunFinished { runId, std::nullopt,
            QStringLiteral("the executor agent restarted while the run was going; its sandbox "
                           "was removed"),
            0 });
    }
    recordActiveRuns();
}

void RunSupervisor::setDeviceAttacher(DeviceAttacher *attacher)
{
    m_devices = attacher;
    if (!attacher)
        return;
    connect(attacher, &DeviceAttacher::devicesSettled, this, [this](qint64 runId) {
        const auto waiting = m_waitingForDevices.constFind(runId);
        if (waiting == m_waitingForDevices.constEnd() || !m_devices
            || m_devices->isPending(*waiting))
            return;
        start(m_waitingForDevices.take(runId));
    });
}

void RunSupervisor::waitForDevices(const RunStart &run)
{
    // Bounded by the attachments themselves: each ends, ready or failed,
    // within its own time limit.
    qCInfo(lcAgent).noquote() << "run" << run.runId << "waits for its devices to attach";
    m_waitingForDevices.insert(run.runId, run);
}

void RunSupervisor::refuse(qint64 runId, const QString &error)
{
    // Devices attached for a run that will not start go now.
    if (m_devices)
        m_devices->runEnded(runId);
    qCWarning(lcAgent).noquote() << "run" << runId << "refused:" << error;
    Q_EMIT report(RunFinished { runId, std::nullopt, error, 0 });
}

void RunSupervisor::start(const RunStart &run)
{
    if (m_active.contains(run.runId) || m_waitingForDevices.contains(run.runId)
        || m_waitingForImage.count(run.runId) > 0)
        return; // the hub repeated itself after a reconnect
    if (!run.harness.isEmpty())
        return startHarnessInstall(run);
    if (Status allowed = m_policy.check(run); !allowed)
        return refuse(run.runId, allowed.error().message);
    auto workspace = prepareWorkspace(run);
    if (!workspace)
        return refuse(run.runId, workspace.error().message);
    const auto &[workdir, user] = *workspace;
    RunSpec spec = specFor(run, user);
    if (!run.devices.isEmpty()) {
        if (!m_devices)
            return refuse(
                run.runId, QStringLiteral("this agent does not attach forwarded devices"));
        if (m_devices->isPending(run))
            return waitForDevices(run);
        if (Status lent = addDevices(run, spec); !lent)
            return refuse(run.runId, lent.error().message);
    }
    spec.workdir = workdir;
    if (Status valid = spec.validate(); !valid)
        return refuse(run.runId, valid.error().message);
    if (awaitImage(run, spec, workdir))
        return;
    launch(run, spec, workdir);
}

Result<std::pair<QString, QString>> RunSupervisor::prepareWorkspace(const RunStart &run) const
{
    if (Status root = m_workRoot.ensureRoot(); !root)
        return root.error();
    auto workdir = m_workRoot.runDirectory(run.workdir);
    if (!workdir)
        return workdir.error();
    auto user = m_workRoot.workloadUser();
    if (!user)
        return user.error();
    return std::pair { *workdir, *user };
}

void RunSupervisor::startHarnessInstall(const RunStart &run)
{
    const std::optional<HarnessInstaller> installer = m_harnessInstalls.table.find(run.harness);
    if (!installer)
        return refuse(run.runId,
            QStringLiteral("no official installer for this harness: \"%1\" (this device installs "
                           "%2)")
                .arg(run.harness, m_harnessInstalls.table.names().join(QStringLiteral(", "))));
    if (!run.devices.isEmpty())
        return refuse(run.runId, QStringLiteral("a harness install takes no devices"));
    auto workspace = prepareWorkspace(run);
    if (!workspace)
        return refuse(run.runId, workspace.error().message);
    const auto &[workdir, user] = *workspace;
    const QString &home = m_harnessInstalls.home;
    if (Status made = ensureHarnessHome(home, user); !made)
        return refuse(run.runId, made.error().message);
    RunSpec spec;
    spec.runId = sandboxIdFor(run.runId);
    spec.argv = installer->command;
    spec.env = run.env;
    // The installer puts the harness in the home's per-user folders, where
    // the agent looks for it afterwards.
    spec.env.insert(QStringLiteral("HOME"), home);
    spec.env.insert(QStringLiteral("PATH"),
        prependToPath(QString::fromLatin1(kHostPath), harnessDirectoryCandidates(home)));
    spec.env.insert(QStringLiteral("CLOOP_HARNESS"), run.harness);
    spec.user = user;
    spec.workdir = workdir;
    if (Status valid = spec.validate(); !valid)
        return refuse(run.runId, valid.error().message);
    RunStart onHost = run;
    onHost.hostProcess = true;
    qCInfo(lcAgent).noquote() << "run" << run.runId << "installs the harness" << run.harness
                              << "with" << installer->command.join(QLatin1Char(' '));
    launch(onHost, spec, workdir);
    const auto active = m_active.find(run.runId);
    if (active == m_active.end())
        return;
    active->harness = run.harness;
    const qint64 runId = run.runId;
    QTimer::singleShot(m_harnessInstalls.timeout, active->sandbox, [this, runId] {
        const auto going = m_active.find(runId);
        if (going == m_active.end())
            return;
        qCWarning(lcAgent).noquote() << "run" << runId << "the installer of" << going->harness
                                     << "took too long; stopping it";
        going->timedOut = true;
        going->sandbox->cancel();
    });
}

RunSpec RunSupervisor::specFor(const RunStart &run, const QString &user) const
{
    RunSpec spec;
    spec.runId = sandboxIdFor(run.runId);
    if (!run.image.isEmpty())
        spec.image = run.image;
    if (!run.runtime.isEmpty())
        spec.runtime = run.runtime;
    spec.argv = run.argv;
    spec.env = run.env;
    // A workload on the host finds the installed harnesses by name.
    if (run.hostProcess && !spec.env.contains(QStringLiteral("PATH")))
        spec.env.insert(QStringLiteral("PATH"),
            prependToPath(QString::fromLatin1(kHostPath),
                existingHarnessDirectories(m_harnessInstalls.home)));
    spec.user = user;
    return spec;
}

Status RunSupervisor::addDevices(const RunStart &run, RunSpec &spec)
{
    if (Status ready = m_devices->checkReady(run); !ready)
        return ready;
    spec.env.insert(QStringLiteral("CLOOP_FORWARDED_DEVICES"), m_devices->environmentValue(run));
    const bool segment
        = std::any_of(run.devices.cbegin(), run.devices.cend(), [](const ForwardedDevice &device) {
              return device.kind == protocol::DeviceSpec::Kind::Segment;
          });
    if (segment)
        spec.addedCapabilities = { QStringLiteral("NET_ADMIN"), QStringLiteral("NET_RAW") };
    auto nodes = m_devices->deviceNodes(run, spec.user);
    if (!nodes)
        return nodes.error();
    spec.deviceNodes = *nodes;
    spec.usbNodesMayReturn
        = std::any_of(run.devices.cbegin(), run.devices.cend(), [](const ForwardedDevice &device) {
              return device.kind == protocol::DeviceSpec::Kind::Usb;
          });
    return {};
}

bool RunSupervisor::awaitImage(const RunStart &run, const RunSpec &spec, const QString &workdir)
{
    if (run.hostProcess || spec.image != RunSpec::defaultImage() || m_imageReady)
        return false;
    m_waitingForImage.insert_or_assign(run.runId, ImageWait { run, spec, workdir });
    if (m_imageWorker)
        return true;
    // The default image is made here from busybox, so runs need no registry.
    qCInfo(lcAgent).noquote() << "run" << run.runId << "waits for the default image";
    auto prepared = std::make_shared<Status>();
    ImagePreparer prepare
        = m_prepareImage ? m_prepareImage : [] { return PodmanSandbox::ensureDefaultImage(); };
    m_imageWorker = QThread::create([prepare, prepared] { *prepared = prepare(); });
    m_imageWorker->setObjectName(QStringLiteral("cloop-image"));
    connect(m_imageWorker, &QThread::finished, m_imageWorker, &QObject::deleteLater);
    connect(
        m_imageWorker, &QThread::finished, this, [this, prepared] { imagePrepared(*prepared); });
    m_imageWorker->start();
    return true;
}

void RunSupervisor::imagePrepared(const Status &prepared)
{
    m_imageWorker = nullptr;
    // A failure is not remembered: the next run tries again.
    m_imageReady = prepared.ok();
    for (auto &[runId, waiting] : std::exchange(m_waitingForImage, {})) {
        if (prepared)
            launch(waiting.run, waiting.spec, waiting.workdir);
        else
            refuse(runId, prepared.error().message);
    }
}

void RunSupervisor::launch(const RunStart &run, const RunSpec &spec, const QString &workdir)
{
    SandboxDriver *sandbox = run.hostProcess
        ? static_cast<SandboxDriver *>(new HostProcessDriver(this))
        : static_cast<SandboxDriver *>(new PodmanSandbox(this));
    const qint64 runId = run.runId;
    m_active.insert(runId, Active { sandbox, {}, false });
    connect(
        sandbox, &SandboxDriver::started, this, [this, runId, run, user = spec.user](qint64 pid) {
            Q_EMIT report(RunStarted { runId });
            if (m_devices && !run.devices.isEmpty())
                m_devices->sandboxStarted(run, pid, user);
        });
    Log &log = m_logs[runId];
    log.journal = std::make_unique<runs::OutputJournal>(m_retainBytes);
    openLogChannel(runId, log);
    connect(sandbox, &SandboxDriver::output, this,
        [this, runId](SandboxDriver::Stream stream, const QByteArray &bytes) {
            auto it = m_logs.find(runId);
            if (it == m_logs.end())
                return;
            it->second.journal->append(stream == SandboxDriver::Stream::Stdout
                    ? runs::OutputStream::Stdout
                    : runs::OutputStream::Stderr,
                bytes);
            pump(runId);
        });
    connect(
        sandbox, &SandboxDriver::finished, this, [this, runId](int exitCode, const QString &error) {
            sandboxFinished(runId, exitCode, error);
        });
    if (Status started = sandbox->start(spec); !started) {
        m_active.remove(runId);
        sandbox->deleteLater();
        return refuse(runId, started.error().message);
    }
    recordActiveRuns();
    qCInfo(lcAgent).noquote() << "run" << runId << "starting in" << workdir;
}

void RunSupervisor::sandboxFinished(qint64 runId, int exitCode, const QString &error)
{
    const Active active = m_active.take(runId);
    recordActiveRuns();
    quint64 end = 0;
    if (auto found = m_logs.find(runId); found != m_logs.end()) {
        found->second.finished = true;
        end = found->second.journal->endOffset();
    }
    if (m_devices)
        m_devices->runEnded(runId);
    RunFinished finished { runId, std::nullopt, error, static_cast<qint64>(end) };
    if (active.timedOut)
        finished.error = QStringLiteral("the installer of %1 did not finish within %2 s")
                             .arg(active.harness)
                             .arg(m_harnessInstalls.timeout.count());
    if (finished.error.isEmpty())
        finished.exitCode = exitCode;
    qCInfo(lcAgent).noquote() << "run" << runId << "finished:"
                              << (finished.error.isEmpty() ? QStringLiteral("exit %1").arg(exitCode)
                                                           : finished.error);
    if (!active.harness.isEmpty())
        Q_EMIT harnessInstallEnded(active.harness);
    Q_EMIT report(finished);
    if (active.sandbox)
        active.sandbox->deleteLater();
    forgetIfDone(runId);
}

void RunSupervisor::setChannels(tunnel::ChannelMultiplexer *channels)
{
    m_channels = channels;
    for (auto &[runId, log] : m_logs) {
        log.channel.clear();
        log.resumed = false;
        if (channels)
            openLogChannel(runId, log);
    }
}

void RunSupervisor::openLogChannel(qint64 runId, Log &log)
{
    if (!m_channels)
        return;
    auto channel = m_channels->openChannel(protocol::RunLogOpen { runId });
    if (!channel) {
        qCWarning(lcAgent).noquote()
            << "run" << runId << "has no log channel:" << channel.error().message;
        return;
    }
    log.channel = *channel;
    log.resumed = false;
    connect(*channel, &tunnel::Channel::writable, this, [this, runId] { pump(runId); });
}

void RunSupervisor::acknowledge(const RunAck &ack)
{
    auto found = m_logs.find(ack.runId);
    if (found == m_logs.end())
        return;
    Log *it = &found->second;
    const auto offset = static_cast<quint64>(ack.offset);
    if (Status released = it->journal->acknowledge(offset); !released) {
        qCWarning(lcAgent).noquote() << "run" << ack.runId << ":" << released.error().message;
        return;
    }
    if (!it->resumed) {
        // The first word of the hub on a channel is where its stored log
        // ends: sending resumes exactly there.
        it->resumed = true;
        it->sent = std::max(offset, it->journal->acknowledgedOffset());
    }
    pump(ack.runId);
    forgetIfDone(ack.runId);
}

void RunSupervisor::pump(qint64 runId)
{
    auto found = m_logs.find(runId);
    if (found == m_logs.end() || !found->second.channel || !found->second.resumed)
        return;
    Log *it = &found->second;
    auto records = it->journal->recordsFrom(it->sent);
    if (!records) {
        qCWarning(lcAgent).noquote() << "run" << runId << ":" << records.error().message;
        return;
    }
    for (const protocol::LogRecord &record : std::as_const(*records)) {
        // A refused write waits for writable(): the tunnel's flow control,
        // not this buffer, decides the pace; the journal bounds memory.
        if (!it->channel->write(protocol::encodeLogRecord(record)))
            return;
        it->sent = record.end();
    }
}

void RunSupervisor::forgetIfDone(qint64 runId)
{
    auto found = m_logs.find(runId);
    if (found == m_logs.end())
        return;
    const Log &log = found->second;
    if (!log.finished || log.journal->acknowledgedOffset() < log.journal->endOffset())
        return;
    if (log.channel)
        log.channel->close();
    m_logs.erase(found);
}

QList<qint64> RunSupervisor::heldRunIds() const
{
    QList<qint64> ids = m_active.keys();
    for (const auto &[runId, log] : m_logs) {
        if (!m_active.contains(runId))
            ids.append(runId);
    }
    // A start waiting for its devices to attach, or for the image, is
    // this agent's too.
    ids.append(m_waitingForDevices.keys());
    for (const auto &[runId, waiting] : m_waitingForImage)
        ids.append(runId);
    std::sort(ids.begin(), ids.end());
    return ids;
}

qsizetype RunSupervisor::retainedBytes() const
{
    qsizetype total = 0;
    for (const auto &[runId, log] : m_logs)
        total += log.journal->retainedBytes();
    return total;
}

void RunSupervisor::cancel(const RunCancel &cancel)
{
    if (m_waitingForDevices.remove(cancel.runId) || m_waitingForImage.erase(cancel.runId) > 0) {
        refuse(cancel.runId, QStringLiteral("cancelled before it started: %1").arg(cancel.reason));
        return;
    }
    auto it = m_active.find(cancel.runId);
    if (it == m_active.end())
        return;
    qCInfo(lcAgent).noquote() << "run" << cancel.runId << "cancelled:" << cancel.reason;
    it->sandbox->cancel();
}

} // namespace cloop::agent
