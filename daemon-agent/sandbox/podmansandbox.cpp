#include "daemon-agent/sandbox/podmansandbox.h"

#include "daemon-agent/agentlogging.h"

#include <cerrno>
#include <cstring>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtEndian>

#include <sys/stat.h>
#include <unistd.h>

namespace cloop::agent {

namespace {

using namespace std::chrono_literals;

// podman's own failures end its stderr with one "Error: ..." line; only
// the tail is kept to find it.
constexpr qsizetype kStderrTailBytes = 8192;
// After KILL, how long podman may take to notice the container is gone.
constexpr auto kAfterKill = 5s;
constexpr int kAfterKillMs = 5000;
// The destructor's removal: up to 20 rounds of `rm -f` + 500 ms wait.
constexpr int kRemoveAttempts = 20;
constexpr int kRemoveWaitMs = 500;
// Bounds for the blocking podman calls (rm, image exists, import).
constexpr int kCommandTimeoutMs = 60'000;
constexpr auto kFirstPidPoll = 30ms;
constexpr auto kPidPollInterval = 20ms;

// podman's documented exit codes for its own failures, and the markers it
// puts in the message when 126/127 come from the OCI runtime rather than
// from the workload (which may exit 126 or 127 by itself).
constexpr int kPodmanError = 125;
constexpr int kCannotInvoke = 126;
constexpr int kNotFound = 127;
constexpr QByteArrayView kOciNotFound
    = "OCI runtime attempted to invoke a command that was not found";
constexpr QByteArrayView kOciPermission = "OCI permission denied";
constexpr QByteArrayView kOciRuntimeError = "OCI runtime error";
// With --init the command is exec'd by catatonit, not by the runtime: a
// missing or unexecutable command is then catatonit's exit 1 and this line.
constexpr QByteArrayView kInitExecFailed = "): failed to exec pid1: ";
constexpr QByteArrayView kInitPrefix = "ERROR (catatonit:";

struct CommandResult
{
    bool ran = false; // started and exited by itself within the bound
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    QString problem; // why it did not run, for messages
};

CommandResult runCommand(const QString &program, const QStringList &arguments)
{
    CommandResult result;
    QProcess process;
    process.setStandardInputFile(QProcess::nullDevice());
    process.start(program, arguments);
    if (!process.waitForStarted(kCommandTimeoutMs)) {
        result.problem = QStringLiteral("cannot run %1: %2").arg(program, process.errorString());
        return result;
    }
    if (!process.waitForFinished(kCommandTimeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        result.problem = QStringLiteral("%1 %2 did not finish within %3 s")
                             .arg(program, arguments.value(0))
                             .arg(kCommandTimeoutMs / 1000);
        return result;
    }
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    if (process.exitStatus() != QProcess::NormalExit) {
        result.problem = QStringLiteral("%1 %2 crashed").arg(program, arguments.value(0));
        return result;
    }
    result.ran = true;
    result.exitCode = process.exitCode();
    return result;
}

QByteArray lastLine(const QByteArray &text)
{
    const QList<QByteArray> lines = text.trimmed().split('\n');
    return lines.isEmpty() ? QByteArray() : lines.constLast().trimmed();
}

Error engineFailure(const QString &what, const CommandResult &result)
{
    const QString detail = result.ran ? QStringLiteral("exit %1: %2")
                                            .arg(result.exitCode)
                                            .arg(QString::fromUtf8(lastLine(result.err)))
                                      : result.problem;
    return Error::make(
        QStringLiteral("sandbox_engine"), QStringLiteral("%1 (%2)").arg(what, detail));
}

// A dynamically linked busybox would need its loader and libraries in the
// image; this says so instead of importing an image that cannot run.
bool isDynamicElf(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QByteArray header = file.read(64);
    // Only 64-bit little-endian is inspected; anything else is assumed fine
    // and will show its problem when run.
    if (header.size() < 64
        || !header.startsWith("\x7f"
                              "ELF")
        || header.at(4) != 2 || header.at(5) != 1) {
        return false;
    }
    const auto *raw = reinterpret_cast<const uchar *>(header.constData());
    const quint64 phoff = qFromLittleEndian<quint64>(raw + 0x20);
    const quint16 phentsize = qFromLittleEndian<quint16>(raw + 0x36);
    const quint16 phnum = qFromLittleEndian<quint16>(raw + 0x38);
    constexpr quint32 kPtInterp = 3;
    for (quint16 i = 0; i < phnum; ++i) {
        if (!file.seek(qint64(phoff + quint64(i) * phentsize)))
            return false;
        const QByteArray type = file.read(4);
        if (type.size() == 4
            && qFromLittleEndian<quint32>(reinterpret_cast<const uchar *>(type.constData()))
                == kPtInterp) {
            return true;
        }
    }
    return false;
}

Status writeSmallFile(const QString &path, const QByteArray &contents)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        || file.write(contents) != contents.size()) {
        return Error::make(QStringLiteral("sandbox_image"),
            QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    }
    return {};
}

// busybox, one symlink per applet at the place `--list-full` names, and
// just enough /etc for `id` and `ls -l` to print names.
Status buildBusyboxRootfs(const QString &busybox, const QString &rootfs)
{
    const QStringList folders = { QStringLiteral("bin"), QStringLiteral("sbin"),
        QStringLiteral("usr/bin"), QStringLiteral("usr/sbin"), QStringLiteral("etc"),
        QStringLiteral("tmp"), QStringLiteral("proc"), QStringLiteral("sys"), QStringLiteral("dev"),
        QStringLiteral("run"), QStringLiteral("work"), QStringLiteral("root"),
        QStringLiteral("var/tmp") };
    for (const QString &folder : folders) {
        if (!QDir().mkpath(rootfs + QLatin1Char('/') + folder)) {
            return Error::make(QStringLiteral("sandbox_image"),
                QStringLiteral("cannot create %1 in %2").arg(folder, rootfs));
        }
    }
    ::chmod(QFile::encodeName(rootfs + QStringLiteral("/tmp")).constData(), 01777);
    ::chmod(QFile::encodeName(rootfs + QStringLiteral("/var/tmp")).constData(), 01777);
    ::chmod(QFile::encodeName(rootfs + QStringLiteral("/root")).constData(), 0700);

    const QString target = rootfs + QStringLiteral("/bin/busybox");
    if (!QFile::copy(busybox, target)) {
        return Error::make(QStringLiteral("sandbox_image"),
            QStringLiteral("cannot copy %1 into the image").arg(busybox));
    }
    QFile::setPermissions(target,
        QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup
            | QFile::ReadOther | QFile::ExeOther);

    const CommandResult list = runCommand(busybox, { QStringLiteral("--list-full") });
    if (!list.ran || list.exitCode != 0)
        return engineFailure(QStringLiteral("busybox --list-full failed"), list);
    for (const QByteArray &line : list.out.split('\n')) {
        const QByteArray applet = line.trimmed();
        if (applet.isEmpty() || applet.contains("..") || applet.startsWith('/'))
            continue;
        const QString link = rootfs + QLatin1Char('/') + QFile::decodeName(applet);
        if (QFileInfo::exists(link))
            continue;
        QDir().mkpath(QFileInfo(link).path());
        if (::symlink("/bin/busybox", QFile::encodeName(link).constData()) != 0) {
            return Error::make(QStringLiteral("sandbox_image"),
                QStringLiteral("cannot link %1: %2")
                    .arg(link, QString::fromLocal8Bit(std::strerror(errno))));
        }
    }

    if (Status s = writeSmallFile(rootfs + QStringLiteral("/etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n");
        !s) {
        return s;
    }
    return writeSmallFile(rootfs + QStringLiteral("/etc/group"), "root:x:0:\nnogroup:x:65534:\n");
}

} // namespace

PodmanSandbox::PodmanSandbox(QObject *parent)
    : PodmanSandbox(PodmanSandboxOptions(), parent)
{ }

PodmanSandbox::PodmanSandbox(PodmanSandboxOptions options, QObject *parent)
    : SandboxDriver(parent)
    , m_options(std::move(options))
{
    m_pidPoll.setSingleShot(true);
    m_graceTimer.setSingleShot(true);
    m_killTimer.setSingleShot(true);
    connect(&m_pidPoll, &QTimer::timeout, this, &PodmanSandbox::pollPid);
    connect(&m_graceTimer, &QTimer::timeout, this, &PodmanSandbox::onGraceExpired);
    connect(&m_killTimer, &QTimer::timeout, this, &PodmanSandbox::onKillExpired);
}

PodmanSandbox::~PodmanSandbox()
{
    m_pidPoll.stop();
    m_graceTimer.stop();
    m_killTimer.stop();
    // podman processes are waited for rather than killed where possible: a
    // podman killed while it holds one of its container locks can leave
    // that lock taken for every later podman command.
    const QList<QProcess *> helpers = findChildren<QProcess *>(Qt::FindDirectChildrenOnly);
    for (QProcess *helper : helpers)
        helper->waitForFinished(kCommandTimeoutMs);
    if (m_inspect) {
        m_inspect->disconnect(this);
        m_inspect->waitForFinished(kCommandTimeoutMs);
    }
    if (m_process && m_process->state() != QProcess::NotRunning) {
        // Nothing may reach a half-destroyed object. Removing the container
        // ends the workload, and then `podman run` by itself; podman may
        // still be creating the container when rm looks, so rm is repeated
        // until podman returns (bounded).
        m_process->disconnect(this);
        bool ended = false;
        for (int attempt = 0; attempt < kRemoveAttempts && !ended; ++attempt) {
            removeContainerBlocking();
            ended = m_process->waitForFinished(kRemoveWaitMs);
        }
        if (!ended) {
            m_process->kill();
            m_process->waitForFinished(kAfterKillMs);
            removeContainerBlocking();
        }
    } else if (m_cleanup && m_cleanup->state() != QProcess::NotRunning) {
        m_cleanup->disconnect(this);
        m_cleanup->waitForFinished(kCommandTimeoutMs);
    }
}

QString PodmanSandbox::containerNameFor(const QString &runId)
{
    return QStringLiteral("cloop-run-") + runId;
}

QByteArray PodmanSandbox::envFileContents(const RunSpec &spec)
{
    // podman takes each line verbatim after the first '=' (no quoting), so
    // any value without a line break passes unchanged.
    QByteArray contents;
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it)
        contents += it.key().toUtf8() + '=' + it.value().toUtf8() + '\n';
    return contents;
}

QStringList PodmanSandbox::runArguments(const RunSpec &spec, const QString &envFile)
{
    QStringList args = {
        QStringLiteral("run"),
        QStringLiteral("--rm"),
        QStringLiteral("--name"),
        containerNameFor(spec.runId),
        QStringLiteral("--label"),
        QStringLiteral("cloop.run-id=") + spec.runId,
        // A run never dials a registry by accident; images are imported or
        // pulled by the agent beforehand, and a missing one fails at once.
        QStringLiteral("--pull"),
        QStringLiteral("never"),
        QStringLiteral("--runtime"),
        spec.runtime,
        // Own network namespace with only lo; a forwarded TAP is moved in
        // later through pid().
        QStringLiteral("--network"),
        QStringLiteral("none"),
        // Otherwise the host's /etc/hosts (lab host names) is copied in.
        QStringLiteral("--no-hosts"),
        // Output is read from the attached pipes; conmon's log file would
        // store every byte a second time on the device's disk.
        QStringLiteral("--log-driver"),
        QStringLiteral("none"),
        // A PID 1 that forwards TERM (a bare PID 1 ignores it) and reaps
        // orphans.
        QStringLiteral("--init"),
        QStringLiteral("--cap-drop"),
        QStringLiteral("ALL"),
        QStringLiteral("--security-opt"),
        QStringLiteral("no-new-privileges"),
        // (podman gives --cap-add capabilities to a non-root --user as
        // ambient ones, so the workload has them.)
        // The image is shared by every run: read-only, with a private /tmp.
        QStringLiteral("--read-only"),
        QStringLiteral("--read-only-tmpfs=false"),
        QStringLiteral("--tmpfs"),
        QStringLiteral("/tmp:rw,nosuid,nodev,size=%1").arg(spec.tmpSizeBytes),
        // The host's cgroup paths stay invisible (cgroup v1 defaults to host).
        QStringLiteral("--cgroupns"),
        QStringLiteral("private"),
        QStringLiteral("--pids-limit"),
        QString::number(spec.pidsLimit),
    };
    for (const QString &capability : spec.addedCapabilities)
        args << QStringLiteral("--cap-add") << capability;
    // Read, write and mknod in the device cgroup for exactly these nodes.
    for (const RunSpec::DeviceNode &node : spec.deviceNodes)
        args << QStringLiteral("--device")
             << QStringLiteral("%1:%2:rwm").arg(node.hostPath, node.sandboxPath);
    if (spec.usbNodesMayReturn)
        args << QStringLiteral("--device-cgroup-rule") << QStringLiteral("c 189:* rw");
    for (const Ulimit &limit : spec.ulimits) {
        args << QStringLiteral("--ulimit")
             << QStringLiteral("%1=%2:%3").arg(limit.name).arg(limit.soft).arg(limit.hard);
    }
    if (spec.memoryLimitBytes) {
        // Equal swap limit: the memory limit is not silently doubled by swap.
        const QString bytes = QString::number(*spec.memoryLimitBytes);
        args << QStringLiteral("--memory") << bytes << QStringLiteral("--memory-swap") << bytes;
    }
    args << QStringLiteral("--volume") << spec.workdir + QStringLiteral(":/work:rw,nosuid,nodev")
         << QStringLiteral("--workdir") << QStringLiteral("/work");
    if (!spec.user.isEmpty())
        args << QStringLiteral("--user") << spec.user;
    if (!spec.env.isEmpty())
        args << QStringLiteral("--env-file") << envFile;
    args << spec.image;
    args << spec.argv;
    return args;
}

Status PodmanSandbox::start(const RunSpec &spec)
{
    if (m_process) {
        return Error::make(QStringLiteral("sandbox_busy"),
            QStringLiteral("this sandbox already ran %1").arg(m_name), true);
    }
    if (Status valid = spec.validate(); !valid)
        return valid;
    if (!QFileInfo(spec.workdir).isDir()) {
        return Error::make(QStringLiteral("run_spec_invalid"),
            QStringLiteral("workdir %1 is not a directory").arg(spec.workdir), true);
    }

    QString envFile;
    if (!spec.env.isEmpty()) {
        // QTemporaryDir is 0700; the file is 0600 as well, for clarity.
        m_private = std::make_unique<QTemporaryDir>();
        envFile = m_private->filePath(QStringLiteral("env"));
        QFile file(envFile);
        const QByteArray contents = envFileContents(spec);
        if (!m_private->isValid()
            || !file.open(QIODevice::WriteOnly, QFile::ReadOwner | QFile::WriteOwner)
            || file.write(contents) != contents.size()) {
            return Error::make(QStringLiteral("sandbox_io"),
                QStringLiteral("cannot write the run's environment file: %1")
                    .arg(file.errorString()));
        }
    }

    m_name = containerNameFor(spec.runId);
    m_command = spec.argv.constFirst();
    m_process = std::make_unique<QProcess>();
    m_process->setProgram(m_options.podman);
    m_process->setArguments(runArguments(spec, envFile));
    m_process->setStandardInputFile(QProcess::nullDevice());
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    connect(m_process.get(), &QProcess::readyReadStandardOutput, this,
        &PodmanSandbox::onReadyReadStdout);
    connect(m_process.get(), &QProcess::readyReadStandardError, this,
        &PodmanSandbox::onReadyReadStderr);
    connect(m_process.get(), &QProcess::finished, this, &PodmanSandbox::onProcessFinished);
    connect(m_process.get(), &QProcess::errorOccurred, this, &PodmanSandbox::onProcessError);
    connect(m_process.get(), &QProcess::started, this, [this] {
        m_pidDeadline = std::chrono::steady_clock::now() + m_options.pidTimeout;
        m_pidPoll.start(kFirstPidPoll);
    });

    m_inspect = std::make_unique<QProcess>();
    m_inspect->setProgram(m_options.podman);
    m_inspect->setArguments({ QStringLiteral("inspect"), QStringLiteral("--format"),
        QStringLiteral("{{.State.Pid}}"), m_name });
    m_inspect->setStandardInputFile(QProcess::nullDevice());
    connect(m_inspect.get(), &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus) {
        if (m_finished)
            return;
        bool ok = false;
        const qint64 found = m_inspect->readAllStandardOutput().trimmed().toLongLong(&ok);
        m_inspect->readAllStandardError();
        if (exitCode == 0 && ok && found > 0) {
            m_pid = found;
            m_startedEmitted = true;
            // The container runs, so podman has read the env file: it goes
            // now, not at the end, so an agent killed mid-run leaves no
            // copy of the run's environment in the temporary folder.
            m_private.reset();
            qCDebug(lcAgentSandbox) << m_name << "runs as host pid" << m_pid;
            Q_EMIT started(m_pid);
            // A TERM sent before the container existed went nowhere.
            if (m_cancelRequested)
                sendSignal(QStringLiteral("TERM"));
            return;
        }
        if (std::chrono::steady_clock::now() < m_pidDeadline)
            m_pidPoll.start(kPidPollInterval);
        else
            qCWarning(lcAgentSandbox)
                << "no pid for" << m_name << "within" << m_options.pidTimeout.count() << "ms";
    });

