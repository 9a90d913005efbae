#include "hub/cli/cli.h"

#include "cloop/buildinfo.h"
#include "daemon-forward/forwardcommand.h"
#include "hub/cli/forwardadmincommands.h"
#include "hub/cli/hubcommands.h"
#include "hub/cli/output.h"

namespace cloop::cli {

namespace {
const char kUsage[] =
        "usage: cloop <command> [options]\n"
        "\n"
        "  hub tls-init [--data DIR]          create the hub's development TLS certificate\n"
        "  hub serve [--data DIR] [--listen HOST:PORT]\n"
        "                                     run the hub\n"
        "  forward enroll --name N (--usb VID:PID[:SERIAL] | --interface IF)\n"
        "                                     enroll a forwarder, print its one-time command\n"
        "  forward list [--json] [--all]      list forwarders\n"
        "  forward revoke ID [--reason TEXT]  revoke a forwarder\n"
        "  forward [--bundle B | --token-file F] [--credential-file F] [--ca F]\n"
        "                                     run the forwarder on this machine\n"
        "  version                            print the version\n"
        "\n"
        "Every command takes --help.\n";
} // namespace

int run(const QStringList &arguments)
{
    const QString command = arguments.value(1);
    if (command.isEmpty() || command == QLatin1String("help") || command == QLatin1String("--help")
        || command == QLatin1String("-h")) {
        std::fputs(kUsage, command.isEmpty() ? stderr : stdout);
        return command.isEmpty() ? kExitUsage : kExitOk;
    }
    if (command == QLatin1String("version") || command == QLatin1String("--version")) {
        printLine(QStringLiteral("cloop %1").arg(QString::fromLatin1(buildinfo::kVersion)));
        return kExitOk;
    }
    if (command == QLatin1String("hub"))
        return runHubCommand(arguments.mid(1));
    if (command == QLatin1String("forward")) {
        const QString subcommand = arguments.value(2);
        if (isForwardAdminCommand(subcommand))
            return runForwardAdminCommand(subcommand,
                                          QStringList{QStringLiteral("cloop forward ") + subcommand} + arguments.mid(3));
        // Anything else (options only) runs the forwarder daemon itself.
        return forward::runForwarderCommand(QStringList{QStringLiteral("cloop forward")} + arguments.mid(2));
    }
    return fail(command, QStringLiteral("unknown command (run `cloop help`)"), kExitUsage);
}

} // namespace cloop::cli
