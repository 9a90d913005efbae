#include "support/processutil.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>

#include <csignal>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

namespace cloop::testing {

QString binaryPath(const QString &name)
{
    const QString dir = qEnvironmentVariable("CLOOP_BINARY_DIR");
    if (dir.isEmpty())
        qFatal("CLOOP_BINARY_DIR is not set; run the integration tests through ctest");
    return QDir(dir).filePath(name);
}

QProcessEnvironment childEnvironment(const QString &home)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString &name : environment.keys()) {
        if (name.startsWith(QLatin1String("CLOOP_")) || name.startsWith(QLatin1String("XDG_")))
            environment.remove(name);
    }
    for (const char *name : { "QT_LOGGING_RULES", "QT_MESSAGE_PATTERN", "QT_LOGGING_CONF" })
        environment.remove(QString::fromLatin1(name));
    environment.insert(QStringLiteral("HOME"), home);
    // Logs go to stderr even where Qt would pick the journal.
    environment.insert(QStringLiteral("QT_FORCE_STDERR_LOGGING"), QStringLiteral("1"));
    return environment;
}

bool waitUntil(const std::function<bool()> &condition, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        if (condition())
            return true;
        if (deadline.hasExpired())
            return false;
        // Let whatever is pending arrive; the condition runs outside this loop,
        // so a condition that itself spins an event loop is never re-entered.
        QEventLoop loop;
        QTimer::singleShot(std::min<qint64>(20, std::max<qint64>(1, deadline.remainingTime())),
            &loop, &QEventLoop::quit);
        loop.exec();
    }
}

std::unique_ptr<QProcess> makeDaemonProcess()
{
    auto process = std::make_unique<QProcess>();
    // Runs in the child between fork and exec; prctl is async-signal-safe.
    process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    return process;
}

QStringList crossThreadComplaints(const QString &log)
{
    static const QRegularExpression complaint(QStringLiteral(
        "from another thread|in a different thread|Cannot create children|Cannot move to target "
        "thread|Cannot send events to objects owned by a different thread"));
    QStringList lines;
    for (const QString &line : log.split(u'\n')) {
        if (line.contains(complaint))
            lines.append(line);
    }
    return lines;
}

bool signalProcess(const QProcess &process, int signalNumber)
{
    // Until QProcess has reaped the child (state NotRunning), the PID cannot
    // belong to anybody else.
    if (process.state() == QProcess::NotRunning)
        return false;
    const qint64 pid = process.processId();
    if (pid <= 0)
        return false;
    return ::kill(static_cast<pid_t>(pid), signalNumber) == 0;
}

QString CliResult::describe() const
{
    QString how;
    if (!started)
        how = QStringLiteral("did not start");
    else if (timedOut)
        how = QStringLiteral("timed out after %1 ms and was killed").arg(elapsedMs);
    else if (crashed)
        how = QStringLiteral("crashed");
    else
        how = QStringLiteral("exit code %1 after %2 ms").arg(exitCode).arg(elapsedMs);
    return QStringLiteral("`%1` %2\n--- stdout ---\n%3\n--- stderr ---\n%4")
        .arg(command, how, stdoutText().trimmed(), stderrText().trimmed());
}

CliResult runProgram(const QString &program, const QStringList &arguments,
    const QProcessEnvironment &environment, int timeoutMs)
{
    CliResult result;
    result.command
        = (QStringList { QFileInfo(program).fileName() } + arguments).join(QLatin1Char(' '));

    QProcess process;
    process.setProgram(program);
    process.setArguments(arguments);
    process.setProcessEnvironment(environment);
    process.setStandardInputFile(QProcess::nullDevice());

    QEventLoop loop;
    bool finished = false;
    QObject::connect(&process, &QProcess::finished, &loop, [&] {
        finished = true;
        loop.quit();
    });
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);

    QElapsedTimer clock;
    clock.start();
    process.start();
    if (!process.waitForStarted(kLongWaitMs)) {
        result.err = process.errorString().toUtf8();
        return result;
    }
    result.started = true;
    timeout.start(timeoutMs);
    if (!finished && process.state() != QProcess::NotRunning)
        loop.exec();
    if (process.state() != QProcess::NotRunning) {
        result.timedOut = true;
        signalProcess(process, SIGKILL);
        process.waitForFinished(kLongWaitMs);
    }
    result.elapsedMs = clock.elapsed();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    result.crashed = process.exitStatus() == QProcess::CrashExit;
    if (!result.timedOut && !result.crashed)
        result.exitCode = process.exitCode();
    return result;
}

QString sandboxesUnavailable()
{
    if (::geteuid() != 0)
        return QStringLiteral("runs use rootful podman: run as root");
    if (QStandardPaths::findExecutable(QStringLiteral("podman")).isEmpty())
        return QStringLiteral("podman is not installed (scripts/install-deps installs it)");
    if (!QFile::exists(QStringLiteral("/bin/busybox")))
        return QStringLiteral("busybox-static is not installed (scripts/install-deps installs it)");
    return {};
}

ProcessStats processStats(qint64 pid)
{
    ProcessStats stats;
    const QString base = QStringLiteral("/proc/%1/").arg(pid);
    QFile status(base + QLatin1String("status"));
    if (status.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith("VmRSS:"))
                stats.rssKiB = line.mid(6).trimmed().split(' ').value(0).toLongLong();
        }
    }
    QFile stat(base + QLatin1String("stat"));
    if (stat.open(QIODevice::ReadOnly)) {
        // Fields after the command's closing parenthesis; utime and stime
        // are the 12th and 13th of those.
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
        stats.cpuSeconds = (fields.value(11).toLongLong() + fields.value(12).toLongLong()) / ticks;
    }
    stats.openFiles = static_cast<int>(
        QDir(base + QLatin1String("fd")).entryList(QDir::NoDotAndDotDot | QDir::System).size());
    return stats;
}

} // namespace cloop::testing
