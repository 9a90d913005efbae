#include "hub/cli/forwardadmincommands.h"

#include "hub/cli/argumentchecks.h"
#include "hub/cli/command.h"
#include "hub/cli/daemonadmin.h"
#include "hub/cli/output.h"

#include <QDateTime>
#include <QJsonArray>

namespace cloop::cli {

namespace {

int enroll(const QStringList &arguments)
{
    Command command(QStringLiteral("forward enroll"),
                    QStringLiteral("Enroll a forwarder for one USB device or one network segment and "
                                   "print the one-time command to run on its machine."));
    const QCommandLineOption nameOption(QStringLiteral("name"), QStringLiteral("The forwarder's name."), QStringLiteral("NAME"));
    const QCommandLineOption usb(QStringLiteral("usb"), QStringLiteral("Carry this USB device."), QStringLiteral("VID:PID[:SERIAL]"));
    const QCommandLineOption iface(QStringLiteral("interface"), QStringLiteral("Carry this network segment."), QStringLiteral("IF"));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"), QStringLiteral("How long the bundle can be redeemed (default 24h)."),
                                 QStringLiteral("DURATION"));
    command.addOptions({nameOption, usb, iface, ttl});
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (!command.isSet(nameOption))
        return command.usageError(QStringLiteral("--name is required"));
    if (command.isSet(usb) == command.isSet(iface))
        return command.usageError(QStringLiteral("give exactly one of --usb VID:PID[:SERIAL] or --interface IF"));
    if (auto given = command.positionals(0, QStringLiteral("cloop forward enroll --name N (--usb VID:PID[:SERIAL] | "
                                                           "--interface IF) [--token-ttl 24h]"));
        !given)
        return command.usageError(given.error().message);

    QJsonObject body{{QStringLiteral("name"), command.value(nameOption)}};
    if (command.isSet(usb))
        body.insert(QStringLiteral("usb"), command.value(usb));
    else
        body.insert(QStringLiteral("interface"), command.value(iface));
    if (command.isSet(ttl))
        body.insert(QStringLiteral("token_ttl"), command.value(ttl));

    auto answer = command.post(QStringLiteral("/api/forwarders"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    const QJsonObject forwarder = answer->value(QLatin1String("forwarder")).toObject();
    printLine(QStringLiteral("Enrolled forwarder %1 \"%2\" for %3.")
                      .arg(forwarder.value(QLatin1String("id")).toInteger())
                      .arg(forwarder.value(QLatin1String("name")).toString(),
                           forwarder.value(QLatin1String("device_description")).toString()));
    printEnrollmentCommand(*answer, QStringLiteral("On the machine wired to the device"));
    return kExitOk;
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("forward list"), QStringLiteral("List the hub's forwarders."));
    const QCommandLineOption all(QStringLiteral("all"), QStringLiteral("Include revoked forwarders."));
    command.addOptions({all});
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop forward list [--json] [--all]")); !given)
        return command.usageError(given.error().message);
    auto answer = command.get(QStringLiteral("/api/forwarders"));
    if (!answer)
        return command.failed(answer.error());
    QJsonArray forwarders;
    for (const QJsonValue &value : answer->value(QLatin1String("forwarders")).toArray()) {
        const QJsonObject forwarder = value.toObject();
        if (command.isSet(all) || forwarder.value(QLatin1String("revoked_at")).isNull())
            forwarders.append(forwarder);
    }
    if (command.printedJson(forwarders))
        return kExitOk;
    if (forwarders.isEmpty()) {
        printLine(QStringLiteral("No forwarders yet. Enroll one with: cloop forward enroll --name NAME "
                                 "(--usb VID:PID | --interface IF)"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const QJsonValue &value : std::as_const(forwarders)) {
        const QJsonObject forwarder = value.toObject();
        rows.append({QString::number(forwarder.value(QLatin1String("id")).toInteger()),
                     forwarder.value(QLatin1String("name")).toString(),
                     forwarder.value(QLatin1String("device_description")).toString(),
                     forwarder.value(QLatin1String("state")).toString(), formatLastSeen(forwarder)});
    }
    printLine(formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("DEVICE"),
                           QStringLiteral("STATE"), QStringLiteral("LAST SEEN")},
                          rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    return revokeDaemon(arguments, kForwarderNoun);
}

constexpr Subcommand kSubcommands[] = {{"enroll", enroll}, {"list", list}, {"revoke", revoke}};

} // namespace

bool isForwardAdminCommand(const QString &subcommand)
{
    return hasSubcommand(kSubcommands, subcommand);
}

int runForwardAdminCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kSubcommands);
}

} // namespace cloop::cli
