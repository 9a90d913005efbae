#include "cli/usercommands.h"

#include "common/api/apitoken.h"
#include "common/api/user.h"

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
    auto added = api::User::fromJson(*answer);
    if (!added)
        return command.failed(added.error());
    printLine(
        QStringLiteral("Added %1 %2 (id %3).")
            .arg(added->hubAdmin ? QStringLiteral("hub administrator") : QStringLiteral("user"),
                name)
            .arg(added->id));
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
    auto users
        = command.getList<api::User>(QStringLiteral("/api/users"), QLatin1StringView("users"));
    if (!users)
        return command.failed(users.error());
    if (command.printedJson(*users))
        return kExitOk;
    QList<QStringList> rows;
    for (const api::User &user : std::as_const(*users)) {
        rows.append({ QString::number(user.id), user.name,
            user.hubAdmin ? QStringLiteral("yes") : QStringLiteral("no"),
            formatTime(user.createdAt) });
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
    auto created = api::NewApiToken::fromJson(*answer);
    if (!created)
        return command.failed(created.error());
    const AdminEndpoint &hub = command.endpoint();
    QString login = QStringLiteral("cloop login --hub %1").arg(hub.url.toString());
    if (!hub.trust.pins().isEmpty())
        login += QStringLiteral(" --pin %1").arg(hub.trust.pins().toString());
    printLine(QStringLiteral("API token for %1:").arg(created->user));
    printLine(QString());
    printLine(QStringLiteral("  ") + created->token);
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
    auto tokens = command.getList<api::ApiToken>(
        QStringLiteral("/api/tokens"), QLatin1StringView("tokens"), query);
    if (!tokens)
        return command.failed(tokens.error());
    if (command.printedJson(*tokens))
        return kExitOk;
    QList<QStringList> rows;
    for (const api::ApiToken &token : std::as_const(*tokens)) {
        QString state = token.isRevoked()
            ? QStringLiteral("revoked %1").arg(formatTime(token.revokedAt))
            : QStringLiteral("active");
        if (token.current.value_or(false))
            state += QStringLiteral(" (this one)");
        rows.append({ QString::number(token.id), token.user, token.label,
            formatTime(token.createdAt), state });
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
    auto revoked = recordOf<api::ApiToken>(
        command.post(QStringLiteral("/api/tokens/%1/revoke").arg(*id), {}));
    if (!revoked)
        return command.failed(revoked.error());
    printLine(QStringLiteral("Revoked API token %1 of %2.").arg(*id).arg(revoked->user));
    return kExitOk;
}

constexpr util::Subcommand kUserSubcommands[] = {
    { "add", addUser, "NAME [--hub-admin]", "Add a user; roles and tokens come after.",
        "cloop user add maria" },
    { "list", listUsers, "[--json]", "List the hub's users.", "cloop user list" },
};
constexpr util::Subcommand kTokenSubcommands[] = {
    { "create", createToken, "--user NAME [--label TEXT] [--json]",
        "Create an API token for a user (shown once).",
        "cloop token create --user maria --label laptop" },
    { "list", listTokens, "[--user NAME] [--json]", "List API tokens: yours, or anyone's.",
        "cloop token list --user maria" },
    { "revoke", revokeToken, "ID", "Revoke an API token at once.", "cloop token revoke 4" },
};

} // namespace

std::span<const util::Subcommand> userCommands()
{
    return kUserSubcommands;
}

std::span<const util::Subcommand> tokenCommands()
{
    return kTokenSubcommands;
}

} // namespace cloop::cli
