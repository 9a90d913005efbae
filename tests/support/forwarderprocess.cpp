#include "support/forwarderprocess.h"

#include "daemon-agent/sandbox/podmansandbox.h"
#include "daemon-agent/workroot/workroot.h"

#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>

#include <csignal>

#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace cloop::testing {

ForwarderProcess::ForwarderProcess(QStringList arguments, QString home, Program program)
    : m_arguments(std::move(arguments))
    , m_home(std::move(home))
    , m_program(program)
{ }

ForwarderProcess::~ForwarderProcess()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        signalProcess(*m_process, SIGKILL);
        m_process->waitForFinished(kLongWaitMs);
    }
    if (m_program == Program::Agent || m_program == Program::AgentUsbStandIn)
        removeSandboxes();
}

QString ForwarderProcess::sandboxTag() const
{
    return cloop::agent::WorkRoot(m_home + QStringLiteral("/.cloop/work")).sandboxTag();
}

QString ForwarderProcess::sandboxOf(qint64 runId) const
{
    return cloop::agent::PodmanSandbox::containerNameFor(
        QStringLiteral("%1-%2").arg(sandboxTag()).arg(runId));
}

void ForwarderProcess::removeSandboxes() const
{
    if (m_home.isEmpty() || QStandardPaths::findExecutable(QStringLiteral("podman")).isEmpty())
        return;
    // The agent names each sandbox cloop-run-TAG-RUN, TAG its work root's:
    // only this agent's.
    const QString tag = sandboxTag();
    const QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const CliResult listed = runProgram(QStringLiteral("podman"),
        { QStringLiteral("ps"), QStringLiteral("-a"), QStringLiteral("--format"),
            QStringLiteral("{{.Names}}"), QStringLiteral("--filter"),
            QStringLiteral("name=^cloop-run-%1-").arg(tag) },
        environment);
    const QStringList names = listed.stdoutText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (names.isEmpty())
        return;
    // A sandbox the agent was still stopping when it was killed outlives it.
    const CliResult removed = runProgram(QStringLiteral("podman"),
        QStringList {
            QStringLiteral("rm"), QStringLiteral("-f"), QStringLiteral("-t"), QStringLiteral("0") }
            + names,
        environment);
    if (removed.exitCode != 0)
        qWarning().noquote() << "cannot remove the agent's sandboxes:" << removed.describe();
}

QString ForwarderProcess::programPath() const
{
    switch (m_program) {
    case Program::Umbrella:
        return binaryPath(QStringLiteral("cloop"));
    case Program::Agent:
        return binaryPath(QStringLiteral("cloop-agent"));
    case Program::ForwarderUsbStandIn:
        return binaryPath(QStringLiteral("cloop-forward-usbstandin"));
    case Program::AgentUsbStandIn:
        return binaryPath(QStringLiteral("cloop-agent-usbstandin"));
    case Program::Standalone:
        break;
    }
    return binaryPath(QStringLiteral("cloop-forward"));
}

QStringList ForwarderProcess::programArguments() const
{
    return m_program == Program::Umbrella ? QStringList { QStringLiteral("forward") } + m_arguments
                                          : m_arguments;
}

QString ForwarderProcess::commandLine() const
{
    return (QStringList { QFileInfo(programPath()).fileName() } + programArguments())
        .join(QLatin1Char(' '));
}

bool ForwarderProcess::start()
{
    if (m_process)
        return false; // one process per object
    m_process = makeDaemonProcess();
    if (m_user) {
        const auto [uid, gid] = *m_user;
        // The user first: changing it clears the parent-death signal.
        m_process->setChildProcessModifier([uid = uid, gid = gid] {
            if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
                ::_exit(126);
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        });
    }
    m_process->setProgram(programPath());
    m_process->setArguments(programArguments());
    QProcessEnvironment environment = childEnvironment(m_home);
    environment.insert(m_environment);
    m_process->setProcessEnvironment(environment);
    m_process->setStandardInputFile(QProcess::nullDevice());
    QProcess *process = m_process.get();
    QObject::connect(process, &QProcess::readyReadStandardError, process,
        [this, process] { m_stderr += process->readAllStandardError(); });
    QObject::connect(process, &QProcess::readyReadStandardOutput, process,
        [this, process] { m_stdout += process->readAllStandardOutput(); });
    QObject::connect(process, &QProcess::finished, process,
        [this, process](int code, QProcess::ExitStatus status) {
            m_exitedAt = Clock::now();
            m_stderr += process->readAllStandardError();
            m_stdout += process->readAllStandardOutput();
            m_exited = true;
            m_crashed = status == QProcess::CrashExit;
            m_exitCode = code;
        });
    m_process->start();
    return m_process->waitForStarted(kLongWaitMs);
}

bool ForwarderProcess::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

bool ForwarderProcess::waitForStderr(const QString &needle, int timeoutMs)
{
    waitUntil([&] { return stderrText().contains(needle) || m_exited; }, timeoutMs);
    return stderrText().contains(needle);
}

bool ForwarderProcess::waitForExit(int timeoutMs)
{
    return waitUntil([this] { return m_exited; }, timeoutMs);
}

bool ForwarderProcess::terminate()
{
    return m_process && signalProcess(*m_process, SIGTERM);
}

qint64 ForwarderProcess::processId() const
{
    return m_process && !m_exited ? m_process->processId() : 0;
}

bool ForwarderProcess::kill()
{
    return m_process && signalProcess(*m_process, SIGKILL);
}

QString ForwarderProcess::describe() const
{
    QString state;
    if (!m_process)
        state = QStringLiteral("not started");
    else if (!m_exited)
        state
            = isRunning() ? QStringLiteral("running") : QStringLiteral("ended (not yet reported)");
    else if (m_crashed)
        state = QStringLiteral("crashed");
    else
        state = QStringLiteral("exit code %1").arg(m_exitCode);
    return QStringLiteral("`%1` (HOME=%2): %3\n--- stderr ---\n%4\n--- stdout ---\n%5")
        .arg(commandLine(), m_home, state, stderrText().trimmed(), stdoutText().trimmed());
}

} // namespace cloop::testing
