#include "daemon-agent/sandbox/hostprocessdriver.h"

#include <QProcessEnvironment>

#include <csignal>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <unistd.h>

namespace cloop::agent {

namespace {
constexpr int kGracePeriodMs = 10'000;
}

HostProcessDriver::HostProcessDriver(QObject *parent)
    : SandboxDriver(parent)
{
    m_killTimer.setSingleShot(true);
    connect(&m_killTimer, &QTimer::timeout, this, [this] {
        if (m_process && m_process->state() != QProcess::NotRunning)
            m_process->kill();
    });
}

HostProcessDriver::~HostProcessDriver()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

Status HostProcessDriver::start(const RunSpec &spec)
{
    if (m_process)
        return Error::make(QStringLiteral("already_started"),
            QStringLiteral("this driver already ran a workload"));
    if (spec.argv.isEmpty())
        return Error::make(QStringLiteral("invalid_run"), QStringLiteral("a run needs a command"));
    m_process = std::make_unique<QProcess>();
    m_process->setProgram(spec.argv.first());
    m_process->setArguments(spec.argv.mid(1));
    m_process->setWorkingDirectory(spec.workdir);
    m_process->setStandardInputFile(QProcess::nullDevice());
    // Only what a shell needs, and what the hub gave the run: not the
    // agent's own environment.
    QProcessEnvironment environment;
    environment.insert(QStringLiteral("PATH"), QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    environment.insert(QStringLiteral("HOME"), spec.workdir);
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it)
        environment.insert(it.key(), it.value());
    m_process->setProcessEnvironment(environment);
    // A root agent runs the workload as the unprivileged run user.
    const bool asRunUser = !spec.user.isEmpty();
    const QStringList ids = spec.user.split(QLatin1Char(':'));
    const auto uid = static_cast<uid_t>(ids.value(0).toUInt());
    const auto gid = static_cast<gid_t>(ids.value(1).toUInt());
    m_process->setChildProcessModifier([asRunUser, uid, gid] {
        // No descriptor the agent holds (or inherited) reaches the workload:
        // all but stdin, stdout and stderr close at exec, as QProcess's own
        // pipe does already. Kernels before 5.11 mark them one by one.
        if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
            const long open = ::sysconf(_SC_OPEN_MAX);
            for (int fd = 3; fd < (open > 0 && open < 1'048'576 ? open : 65'536); ++fd)
                ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        if (asRunUser && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0))
            ::_exit(126);
    });

    QProcess *process = m_process.get();
    connect(process, &QProcess::started, this, [this, process] {
        m_pid = process->processId();
        Q_EMIT started(m_pid);
    });
    connect(process, &QProcess::readyReadStandardOutput, this, [this, process] {
        if (const QByteArray bytes = process->readAllStandardOutput(); !bytes.isEmpty())
            Q_EMIT output(Stream::Stdout, bytes);
    });
    connect(process, &QProcess::readyReadStandardError, this, [this, process] {
        if (const QByteArray bytes = process->readAllStandardError(); !bytes.isEmpty())
            Q_EMIT output(Stream::Stderr, bytes);
    });
    connect(process, &QProcess::finished, this,
        [this, process](int exitCode, QProcess::ExitStatus status) {
            if (m_finished)
                return;
            if (const QByteArray rest = process->readAllStandardOutput(); !rest.isEmpty())
                Q_EMIT output(Stream::Stdout, rest);
            if (const QByteArray rest = process->readAllStandardError(); !rest.isEmpty())
                Q_EMIT output(Stream::Stderr, rest);
            m_finished = true;
            m_killTimer.stop();
            m_pid = 0;
            Q_EMIT finished(status == QProcess::CrashExit ? 128 + SIGKILL : exitCode, QString());
        });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || m_finished)
            return;
        m_finished = true;
        Q_EMIT finished(-1,
            QStringLiteral("cannot start %1: %2").arg(process->program(), process->errorString()));
    });
    m_process->start();
    return {};
}

void HostProcessDriver::cancel()
{
    if (!m_process || m_finished || m_process->state() == QProcess::NotRunning)
        return;
    m_process->terminate();
    m_killTimer.start(kGracePeriodMs);
}

} // namespace cloop::agent
