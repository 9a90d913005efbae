#include "hub/cli/forwardadmincommands.h"

#include "hub/cli/endpointoptions.h"
#include "hub/cli/output.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QJsonArray>

namespace cloop::cli {

namespace {

struct ParsedCommand
{
    QCommandLineParser parser;
    EndpointOptions endpoint;
};

// Parses and handles --help; returns an exit code when the command is done.
std::optional<int> parse(ParsedCommand &command, const QString &name, const QStringList &arguments,
                         const QString &description, const QString &positionalHelp = {})
{
    command.parser.setApplicationDescription(description);
    command.parser.addHelpOption();
    command.endpoint.addTo(command.parser);
    if (!positionalHelp.isEmpty())
        command.parser.addPositionalArgument(QStringLiteral("ID"), positionalHelp);
    if (!command.parser.parse(arguments))
        return fail(name, command.parser.errorText(), kExitUsage);
    if (command.parser.isSet(QStringLiteral("help"))) {
        printLine(command.parser.helpText());
        return kExitOk;
    }
    return std::nullopt;
}

QString lastSeen(const QJsonObject &forwarder)
{
    if (forwarder.value(QLatin1String("connected")).toBool())
        return QStringLiteral("now");
    const QString text = forwarder.value(QLatin1String("last_seen")).toString();
    if (text.isEmpty())
        return QStringLiteral("never");
    const QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    const qint64 seconds = time.secsTo(QDateTime::currentDateTimeUtc());
    if (seconds < 60)
        return QStringLiteral("%1s ago").arg(seconds);
    if (seconds < 3600)
        return QStringLiteral("%1m ago").arg(seconds / 60);
    if (seconds < 86400)
        return QStringLiteral("%1h ago").arg(seconds / 3600);
    return time.toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
}

int enroll(const QStringList &arguments)
{
    const QString name = QStringLiteral("forward enroll");
    ParsedCommand command;
    const QCommandLineOption nameOption(QStringLiteral("name"), QStringLiteral("The forwarder's name."), QStringLiteral("NAME"));
    const QCommandLineOption usb(QStringLiteral("usb"), QStringLiteral("Carry this USB device."), QStringLiteral("VID:PID[:SERIAL]"));
    const QCommandLineOption iface(QStringLiteral("interface"), QStringLiteral("Carry this network segment."), QStringLiteral("IF"));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"), QStringLiteral("How long the bundle can be redeemed (default 24h)."),
                                 QStringLiteral("DURATION"));
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print the answer as JSON."));
    command.parser.addOptions({nameOption, usb, iface, ttl, json});
    if (auto done = parse(command, name, arguments,
                          QStringLiteral("Enroll a forwarder for one USB device or one network segment and "
                                         "print the one-time command to run on its machine.")))
        return *done;
    if (!command.parser.isSet(nameOption))
        return fail(name, QStringLiteral("--name is required"), kExitUsage);
    if (command.parser.isSet(usb) == command.parser.isSet(iface))
        return fail(name, QStringLiteral("give exactly one of --usb VID:PID[:SERIAL] or --interface IF"), kExitUsage);
    if (!command.parser.positionalArguments().isEmpty())
        return fail(name, QStringLiteral("unexpected argument \"%1\"").arg(command.parser.positionalArguments().first()),
                    kExitUsage);
    auto endpoint = command.endpoint.resolve(command.parser);
    if (!endpoint)
        return fail(name, endpoint.error().message, kExitUsage);

    QJsonObject body{{QStringLiteral("name"), command.parser.value(nameOption)}};
    if (command.parser.isSet(usb))
        body.insert(QStringLiteral("usb"), command.parser.value(usb));
    else
        body.insert(QStringLiteral("interface"), command.parser.value(iface));
    if (command.parser.isSet(ttl))
        body.insert(QStringLiteral("token_ttl"), command.parser.value(ttl));

