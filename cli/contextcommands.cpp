#include "cli/contextcommands.h"

#include "cli/command.h"
#include "cli/output.h"
#include "cli/storedlogin.h"

#include <QJsonArray>
#include <QJsonObject>

namespace cloop::cli {

namespace {

QString tokenPlace(const LoginRecord &login)
{
    return login.tokenPlace == LoginRecord::TokenPlace::Keyring ? QStringLiteral("keyring")
                                                                : QStringLiteral("file");
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("context list"),
        QStringLiteral("List the stored logins (contexts), the current one marked with *."),
        Command::Endpoint::None);
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop context list [--json]")); !given)
        return command.usageError(given.error().message);
    const StoredLogin store;
    auto contexts = store.contexts();
    if (!contexts)
        return command.failed(contexts.error());
    QJsonArray items;
    QList<QStringList> rows;
    for (const LoginRecord &login : std::as_const(contexts->all)) {
        const bool current = login.name == contexts->current;
        items.append(QJsonObject { { QStringLiteral("name"), login.name },
            { QStringLiteral("hub"), login.hub.toString() }, { QStringLiteral("user"), login.user },
            { QStringLiteral("current"), current },
            { QStringLiteral("token_in"), tokenPlace(login) } });
        rows.append({ current ? QStringLiteral("*") : QString(), login.name, login.hub.toString(),
            login.user.isEmpty() ? QStringLiteral("-") : login.user, tokenPlace(login) });
    }
    if (command.printedJson(QJsonObject { { QStringLiteral("items"), items } }))
        return kExitOk;
    if (rows.isEmpty()) {
        printLine(QStringLiteral("No stored logins: cloop login --hub URL makes one."));
        return kExitOk;
    }
    printLine(
        formatTable({ QStringLiteral("CURRENT"), QStringLiteral("NAME"), QStringLiteral("HUB"),
                        QStringLiteral("USER"), QStringLiteral("TOKEN IN") },
            rows));
    if (contexts->current.isEmpty())
        printLine(QStringLiteral("None is current: cloop context use NAME."));
    return kExitOk;
}

int use(const QStringList &arguments)
{
    Command command(QStringLiteral("context use"),
        QStringLiteral("Make a stored login the current one: admin commands given neither "
                       "--hub, --data nor --context use it."),
        Command::Endpoint::None);
    command.addPositional(
        QStringLiteral("NAME"), QStringLiteral("The context (cloop context list)."));
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop context use NAME"));
    if (!given)
        return command.usageError(given.error().message);
    const QString name = given->first();
    const StoredLogin store;
    if (Status used = store.use(name); !used)
        return used.error().code == QLatin1String("usage")
            ? command.usageError(used.error().message)
            : command.failed(used.error());
    auto login = store.context(name);
    printLine(QStringLiteral("Context \"%1\" is current: %2%3.")
                  .arg(name, login ? login->hub.toString() : QString(),
                      login && !login->user.isEmpty() ? QStringLiteral(" as ") + login->user
                                                      : QString()));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "list", list, "[--json]", "List the stored logins; * marks the current one.",
        "cloop context list" },
    { "use", use, "NAME", "Make a stored login the current one.",
        "cloop context use admin@hub.lab.example:7443" },
};

} // namespace

std::span<const util::Subcommand> contextCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