    qCDebug(lcAgentSandbox) << "starting" << m_options.podman << m_process->arguments();
    m_process->start();
    return {};
}

void PodmanSandbox::cancel()
{
    if (!m_process || m_finished || m_cancelRequested)
        return;
    m_cancelRequested = true;
    qCInfo(lcAgentSandbox) << "cancelling" << m_name;
    sendSignal(QStringLiteral("TERM"));
    m_graceTimer.start(m_options.gracePeriod);
}

void PodmanSandbox::onGraceExpired()
{
    if (m_finished)
        return;
    qCInfo(lcAgentSandbox) << m_name << "ignored TERM for" << m_options.gracePeriod.count()
                           << "ms; killing it";
    sendSignal(QStringLiteral("KILL"));
    m_killTimer.start(kAfterKill);
}

void PodmanSandbox::onKillExpired()
{
    if (m_finished || !m_process || m_process->state() == QProcess::NotRunning)
        return;
    // podman is stuck; end it and remove the container by name instead.
    qCWarning(lcAgentSandbox) << "podman did not return after KILL of" << m_name
                              << "; ending podman and removing the container";
    m_forced = true;
    m_process->kill();
}

void PodmanSandbox::sendSignal(const QString &signal)
{
    // Fire and forget: the outcome is seen as `podman run` returning.
    auto *kill = new QProcess(this);
    kill->setStandardInputFile(QProcess::nullDevice());
    kill->setStandardOutputFile(QProcess::nullDevice());
    connect(kill, &QProcess::finished, kill, [kill, signal](int exitCode) {
        if (exitCode != 0)
            qCDebug(lcAgentSandbox)
                << "podman kill" << signal << ":" << kill->readAllStandardError().trimmed();
        kill->deleteLater();
    });
    connect(kill, &QProcess::errorOccurred, kill, [kill](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            kill->deleteLater();
    });
    kill->start(
        m_options.podman, { QStringLiteral("kill"), QStringLiteral("--signal"), signal, m_name });
}

