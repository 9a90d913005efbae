#include "cli/usercommands.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

int addUser(const QStringList &arguments)
{
    Command command(QStringLiteral("user add"),
        QStringLiteral("Add a user. Give them roles with `cloop project grant` and a token with "
                       "`cloop token create`."));
    command.addPositional(
        QStringLiteral("NAME"), QStringLiteral("1-63 characters of a-z, 0-9, '.', '_' or '-'."));
    const QCommandLineOption hubAdmin(QStringLiteral("hub-admin"),
        QStringLiteral("A hub administrator: may do everything, on every project."));
    command.addOptions({ hubAdmin });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop user add NAME [--hub-admin]"));
    if (!given)
        return command.usageError(given.error().message);
    const QString name = given->first();
    if (Status valid = checkUserName(name); !valid)
        return command.usageError(valid.error().message);
    auto answer = command.post(QStringLiteral("/api/users"),
        { { QStringLiteral("name"), name },
            { QStringLiteral("hub_admin"), command.isSet(hubAdmin) } });
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    printLine(QStringLiteral("Added %1 %2 (id %3).")
                  .arg(answer->value(QLatin1String("hub_admin")).toBool()
                          ? QStringLiteral("hub administrator")
                          : QStringLiteral("user"),
                      name)
                  .arg(answer->value(QLatin1String("id")).toInteger()));
    printLine(
        QStringLiteral("Create their API token with: cloop token create --user %1").arg(name));
    return kExitOk;
}

int listUsers(const QStringList &arguments)
{
    Command command(QStringLiteral("user list"), QStringLiteral("List the hub's users."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop user list [--json]")); !given)
        return command.usageError(given.error().message);
    auto answer = command.get(QStringLiteral("/api/users"));
    if (!answer)
        return command.failed(answer.error());
    const QJsonArray users = answer->value(QLatin1String("users")).toArray();
    if (command.printedJson(users))
        return kExitOk;
    QList<QStringList> rows;
    for (const QJsonValue &value : users) {
        const QJsonObject user = value.toObject();
        rows.append({ QString::number(user.value(QLatin1String("id")).toInteger()),
            user.value(QLatin1String("name")).toString(),
            user.value(QLatin1String("hub_admin")).toBool() ? QStringLiteral("yes")
                                                            : QStringLiteral("no"),
            formatTime(user.value(QLatin1String("created_at"))) });
    }
    printLine(formatTable({ QStringLiteral("ID"), QStringLiteral("NAME"),
                              QStringLiteral("HUB ADMIN"), QStringLiteral("CREATED") },
        rows));
    return kExitOk;
}

int createToken(const QStringList &arguments)
{
    Command command(QStringLiteral("token create"),
        QStringLiteral("Create an API token for a user. It is shown once; the hub keeps only its "
                       "hash."));
    const QCommandLineOption user(
        QStringLiteral("user"), QStringLiteral("Whose token."), QStringLiteral("NAME"));
    const QCommandLineOption label(QStringLiteral("label"),
        QStringLiteral("What it is for, such as \"laptop\"."), QStringLiteral("TEXT"));
    command.addOptions({ user, label });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop token create --user NAME [--label TEXT]");
    if (auto given = command.positionals(0, syntax); !given)
        return command.usageError(given.error().message);
    auto userName = command.required(user, syntax);
    if (!userName)
        return command.usageError(userName.error().message);
    if (Status valid = checkUserName(*userName); !valid)
        return command.usageError(valid.error().message);
    QJsonObject body { { QStringLiteral("user"), *userName } };
    if (command.isSet(label))
        body.insert(QStringLiteral("label"), command.value(label));
    auto answer = command.post(QStringLiteral("/api/tokens"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    const AdminEndpoint &hub = command.endpoint();
    QString login = QStringLiteral("cloop login --hub %1").arg(hub.url.toString());
    if (!hub.trust.pins().isEmpty())
        login += QStringLiteral(" --pin %1").arg(hub.trust.pins().toString());
    printLine(
        QStringLiteral("API token for %1:").arg(answer->value(QLatin1String("user")).toString()));
    printLine(QString());
    printLine(QStringLiteral("  ") + answer->value(QLatin1String("token")).toString());
    printLine(QString());
    printLine(QStringLiteral(
        "It is shown only once: the hub keeps only its hash. Treat it like a password."));
    printLine(QStringLiteral("Its owner logs in with (the token is read from stdin):"));
    printLine(QStringLiteral("  ") + login);
    return kExitOk;
}

int listTokens(const QStringList &arguments)
{
    Command command(QStringLiteral("token list"),
        QStringLiteral(
            "List API tokens: your own, or (hub administrators) everyone's or one user's."));
    const QCommandLineOption user(
        QStringLiteral("user"), QStringLiteral("Only this user's tokens."), QStringLiteral("NAME"));
    command.addOptions({ user });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given
        = command.positionals(0, QStringLiteral("cloop token list [--user NAME] [--json]"));
        !given)
        return command.usageError(given.error().message);
    QueryItems query;
    if (command.isSet(user))
        query.append({ QStringLiteral("user"), command.value(user) });
    auto answer = command.get(QStringLiteral("/api/tokens"), query);
    if (!answer)
        return command.failed(answer.error());
    const QJsonArray tokens = answer->value(QLatin1String("tokens")).toArray();
    if (command.printedJson(tokens))
        return kExitOk;
    QList<QStringList> rows;
    for (const QJsonValue &value : tokens) {
        const QJsonObject token = value.toObject();
        QString state = token.value(QLatin1String("revoked_at")).isNull()
            ? QStringLiteral("active")
            : QStringLiteral("revoked %1")
                  .arg(formatTime(token.value(QLatin1String("revoked_at"))));
        if (token.value(QLatin1String("current")).toBool())
            state += QStringLiteral(" (this one)");
        rows.append({ QString::number(token.value(QLatin1String("id")).toInteger()),
            token.value(QLatin1String("user")).toString(),
            token.value(QLatin1String("label")).toString(),
            formatTime(token.value(QLatin1String("created_at"))), state });
    }
    printLine(formatTable({ QStringLiteral("ID"), QStringLiteral("USER"), QStringLiteral("LABEL"),
                              QStringLiteral("CREATED"), QStringLiteral("STATE") },
        rows));
    return kExitOk;
}

int revokeToken(const QStringList &arguments)
{
    Command command(QStringLiteral("token revoke"),
        QStringLiteral("Revoke an API token at once (see `cloop token list` for ids)."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The token's id."));
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop token revoke ID"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("token id"));
    if (!id)
        return command.usageError(id.error().message);
    auto answer = command.post(QStringLiteral("/api/tokens/%1/revoke").arg(*id), {});
    if (!answer)
        return command.failed(answer.error());
    printLine(QStringLiteral("Revoked API token %1 of %2.")
                  .arg(*id)
                  .arg(answer->value(QLatin1String("user")).toString()));
    return kExitOk;
}

constexpr Subcommand kUserSubcommands[] = { { "add", addUser }, { "list", listUsers } };
constexpr Subcommand kTokenSubcommands[]
    = { { "create", createToken }, { "list", listTokens }, { "revoke", revokeToken } };

} // namespace

int runUserCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kUserSubcommands);
}

int runTokenCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kTokenSubcommands);
}

} // namespace cloop::cli
