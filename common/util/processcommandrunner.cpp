#include "common/util/processcommandrunner.h"

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>

namespace cloop::util {

namespace {

using namespace std::chrono_literals;

// How long a killed child gets to be reaped before we give up on it.
constexpr auto kReapTimeout = 1000ms;
// run() looks at the collected output this often, so a chatty child is
// stopped soon after it passes the cap.
constexpr auto kPollSlice = 50ms;

Error commandError(const QString &message)
{
    return Error::make(QStringLiteral("command_failed"), message);
}

void stop(QProcess &process)
{
    process.kill();
    process.waitForFinished(int(kReapTimeout.count()));
}

} // namespace

QString ProcessCommandRunner::findExecutable(const QString &nameOrPath) const
{
    if (nameOrPath.startsWith(QLatin1Char('/'))) {
        const QFileInfo info(nameOrPath);
        return info.isFile() && info.isExecutable() ? nameOrPath : QString();
    }
    if (nameOrPath.isEmpty() || nameOrPath.contains(QLatin1Char('/')))
        return {};
    QString found = QStandardPaths::findExecutable(nameOrPath);
    if (found.isEmpty()) {
        static const QStringList systemFolders { QStringLiteral("/usr/local/sbin"),
            QStringLiteral("/usr/local/bin"), QStringLiteral("/usr/sbin"),
            QStringLiteral("/usr/bin"), QStringLiteral("/sbin"), QStringLiteral("/bin") };
        found = QStandardPaths::findExecutable(nameOrPath, systemFolders);
    }
    return found;
}

Result<CommandOutput> ProcessCommandRunner::run(
    const QString &program, const QStringList &arguments, std::chrono::milliseconds timeout)
{
    const QString executable = findExecutable(program);
    if (executable.isEmpty())
        return commandError(QStringLiteral("%1 not found").arg(program));

    QProcess process;
    // Messages in English whatever the host's locale: they end up in reasons.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("LC_ALL"), QStringLiteral("C"));
    process.setProcessEnvironment(environment);
    process.setStandardInputFile(QProcess::nullDevice());

    const QDeadlineTimer deadline(timeout);
    process.start(executable, arguments);
    if (!process.waitForStarted(int(deadline.remainingTime()))) {
        const QString why = process.errorString();
        stop(process);
        return commandError(QStringLiteral("cannot start %1: %2").arg(program, why));
    }

    CommandOutput output;
    while (process.state() != QProcess::NotRunning) {
        const auto slice = std::min<qint64>(deadline.remainingTime(), kPollSlice.count());
        process.waitForFinished(int(slice));
        output.standardOutput += process.readAllStandardOutput();
        output.standardError += process.readAllStandardError();
        if (output.standardOutput.size() + output.standardError.size() > kMaxOutputBytes) {
            stop(process);
            return commandError(
                QStringLiteral("%1 printed more than %2 bytes").arg(program).arg(kMaxOutputBytes));
        }
        if (process.state() != QProcess::NotRunning && deadline.hasExpired()) {
            stop(process);
            return commandError(
                QStringLiteral("%1 did not finish within %2 ms").arg(program).arg(timeout.count()));
        }
    }
    output.standardOutput += process.readAllStandardOutput();
    output.standardError += process.readAllStandardError();

    if (process.exitStatus() == QProcess::CrashExit)
        return commandError(QStringLiteral("%1 was killed by a signal").arg(program));
    output.exitCode = process.exitCode();
    return output;
}

} // namespace cloop::util