void PodmanSandbox::pollPid()
{
    if (m_finished || m_startedEmitted || !m_process || m_process->state() != QProcess::Running
        || m_inspect->state() != QProcess::NotRunning) {
        return;
    }
    m_inspect->start();
}

void PodmanSandbox::onReadyReadStdout()
{
    const QByteArray bytes = m_process->readAllStandardOutput();
    if (!bytes.isEmpty())
        Q_EMIT output(Stream::Stdout, bytes);
}

void PodmanSandbox::onReadyReadStderr()
{
    const QByteArray bytes = m_process->readAllStandardError();
    if (bytes.isEmpty())
        return;
    m_stderrTail += bytes;
    if (m_stderrTail.size() > kStderrTailBytes)
        m_stderrTail = m_stderrTail.right(kStderrTailBytes);
    Q_EMIT output(Stream::Stderr, bytes);
}

QString PodmanSandbox::engineError(int &exitCode) const
{
    const QByteArray line = lastLine(m_stderrTail);
    if (exitCode == 1 && line.startsWith(kInitPrefix) && line.contains(kInitExecFailed)) {
        // Reported as podman would without --init: 127 when the command
        // does not exist, 126 when it cannot be executed.
        const QByteArray reason = line.mid(line.indexOf(kInitExecFailed) + kInitExecFailed.size());
        exitCode = reason == "No such file or directory" ? kNotFound : kCannotInvoke;
        return QStringLiteral("podman run failed (exit %1): cannot execute \"%2\" in the "
                              "sandbox: %3 (%4)")
            .arg(exitCode)
            .arg(m_command, QString::fromUtf8(reason), QString::fromUtf8(line));
    }
    if (exitCode != kPodmanError && exitCode != kCannotInvoke && exitCode != kNotFound)
        return {};
    if (!line.startsWith("Error: "))
        return {};
    if (exitCode != kPodmanError && !line.contains(kOciNotFound) && !line.contains(kOciPermission)
        && !line.contains(kOciRuntimeError)) {
        return {};
    }
    return QStringLiteral("podman run failed (exit %1): %2")
        .arg(exitCode)
        .arg(QString::fromUtf8(line.mid(7)));
}

