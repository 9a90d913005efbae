#include "cli/cli.h"

#include "cli/approvalcommands.h"
#include "cli/auditcommand.h"
#include "cli/bindingcommands.h"
#include "cli/executorcommands.h"
#include "cli/forwardadmincommands.h"
#include "cli/logincommands.h"
#include "cli/output.h"
#include "cli/projectcommands.h"
#include "cli/releasecommands.h"
#include "cli/runcommands.h"
#include "cli/usercommands.h"
#include "common/util/versionreport.h"
#include "daemon-agent/agentcommand.h"
#include "daemon-forward/forwardcommand.h"
#include "hub/serve/hubcommand.h"

#include <QJsonDocument>

namespace cloop::cli {

namespace {
const char kUsage[]
    = "usage: cloop <command> [options]\n"
      "\n"
      "Hub\n"
      "  hub tls-init [--data DIR]          create the hub's development TLS certificate\n"
      "  hub pin [--data DIR]               print the key pin clients compare on first contact\n"
      "  hub serve [--data DIR] [--listen HOST:PORT]\n"
      "                                     run the hub\n"
      "  hub backup FILE [--data DIR]       copy the hub's database and TLS identity while it "
      "runs\n"
      "  hub restore FILE [--data DIR]      make a hub's data folder from a backup\n"
      "  hub release add PACKAGE [--keys DIR] | hub release list [--json]\n"
      "                                     offer a signed package to devices; list them\n"
      "\n"
      "Forwarders\n"
      "  forward enroll --name N (--usb VID:PID[:SERIAL] | --interface IF)\n"
      "                                     enroll a forwarder, print its one-time command\n"
      "  forward list [--json] [--all]      list forwarders\n"
      "  forward revoke ID [--reason TEXT]  revoke a forwarder\n"
      "  forward upgrade ID [--target T]    ask a forwarder's device to upgrade itself\n"
      "  forward [--bundle B | --token-file F] [--credential-file F] [--ca F]\n"
      "                                     run the forwarder on this machine\n"
      "  executor enroll --name N           enroll an executor agent, print its one-time command\n"
      "  executor list [--json] [--all]     list executor agents and what they can do\n"
      "  executor revoke ID [--reason TEXT] revoke an executor agent\n"
      "  executor upgrade ID [--target T]   ask an agent's device to upgrade itself\n"
      "  executor agent [--bundle B | --token-file F] [--work-root DIR] [--label K=V]… "
      "[--max-concurrent N]\n"
      "                                     run the executor agent on this machine\n"
      "  run --project DIR [--executor ID] [--image REF] -- CMD [ARGS…]\n"
      "                                     run a command in a sandbox, exit with its exit code\n"
      "  run list [--all] [--json]   run cancel ID [--reason TEXT]\n"
      "\n"
      "Bindings and approvals\n"
      "  forward bind ID --project DIR [--ttl 8h] [--virtual-executor NAME] [--target IF --address "
      "CIDR]\n"
      "                                     lend a forwarder's device to a project's runs\n"
      "  forward bindings [--project DIR] [--all] [--json]\n"
      "                                     list bindings (--all: ended ones too)\n"
      "  forward unbind BINDING --reason TEXT\n"
      "                                     end a binding now\n"
      "  forward request ID --project DIR [--ttl …] [--virtual-executor …] [--target … --address "
      "…] --reason TEXT\n"
      "                                     ask an administrator for a binding\n"
      "  approvals list [--all | --mine] [--json]\n"
      "                                     your approvals inbox\n"
      "  approvals approve ID [--ttl …] [--virtual-executor …]\n"
      "  approvals deny ID --reason TEXT    decide a request (not your own)\n"
      "\n"
      "People and projects\n"
      "  project add DIR | project list [--json]\n"
      "  project grant DIR --user NAME --role administrator|maintainer|none\n"
      "  user add NAME [--hub-admin] | user list [--json]\n"
      "  token create --user NAME [--label TEXT] [--json]\n"
      "  token list [--user NAME] [--json]   token revoke ID\n"
      "                                     create an API token (shown once)\n"
      "  audit [--since TIME|DURATION] [--action NAME] [--json]\n"
      "                                     the audit log\n"
      "\n"
      "Releases\n"
      "  release keygen --private FILE --public FILE\n"
      "                                     make a release key\n"
      "  release sign PACKAGE --key FILE --channel stable|edge --commit HEX\n"
      "                                     sign a package, writing PACKAGE.sig\n"
      "  release verify PACKAGE [--keys DIR]\n"
      "                                     check a package as a device does\n"
      "\n"
      "You\n"
      "  login --hub URL [--pin sha256:…] [--ca FILE] [--token-file FILE]\n"
      "                                     remember a hub and your token (read from stdin or the "
      "file)\n"
      "  logout                             forget them\n"
      "  whoami [--json]                    who the hub takes you for\n"
      "  version [--json]                   print the version, commit, protocol and libraries\n"
      "\n"
      "Admin commands find the hub by --data DIR (that hub's cli.json), --hub URL (the token in\n"
      "$CLOOP_TOKEN or the stored login), else the stored login, else the hub on this machine\n"
      "(~/.cloop/hub or $CLOOP_HUB_DATA). Every command takes --help.\n";
} // namespace

namespace {
int printVersion(const QStringList &options)
{
    const util::VersionReport report = util::VersionReport::of(QStringLiteral("cloop"));
    if (options.isEmpty()) {
        printLine(report.toText());
        return kExitOk;
    }
    if (options == QStringList { QStringLiteral("--json") }) {
        printLine(QString::fromUtf8(QJsonDocument(report.toJson()).toJson(QJsonDocument::Compact)));
        return kExitOk;
    }
    std::fprintf(stderr, "cloop version: unexpected argument \"%s\" (it takes only --json)\n",
        qPrintable(options.constFirst()));
    return kExitUsage;
}
} // namespace

int run(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    const QString command = arguments.value(1);
    if (command.isEmpty() || command == QLatin1String("help") || command == QLatin1String("--help")
        || command == QLatin1String("-h")) {
        std::fputs(kUsage, command.isEmpty() ? stderr : stdout);
        return command.isEmpty() ? kExitUsage : kExitOk;
    }
    if (command == QLatin1String("version") || command == QLatin1String("--version"))
        return printVersion(arguments.mid(2));
    const QStringList family = arguments.mid(1);
    const QStringList single
        = QStringList { QStringLiteral("cloop ") + command } + arguments.mid(2);
    if (command == QLatin1String("hub"))
        return hub::runHubCommand(QStringLiteral("cloop hub"), family);
    if (command == QLatin1String("forward")) {
        const QString subcommand = arguments.value(2);
        if (isForwardAdminCommand(subcommand))
            return runForwardAdminCommand(family);
        if (isBindingCommand(subcommand))
            return runBindingCommand(family);
        // Anything else (options only) runs the forwarder daemon itself.
        return forward::runForwarderCommand(
            QStringList { QStringLiteral("cloop forward") } + arguments.mid(2), kernel);
    }
    if (command == QLatin1String("executor") && arguments.value(2) == QLatin1String("agent"))
        return agent::runAgentCommand(
            QStringList { QStringLiteral("cloop executor agent") } + arguments.mid(3), kernel);
    if (command == QLatin1String("executor"))
        return runExecutorCommand(family);
    if (command == QLatin1String("run"))
        return runRunCommand(family);
    if (command == QLatin1String("release"))
        return runReleaseCommand(family);
    if (command == QLatin1String("approvals"))
        return runApprovalCommand(family);
    if (command == QLatin1String("project"))
        return runProjectCommand(family);
    if (command == QLatin1String("user"))
        return runUserCommand(family);
    if (command == QLatin1String("token"))
        return runTokenCommand(family);
    if (command == QLatin1String("audit"))
        return runAuditCommand(single);
    if (command == QLatin1String("whoami"))
        return runWhoamiCommand(single);
    if (command == QLatin1String("login"))
        return runLoginCommand(single);
    if (command == QLatin1String("logout"))
        return runLogoutCommand(single);
    return fail(command, QStringLiteral("unknown command (run `cloop help`)"), kExitUsage);
}

} // namespace cloop::cli
