#include "cli/projectcommands.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"
#include "hub/storage/projectstore.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

QString membersText(const QJsonObject &project)
{
    QStringList members;
    for (const QJsonValue &value : project.value(QLatin1String("members")).toArray()) {
        const QJsonObject member = value.toObject();
        members.append(QStringLiteral("%1 (%2)").arg(field(member, "user"), field(member, "role")));
    }
    return members.isEmpty() ? QStringLiteral("-") : members.join(QStringLiteral(", "));
}

int add(const QStringList &arguments)
{
    Command command(QStringLiteral("project add"),
        QStringLiteral("Add a project to the hub. A project is named by its absolute directory on "
                       "the hub."));
    command.addPositional(QStringLiteral("DIR"),
        QStringLiteral("The project's directory, such as /srv/projects/bench."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop project add DIR"));
    if (!given)
        return command.usageError(given.error().message);
    auto path = checkProjectPath(given->first());
    if (!path)
        return command.usageError(path.error().message);
    auto answer
        = command.post(QStringLiteral("/api/projects"), { { QStringLiteral("path"), *path } });
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    printLine(QStringLiteral("Added project %1 (id %2).")
                  .arg(answer->value(QLatin1String("path")).toString())
                  .arg(answer->value(QLatin1String("id")).toInteger()));
    printLine(
        QStringLiteral("Give people a role in it with: cloop project grant %1 --user NAME --role "
                       "administrator|maintainer")
            .arg(*path));
    return kExitOk;
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("project list"),
        QStringLiteral("List the projects you may see (all of them for a hub administrator) and "
                       "their members."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop project list [--json]")); !given)
        return command.usageError(given.error().message);
    auto answer = command.get(QStringLiteral("/api/projects"));
    if (!answer)
        return command.failed(answer.error());
    const QJsonArray projects = answer->value(QLatin1String("projects")).toArray();
    if (command.printedJson(projects))
        return kExitOk;
    if (projects.isEmpty()) {
        printLine(QStringLiteral(
            "No projects. A hub administrator adds one with: cloop project add DIR"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const QJsonValue &value : projects) {
        const QJsonObject project = value.toObject();
        rows.append({ QString::number(project.value(QLatin1String("id")).toInteger()),
            project.value(QLatin1String("path")).toString(), membersText(project),
            formatTime(project.value(QLatin1String("created_at"))) });
    }
    printLine(formatTable({ QStringLiteral("ID"), QStringLiteral("PROJECT"),
                              QStringLiteral("MEMBERS"), QStringLiteral("CREATED") },
        rows));
    return kExitOk;
}

int grant(const QStringList &arguments)
{
    Command command(QStringLiteral("project grant"),
        QStringLiteral("Give a user a role in a project, change it, or (with --role none) take it "
                       "away. Administrators bind the project's devices and decide requests; "
                       "maintainers may request bindings."));
    command.addPositional(
        QStringLiteral("DIR"), QStringLiteral("The project's directory on the hub."));
    const QCommandLineOption user(
        QStringLiteral("user"), QStringLiteral("The user's name."), QStringLiteral("NAME"));
    const QCommandLineOption role(QStringLiteral("role"),
        QStringLiteral("administrator, maintainer, or none."), QStringLiteral("ROLE"));
    command.addOptions({ user, role });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral(
        "cloop project grant DIR --user NAME --role administrator|maintainer|none");
    auto given = command.positionals(1, syntax);
    if (!given)
        return command.usageError(given.error().message);
    auto path = checkProjectPath(given->first());
    if (!path)
        return command.usageError(path.error().message);
    auto userName = command.required(user, syntax);
    if (!userName)
        return command.usageError(userName.error().message);
    if (Status valid = checkUserName(*userName); !valid)
        return command.usageError(valid.error().message);
    auto roleName = command.required(role, syntax);
    if (!roleName)
        return command.usageError(roleName.error().message);
    if (*roleName != QLatin1String("none") && !hub::parseRole(*roleName))
        return command.usageError(
            QStringLiteral("--role \"%1\" is not administrator, maintainer or none")
                .arg(*roleName));
    auto answer = command.post(QStringLiteral("/api/projects/roles"),
        { { QStringLiteral("project"), *path }, { QStringLiteral("user"), *userName },
            { QStringLiteral("role"), *roleName } });
    if (!answer)
        return command.failed(answer.error());
    if (*roleName == QLatin1String("none"))
        printLine(QStringLiteral("%1 no longer has a role in %2.").arg(*userName, *path));
    else
        printLine(QStringLiteral("%1 is now %2 of %3.").arg(*userName, *roleName, *path));
    printLine(QStringLiteral("Members: %1").arg(membersText(*answer)));
    return kExitOk;
}

constexpr Subcommand kSubcommands[] = { { "add", add }, { "list", list }, { "grant", grant } };

} // namespace

int runProjectCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kSubcommands);
}

} // namespace cloop::cli