void PodmanSandbox::onProcessError(QProcess::ProcessError error)
{
    // Other errors are followed by finished(); a failed start is not.
    if (error != QProcess::FailedToStart || m_finished)
        return;
    finish(-1,
        QStringLiteral("cannot run the container engine %1: %2")
            .arg(m_options.podman, m_process->errorString()));
}

void PodmanSandbox::onProcessFinished(int exitCode, QProcess::ExitStatus status)
{
    if (m_finished)
        return;
    // The last bytes may still sit in the pipes' buffers.
    onReadyReadStdout();
    onReadyReadStderr();
    m_pidPoll.stop();
    m_graceTimer.stop();
    m_killTimer.stop();

    int code = exitCode;
    QString error;
    if (status == QProcess::CrashExit) {
        m_forced = true;
        if (m_cancelRequested) {
            code = 128 + 9; // the workload ends by KILL through `podman rm -f`
        } else {
            code = -1;
            error = QStringLiteral("podman ended abnormally while running %1").arg(m_name);
        }
    } else {
        error = engineError(code);
    }

    if (!m_forced) {
        finish(code, error);
        return;
    }
    // podman died before its --rm could run: remove by name, then report.
    m_cleanup = std::make_unique<QProcess>();
    m_cleanup->setStandardInputFile(QProcess::nullDevice());
    auto done = [this, code, error] {
        if (!m_finished)
            finish(code, error);
    };
    connect(m_cleanup.get(), &QProcess::finished, this, done);
    connect(m_cleanup.get(), &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            done();
    });
    m_cleanup->start(m_options.podman,
        { QStringLiteral("rm"), QStringLiteral("--force"), QStringLiteral("--time"),
            QStringLiteral("0"), m_name });
}

