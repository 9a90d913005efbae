#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/daemon/upgraderesponder.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QCoreApplication>

#include <csignal>
#include <optional>

#include "common/util/commandline.h"
#include "common/util/unixsignalwatcher.h"

namespace cloop::daemon {

// The command line every daemon shares: how it enrolls (--bundle,
// --token-file), where it keeps its credential, how it trusts the hub. A
// daemon adds its own options with addOptions() before parse().
class DaemonCommandLine
{
public:
    DaemonCommandLine(
        QString commandName, const QString &description, const QString &defaultCredentialFile);

    QCommandLineParser &parser() { return m_commandLine.parser(); }
    void addOptions(const QList<QCommandLineOption> &options) { m_commandLine.addOptions(options); }
    // A value when the command is already over: --help or --version printed
    // (0), or bad arguments reported (kExitUsage).
    std::optional<int> parse(const QStringList &arguments);
    ConnectionOptions connection() const;
    // How the daemon answers the hub's upgrade requests: the settings its
    // unit's drop-in gives it (its environment), and its spool folder.
    Result<UpgradeResponder::Options> upgrade(
        const QString &program, const QProcessEnvironment &environment) const;
    // "cloop NAME: message" on stderr; returns kExitUsage.
    int usageError(const QString &message) const;

private:
    util::CommandLine m_commandLine;
    QCommandLineOption m_bundle;
    QCommandLineOption m_tokenFile;
    QCommandLineOption m_credential;
    QCommandLineOption m_ca;
    QCommandLineOption m_insecure;
    QCommandLineOption m_trustCaOnly;
    QCommandLineOption m_upgradeDir;
    QString m_defaultUpgradeDir;
};

// Runs a prepared daemon until it finishes or SIGTERM/SIGINT stops it;
// returns its exit code. Daemon has start(), stop() and finished(int).
template <typename Daemon> int runUntilFinished(Daemon &daemon)
{
    int exitCode = kExitStopped;
    QObject::connect(&daemon, &Daemon::finished, qApp, [&exitCode](int code) {
        exitCode = code;
        QCoreApplication::exit(code);
    });
    util::UnixSignalWatcher signalWatcher({ SIGTERM, SIGINT });
    QObject::connect(&signalWatcher, &util::UnixSignalWatcher::received, &daemon,
        [&daemon](int) { daemon.stop(); });
    daemon.start();
    QCoreApplication::exec();
    return exitCode;
}

} // namespace cloop::daemon
