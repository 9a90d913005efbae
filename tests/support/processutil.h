#pragma once

// Small helpers the integration tests share: where the built programs are,
// the environment a child gets, running a command to completion with a
// bound, and waiting on a condition while the event loop runs.

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>

#include <QString>
#include <QStringList>
#include <memory>

#include <chrono>
#include <functional>

namespace cloop::testing {

using Clock = std::chrono::steady_clock;

// The upper bound of every wait in these tests. Generous on purpose: the
// tests run beside others on a small machine; a pass never waits this long.
constexpr int kLongWaitMs = 30'000;

// $CLOOP_BINARY_DIR/<name>: the programs built by this tree.
QString binaryPath(const QString &name);

// The environment of every child: this process's own with HOME replaced and
// nothing left that could point a child at a real hub, switch its logging
// off or change the log format the tests read.
QProcessEnvironment childEnvironment(const QString &home);

// Spins the event loop (so QProcess and network signals are delivered) until
// condition() holds or timeoutMs passed; returns condition()'s last value.
// The condition is never re-entered.
bool waitUntil(const std::function<bool()> &condition, int timeoutMs = kLongWaitMs);

// A QProcess for a daemon a test starts: should the test process die
// without its destructors (an abort, a crash), the kernel sends the daemon
// SIGTERM, so no hub or forwarder outlives the test that started it.
std::unique_ptr<QProcess> makeDaemonProcess();

// Sends a signal to the process a QProcess started, by its PID, and only
// while that process is still ours (not yet reaped). Returns whether sent.
bool signalProcess(const QProcess &process, int signalNumber);

// The lines of a program's log where Qt says an object was used from a
// thread it does not live on: each is a race, even when nothing failed.
QStringList crossThreadComplaints(const QString &log);

// What /proc says of a running process.
struct ProcessStats
{
    qint64 rssKiB = 0;
    double cpuSeconds = 0; // user + system
    int openFiles = 0;
};
ProcessStats processStats(qint64 pid);

// Why real podman sandboxes cannot run here, or empty when they can: they
// need root (rootful podman), podman and busybox-static (the default image).
QString sandboxesUnavailable();

// What one finished command left behind.
struct CliResult
{
    QString command;
    int exitCode = -1; // -1 unless the program exited normally
    bool started = false;
    bool timedOut = false;
    bool crashed = false;
    QByteArray out;
    QByteArray err;
    qint64 elapsedMs = 0;

    QString stdoutText() const { return QString::fromUtf8(out); }
    QString stderrText() const { return QString::fromUtf8(err); }
    // For failure messages: the command, how it ended and what it printed.
    QString describe() const;
};

// Runs a program to completion while the event loop keeps running (other
// children's signals are still delivered); kills it by PID after timeoutMs.
CliResult runProgram(const QString &program, const QStringList &arguments,
    const QProcessEnvironment &environment, int timeoutMs = kLongWaitMs);

} // namespace cloop::testing

// Checks a command's exit code and prints everything about it when wrong.
// `result` is evaluated once (QVERIFY2 builds its message whether or not the
// check fails, so naming a command there would run it twice).
#define CLOOP_COMPARE_EXIT(result, expected)                                                       \
    do {                                                                                           \
        const ::cloop::testing::CliResult &cloopExitResult_ = (result);                            \
        QVERIFY2(cloopExitResult_.exitCode == (expected),                                          \
            qPrintable(QStringLiteral("expected exit code %1; ").arg(expected)                     \
                + cloopExitResult_.describe()));                                                   \
    } while (false)