void PodmanSandbox::finish(int exitCode, const QString &error)
{
    m_finished = true;
    m_pid = 0; // the pid may be reused by any process from now on
    m_private.reset(); // podman read the env file long ago
    if (!error.isEmpty())
        qCWarning(lcAgentSandbox) << m_name << error;
    else
        qCDebug(lcAgentSandbox) << m_name << "exited with" << exitCode;
    Q_EMIT finished(exitCode, error);
}

void PodmanSandbox::removeContainerBlocking()
{
    const CommandResult rm = runCommand(m_options.podman,
        { QStringLiteral("rm"), QStringLiteral("--force"), QStringLiteral("--time"),
            QStringLiteral("0"), m_name });
    if (!rm.ran || rm.exitCode != 0)
        qCWarning(lcAgentSandbox) << "could not remove" << m_name << rm.problem << rm.err.trimmed();
}

Status PodmanSandbox::ensureDefaultImage(
    const QString &image, const QString &busybox, const QString &podman)
{
    const CommandResult exists
        = runCommand(podman, { QStringLiteral("image"), QStringLiteral("exists"), image });
    if (!exists.ran)
        return engineFailure(QStringLiteral("cannot ask podman for image %1").arg(image), exists);
    if (exists.exitCode == 0)
        return {};
    if (exists.exitCode != 1)
        return engineFailure(QStringLiteral("podman image exists %1 failed").arg(image), exists);

    const QFileInfo info(busybox);
    if (!info.isFile() || !info.isExecutable()) {
        return Error::make(QStringLiteral("sandbox_image"),
            QStringLiteral("no busybox at %1 to build image %2 from "
                           "(install busybox-static)")
                .arg(busybox, image),
            true);
    }
    if (isDynamicElf(busybox)) {
        return Error::make(QStringLiteral("sandbox_image"),
            QStringLiteral("%1 is dynamically linked and cannot run alone in "
                           "image %2 (install busybox-static)")
                .arg(busybox, image),
            true);
    }

    QTemporaryDir temp;
    if (!temp.isValid()) {
        return Error::make(QStringLiteral("sandbox_image"),
            QStringLiteral("no temporary folder: %1").arg(temp.errorString()));
    }
    const QString rootfs = temp.filePath(QStringLiteral("rootfs"));
    if (Status built = buildBusyboxRootfs(busybox, rootfs); !built)
        return built;

    // Owned by root inside the image whoever built it.
    const QString archive = temp.filePath(QStringLiteral("rootfs.tar"));
    const CommandResult tar = runCommand(QStringLiteral("tar"),
        { QStringLiteral("--numeric-owner"), QStringLiteral("--owner=0"),
            QStringLiteral("--group=0"), QStringLiteral("-C"), rootfs, QStringLiteral("-cf"),
            archive, QStringLiteral(".") });
    if (!tar.ran || tar.exitCode != 0)
        return engineFailure(QStringLiteral("cannot pack the busybox rootfs"), tar);

    const CommandResult imported = runCommand(podman,
        { QStringLiteral("import"), QStringLiteral("--change"), QStringLiteral("CMD [\"/bin/sh\"]"),
            archive, image });
    if (!imported.ran || imported.exitCode != 0)
        return engineFailure(QStringLiteral("podman import of %1 failed").arg(image), imported);
    qCInfo(lcAgentSandbox) << "imported image" << image << "from" << busybox;
    return {};
}

} // namespace cloop::agent