    auto answer = AdminClient(*endpoint).post(QStringLiteral("/api/forwarders"), body);
    if (!answer)
        return fail(name, answer.error().message);
    if (command.parser.isSet(json)) {
        printJson(*answer);
        return kExitOk;
    }
    const QJsonObject forwarder = answer->value(QLatin1String("forwarder")).toObject();
    const QDateTime expires = QDateTime::fromString(answer->value(QLatin1String("token_expires_at")).toString(),
                                                    Qt::ISODateWithMs);
    printLine(QStringLiteral("Enrolled forwarder %1 \"%2\" for %3.")
                      .arg(forwarder.value(QLatin1String("id")).toInteger())
                      .arg(forwarder.value(QLatin1String("name")).toString(),
                           forwarder.value(QLatin1String("device_description")).toString()));
    printLine(QStringLiteral("On the machine wired to the device, run this once before %1:")
                      .arg(expires.toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"))));
    printLine(QString());
    printLine(QStringLiteral("  ") + answer->value(QLatin1String("command")).toString());
    printLine(QString());
    printLine(QStringLiteral("The bundle works once; treat it like a password."));
    return kExitOk;
}

int list(const QStringList &arguments)
{
    const QString name = QStringLiteral("forward list");
    ParsedCommand command;
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print JSON."));
    const QCommandLineOption all(QStringLiteral("all"), QStringLiteral("Include revoked forwarders."));
    command.parser.addOptions({json, all});
    if (auto done = parse(command, name, arguments, QStringLiteral("List the hub's forwarders.")))
        return *done;
    auto endpoint = command.endpoint.resolve(command.parser);
    if (!endpoint)
        return fail(name, endpoint.error().message, kExitUsage);
    auto answer = AdminClient(*endpoint).get(QStringLiteral("/api/forwarders"));
    if (!answer)
        return fail(name, answer.error().message);
    QJsonArray forwarders;
    for (const QJsonValue &value : answer->value(QLatin1String("forwarders")).toArray()) {
        const QJsonObject forwarder = value.toObject();
        if (command.parser.isSet(all) || forwarder.value(QLatin1String("revoked_at")).isNull())
            forwarders.append(forwarder);
    }
    if (command.parser.isSet(json)) {
        printJson(forwarders);
        return kExitOk;
    }
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
                     forwarder.value(QLatin1String("state")).toString(), lastSeen(forwarder)});
    }
    printLine(formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("DEVICE"),
                           QStringLiteral("STATE"), QStringLiteral("LAST SEEN")},
                          rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    const QString name = QStringLiteral("forward revoke");
    ParsedCommand command;
    const QCommandLineOption reason(QStringLiteral("reason"), QStringLiteral("Why (kept in the audit log)."),
                                    QStringLiteral("TEXT"));
    command.parser.addOptions({reason});
    if (auto done = parse(command, name, arguments,
                          QStringLiteral("Revoke a forwarder: its live session ends now and it can never "
                                         "connect again."),
                          QStringLiteral("The forwarder's id (see cloop forward list).")))
        return *done;
    const QStringList positional = command.parser.positionalArguments();
    bool isNumber = false;
    const qint64 id = positional.value(0).toLongLong(&isNumber);
    if (positional.size() != 1 || !isNumber || id < 1)
        return fail(name, QStringLiteral("give exactly one forwarder id, e.g. cloop forward revoke 3"), kExitUsage);
    auto endpoint = command.endpoint.resolve(command.parser);
    if (!endpoint)
        return fail(name, endpoint.error().message, kExitUsage);
    auto answer = AdminClient(*endpoint).post(QStringLiteral("/api/forwarders/%1/revoke").arg(id),
                                              {{QStringLiteral("reason"), command.parser.value(reason)}});
    if (!answer)
        return fail(name, answer.error().message);
    printLine(QStringLiteral("Revoked forwarder %1 \"%2\".")
                      .arg(id)
                      .arg(answer->value(QLatin1String("name")).toString()));
    return kExitOk;
}

} // namespace

bool isForwardAdminCommand(const QString &subcommand)
{
    return subcommand == QLatin1String("enroll") || subcommand == QLatin1String("list")
            || subcommand == QLatin1String("revoke");
}

int runForwardAdminCommand(const QString &subcommand, const QStringList &arguments)
{
    if (subcommand == QLatin1String("enroll"))
        return enroll(arguments);
    if (subcommand == QLatin1String("list"))
        return list(arguments);
    return revoke(arguments);
}

} // namespace cloop::cli
