#pragma once

// A running daemon: `cloop-forward ARGS`, `cloop forward ARGS` through the
// umbrella command, or the executor agent `cloop-agent ARGS`, with a HOME of
// the test's choosing.

#include "support/processutil.h"

#include <QProcess>
#include <QStringList>

#include <memory>
#include <optional>
#include <utility>

#include <sys/types.h>

namespace cloop::testing {

class ForwarderProcess
{
public:
    // The *UsbStandIn programs are the daemons with the USB kernel stand-in
    // (tests/support/usbstandin), for kernels without USB.
    enum class Program
    {
        Standalone,
        Umbrella,
        Agent,
        ForwarderUsbStandIn,
        AgentUsbStandIn
    };

    ForwarderProcess(QStringList arguments, QString home, Program program = Program::Standalone);
    ~ForwarderProcess(); // kills the process it started, by PID
    ForwarderProcess(const ForwarderProcess &) = delete;
    ForwarderProcess &operator=(const ForwarderProcess &) = delete;

    // Set before start(): added to (or replacing in) its environment.
    void setEnvironmentVariable(const QString &name, const QString &value)
    {
        m_environment.insert(name, value);
    }
    // Set before start(), by a root test: the daemon runs as this user and
    // group, with no supplementary groups.
    void runAs(uid_t uid, gid_t gid) { m_user = std::make_pair(uid, gid); }
    bool start();
    bool isRunning() const;
    // True once stderr contains `needle`; false when the process ended
    // without printing it or timeoutMs passed.
    bool waitForStderr(const QString &needle, int timeoutMs = kLongWaitMs);
    bool waitForExit(int timeoutMs = kLongWaitMs);
    // SIGTERM / SIGKILL by the PID of the process this object started.
    bool terminate();
    bool kill();

    bool hasExited() const { return m_exited; }
    // The exit code, or -1 while running or after a crash.
    int exitCode() const { return m_exited && !m_crashed ? m_exitCode : -1; }
    // When the QProcess reported the exit, on the tests' monotonic clock.
    Clock::time_point exitedAt() const { return m_exitedAt; }
    QString stderrText() const { return QString::fromUtf8(m_stderr); }
    QString stdoutText() const { return QString::fromUtf8(m_stdout); }
    qsizetype stderrCount(const QString &needle) const { return stderrText().count(needle); }
    QString commandLine() const;
    QString home() const { return m_home; }
    // The PID of the running process, 0 when it is not running.
    qint64 processId() const;
    // An agent's: the podman sandbox it runs run `runId` in.
    QString sandboxOf(qint64 runId) const;
    // For failure messages: command, state and everything it printed.
    QString describe() const;

private:
    // Removes the podman sandboxes this agent left (killed while stopping one).
    void removeSandboxes() const;
    // What the agent puts in its sandboxes' names: its work root's tag.
    QString sandboxTag() const;
    QString programPath() const;
    QStringList programArguments() const;

    QStringList m_arguments;
    QString m_home;
    Program m_program;
    QProcessEnvironment m_environment;
    std::optional<std::pair<uid_t, gid_t>> m_user;
    std::unique_ptr<QProcess> m_process;
    QByteArray m_stderr;
    QByteArray m_stdout;
    bool m_exited = false;
    bool m_crashed = false;
    int m_exitCode = -1;
    Clock::time_point m_exitedAt {};
};

} // namespace cloop::testing
