#include "cli/cli.h"

#include "cli/approvalcommands.h"
#include "cli/auditcommand.h"
#include "cli/bindingcommands.h"
#include "cli/contextcommands.h"
#include "cli/executorcommands.h"
#include "cli/forwardadmincommands.h"
#include "cli/logincommands.h"
#include "cli/output.h"
#include "cli/projectcommands.h"
#include "cli/releasecommands.h"
#include "cli/runcommands.h"
#include "cli/usercommands.h"
#include "common/daemon/serviceinstall.h"
#include "common/util/commandline.h"
#include "common/util/shellcompletion.h"
#include "common/util/versionreport.h"
#include "daemon-agent/agentcommand.h"
#include "daemon-forward/forwardcommand.h"
#include "hub/serve/hubcommand.h"

#include <QJsonDocument>

#include <cstdio>
#include <vector>

namespace cloop::cli {

namespace {

const QString kSummary = QStringLiteral(
    "Lends one USB device or one network segment to the sandboxed runs of one project.");
// Said after the overview: where every admin command finds its hub.
const QString kFindingTheHub = QStringLiteral(
    "Admin commands find the hub by --data DIR (that hub's cli.json), --hub URL (the token in\n"
    "$CLOOP_TOKEN or a stored login for it), --context NAME (that stored login), else the\n"
    "current context (cloop context list), else the hub on this machine (~/.cloop/hub or\n"
    "$CLOOP_HUB_DATA).\n");

int printVersion(const QStringList &arguments)
{
    const QStringList options = arguments.mid(1);
    const util::VersionReport report = util::VersionReport::of(QStringLiteral("cloop"));
    if (options.isEmpty()) {
        printLine(report.toText());
        return kExitOk;
    }
    if (options == QStringList { QStringLiteral("--json") }) {
        printLine(QString::fromUtf8(QJsonDocument(report.toJson()).toJson(QJsonDocument::Compact)));
        return kExitOk;
    }
    std::fprintf(stderr, "cloop version: unexpected argument \"%s\" (it takes only --json)\n%s\n",
        qPrintable(options.constFirst()),
        qPrintable(util::usageHint(QStringLiteral("cloop version"))));
    return kExitUsage;
}

int runHub(const QStringList &arguments)
{
    return hub::runHubCommand(arguments.constFirst(), arguments);
}

// `cloop forward …` is two families and the daemon: one list for help.
std::span<const util::Subcommand> forwardCommands()
{
    static const std::vector<util::Subcommand> all = [] {
        std::vector<util::Subcommand> commands(
            forwardAdminCommands().begin(), forwardAdminCommands().end());
        commands.insert(commands.end(), bindingCommands().begin(), bindingCommands().end());
        return commands;
    }();
    return all;
}

int printCompletion(const QStringList &arguments);

const QString kForwardSummary = QStringLiteral(
    "Forwarders: enrolling them, lending their devices to projects, and running one.");

constexpr util::Subcommand kCommands[] = {
    { "hub", runHub, "", "Run and look after the hub.", "", hub::hubCommands, "Hub" },
    { "forward", nullptr, "[--token-file F] [--credential-file F] [--ca F]",
        "Run the forwarder on this machine.", "", forwardCommands, "Devices and bindings" },
    { "approvals", nullptr, "", "Your inbox of binding requests.", "", approvalCommands },
    { "executor", nullptr, "", "Executor agents.", "", executorCommands, "Executors and runs" },
    { "run", runRunCommand, "--project DIR [--executor ID] [--image REF] -- CMD [ARGS…]",
        "Run a command in a sandbox and exit with its exit code.",
        "cloop run --project /srv/projects/hsm -- pkcs11-tool --list-slots", runCommands },
    { "project", nullptr, "", "Projects and people's roles in them.", "", projectCommands,
        "People and projects" },
    { "user", nullptr, "", "People.", "", userCommands },
    { "token", nullptr, "", "API tokens.", "", tokenCommands },
    { "audit", runAuditCommand, "[--since TIME|DURATION] [--action NAME] [--json]",
        "Show the audit log: who changed what, when.", "cloop audit --since 24h" },
    { "release", nullptr, "", "Release keys and package signatures.", "", releaseCommands,
        "Releases" },
    { "login", runLoginCommand,
        "--hub URL [--pin sha256:…] [--ca FILE] [--token-file FILE] [--name NAME]",
        "Remember a hub and your API token for it, as the current context.",
        "cloop login --hub wss://hub.lab.example:7443", nullptr, "You" },
    { "logout", runLogoutCommand, "[--name NAME]", "Forget a stored login.", "cloop logout" },
    { "context", nullptr, "", "The stored logins: list them, pick the current one.", "",
        contextCommands },
    { "whoami", runWhoamiCommand, "[--json]", "Show who the hub takes you for.", "cloop whoami" },
    { "version", printVersion, "[--json]", "Print the version, commit, protocol and libraries.",
        "cloop version" },
    { "completion", printCompletion, "bash|zsh", "Print the completion script for a shell.",
        "source <(cloop completion bash)" },
};

int printCompletion(const QStringList &arguments)
{
    const QString script
        = util::completionScript(arguments.value(1), QStringLiteral("cloop"), kCommands);
    if (arguments.size() != 2 || script.isEmpty()) {
        std::fprintf(stderr, "cloop completion: expected bash or zsh\n%s\n",
            qPrintable(util::usageHint(QStringLiteral("cloop completion"))));
        return kExitUsage;
    }
    std::fputs(script.toUtf8().constData(), stdout);
    return kExitOk;
}

QString overview()
{
    return util::overviewHelp(QStringLiteral("cloop"), kCommands, kSummary) + QLatin1Char('\n')
        + kFindingTheHub;
}

int runForward(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    const QStringList family = QStringList { QStringLiteral("cloop forward") } + arguments.mid(2);
    const QString word = arguments.value(2);
    if (util::hasSubcommand(forwardCommands(), word))
        return util::runSubcommand(family, forwardCommands(), kForwardSummary);
    if (word == QLatin1String("--help") || word == QLatin1String("-h")
        || word == QLatin1String("help")) {
        std::fputs(qPrintable(util::familyHelp(
                       QStringLiteral("cloop forward"), forwardCommands(), kForwardSummary)),
            stdout);
        std::fputs("\nRunning the forwarder on this machine:\n\n", stdout);
        std::fflush(stdout);
        return forward::runForwarderCommand(
            { QStringLiteral("cloop forward"), QStringLiteral("--help") }, kernel);
    }
    // A word that is neither an option nor the daemon's own (install,
    // uninstall, repin) was meant as a command.
    if (!word.isEmpty() && !word.startsWith(u'-') && !daemon::isServiceSubcommand(word))
        return util::runSubcommand(family, forwardCommands(), kForwardSummary);
    // Options only: the forwarder daemon itself.
    return forward::runForwarderCommand(family, kernel);
}

} // namespace

int run(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    const QString command = arguments.value(1);
    if (command.isEmpty()) {
        std::fputs(qPrintable(overview()), stderr);
        return kExitUsage;
    }
    if (command == QLatin1String("help") || command == QLatin1String("--help")
        || command == QLatin1String("-h")) {
        std::fputs(qPrintable(overview()), stdout);
        return kExitOk;
    }
    if (command == QLatin1String("--version"))
        return printVersion({ QStringLiteral("cloop version") });
    // The daemons need the kernel this program was given.
    if (command == QLatin1String("forward"))
        return runForward(arguments, kernel);
    if (command == QLatin1String("executor") && arguments.value(2) == QLatin1String("agent"))
        return agent::runAgentCommand(
            QStringList { QStringLiteral("cloop executor agent") } + arguments.mid(3), kernel);
    return util::runSubcommand(
        QStringList { QStringLiteral("cloop") } + arguments.mid(1), kCommands, kSummary);
}

} // namespace cloop::cli
