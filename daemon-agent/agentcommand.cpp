#include "daemon-agent/agentcommand.h"

#include "common/daemon/daemoncommandline.h"
#include "common/daemon/serviceinstall.h"
#include "daemon-agent/agentdaemon.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/capabilities/capabilityprobe.h"
#include "daemon-agent/harness/harnesshome.h"
#include "daemon-agent/harness/harnesspath.h"

#include <QDir>

namespace cloop::agent {

namespace {

// The agent's own options, beside those every daemon has; install passes
// them on to the service.
struct AgentOptions
{
    QCommandLineOption workRoot { QStringLiteral("work-root"),
        QStringLiteral("Where runs' workdirs are created (default ~/.cloop/work)."),
        QStringLiteral("DIR") };
    QCommandLineOption label { QStringLiteral("label"),
        QStringLiteral("A label runs may select on (repeatable)."), QStringLiteral("KEY=VALUE") };
    QCommandLineOption maxConcurrent { QStringLiteral("max-concurrent"),
        QStringLiteral("How many runs at once (default 0: the number of CPUs)."),
        QStringLiteral("N"), QStringLiteral("0") };
    QCommandLineOption hostMode { QStringLiteral("host-mode"),
        QStringLiteral("Run workloads as plain processes, without a sandbox (no devices).") };
    QCommandLineOption retainBytes { QStringLiteral("retain-bytes"),
        QStringLiteral("Output kept per run while the hub has not stored it; past it the "
                       "oldest is dropped and marked as a gap (default 1 MiB)."),
        QStringLiteral("BYTES"), QStringLiteral("1048576") };

    QCommandLineOption harnessTable { QStringLiteral("harness-table"),
        QStringLiteral("Installers of harnesses beside the official ones: a JSON object of "
                       "name -> {\"vendor\", \"command\": [argv]}."),
        QStringLiteral("FILE") };
    QCommandLineOption harnessHome { QStringLiteral("harness-home"),
        QStringLiteral("The home harnesses are installed in, as the workload user; its per-user "
                       "folders go on PATH (default: the agent's home, or "
                       "/var/lib/cloop-agent/harnesses for a root agent)."),
        QStringLiteral("DIR") };
    QCommandLineOption harnessInstallTimeout { QStringLiteral("harness-install-timeout"),
        QStringLiteral("How long one harness installer may run before it is stopped (default "
                       "900)."),
        QStringLiteral("SECONDS"), QStringLiteral("900") };

    QList<QCommandLineOption> all() const
    {
        return { workRoot, label, maxConcurrent, hostMode, retainBytes, harnessTable, harnessHome,
            harnessInstallTimeout };
    }
};

const daemon::ServiceSpec kService { QStringLiteral("cloop executor agent"),
    QStringLiteral("cloop-agent.service"), identity::EnrollmentBundle::Kind::Executor,
    QStringLiteral("agent.bundle"), QStringLiteral("agent.json"),
    QStringLiteral("CLOOP_AGENT_OPTIONS"), QStringLiteral("cloop-agent"),
    QStringLiteral("/var/lib/cloop-agent/upgrade") };

} // namespace

int runAgentCommand(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    if (auto done = daemon::runServiceSubcommand(kService, arguments, AgentOptions().all()))
        return *done;
    daemon::DaemonCommandLine commandLine(QStringLiteral("cloop executor agent"),
        QStringLiteral("Runs the sandboxed workloads the hub dispatches to this machine, over an "
                       "outbound tunnel.\n"
                       "First start: cloop executor agent --token-file FILE, FILE holding the "
                       "bundle cloopexe1.… (mode 0600; deleted once redeemed).\n"
                       "Afterwards: cloop executor agent"),
        QStringLiteral("~/.cloop/agent.json"));
    const AgentOptions agentOptions;
    const QCommandLineOption &workRoot = agentOptions.workRoot;
    const QCommandLineOption &label = agentOptions.label;
    const QCommandLineOption &maxConcurrent = agentOptions.maxConcurrent;
    const QCommandLineOption &hostMode = agentOptions.hostMode;
    const QCommandLineOption &retainBytes = agentOptions.retainBytes;
    commandLine.addOptions(agentOptions.all());
    if (auto done = commandLine.parse(arguments))
        return *done;
    const QCommandLineParser &parser = commandLine.parser();

    CapabilityProbe::Options choices;
    for (const QString &pair : parser.values(label)) {
        const int equals = pair.indexOf(QLatin1Char('='));
        if (equals <= 0)
            return commandLine.usageError(
                QStringLiteral("--label \"%1\" is not KEY=VALUE").arg(pair));
        const QString key = pair.left(equals);
        const QString value = pair.mid(equals + 1);
        if (Status valid = AgentCapabilities::validateLabel(key, value); !valid)
            return commandLine.usageError(valid.error().message);
        choices.labels.insert(key, value);
    }
    auto ceiling = AgentCapabilities::parseMaxConcurrent(
        parser.value(maxConcurrent), QStringLiteral("--max-concurrent"));
    if (!ceiling)
        return commandLine.usageError(ceiling.error().message);
    choices.maxConcurrent = *ceiling;
    choices.mode = parser.isSet(hostMode) ? AgentCapabilities::Mode::Host
                                          : AgentCapabilities::Mode::Container;

    AgentDaemonOptions options;
    options.connection = commandLine.connection();
    options.workRoot = parser.value(workRoot);
    bool numeric = false;
    options.retainBytes = parser.value(retainBytes).toLongLong(&numeric);
    if (!numeric || options.retainBytes < 64 * 1024 || options.retainBytes > qsizetype(1) << 30)
        return commandLine.usageError(
            QStringLiteral("--retain-bytes must be a number of bytes from 65536 to 1073741824"));
    options.kernel = kernel;
    auto harnesses = parser.isSet(agentOptions.harnessTable)
        ? HarnessTable::withFile(parser.value(agentOptions.harnessTable))
        : Result<HarnessTable>(HarnessTable::official());
    if (!harnesses)
        return commandLine.usageError(harnesses.error().message);
    options.harnesses.table = *harnesses;
    if (parser.isSet(agentOptions.harnessHome)) {
        options.harnesses.home = QDir::cleanPath(parser.value(agentOptions.harnessHome));
        if (!QDir::isAbsolutePath(options.harnesses.home))
            return commandLine.usageError(QStringLiteral("--harness-home must be absolute"));
    }
    const qint64 timeout = parser.value(agentOptions.harnessInstallTimeout).toLongLong(&numeric);
    if (!numeric || timeout < 1 || timeout > 24 * 3600)
        return commandLine.usageError(
            QStringLiteral("--harness-install-timeout must be 1 to 86400 seconds"));
    options.harnesses.timeout = std::chrono::seconds(timeout);
    // Harnesses installed per user are found by name, by the agent and by
    // what it starts: their folders go in front of its PATH, once.
    const QStringList harnessFolders = existingHarnessDirectories(options.harnesses.home);
    qputenv("PATH", prependToPath(qEnvironmentVariable("PATH"), harnessFolders).toLocal8Bit());
    choices.harnessNames = harnesses->names();
    options.capabilities = CapabilityProbe(kernel).probe(choices);
    auto upgrade = commandLine.upgrade(
        QStringLiteral("cloop executor agent"), QProcessEnvironment::systemEnvironment());
    if (!upgrade)
        return commandLine.usageError(upgrade.error().message);
    options.upgrade = *upgrade;

    AgentDaemon agent(options);
    if (Status prepared = agent.prepare(); !prepared)
        return commandLine.usageError(prepared.error().message);
    return daemon::runUntilFinished(agent);
}

} // namespace cloop::agent
