#include "cli/projectcommands.h"

#include "common/api/project.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

QString membersText(const api::Project &project)
{
    QStringList members;
    for (const api::Project::Member &member : project.members)
        members.append(
            QStringLiteral("%1 (%2)").arg(member.user, api::projectRoleName(member.role)));
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
    auto added = api::Project::fromJson(*answer);
    if (!added)
        return command.failed(added.error());
    printLine(QStringLiteral("Added project %1 (id %2).").arg(added->path).arg(added->id));
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
    auto projects = command.getList<api::Project>(
        QStringLiteral("/api/projects"), QLatin1StringView("projects"));
    if (!projects)
        return command.failed(projects.error());
    if (command.printedJson(*projects))
        return kExitOk;
    if (projects->isEmpty()) {
        printLine(QStringLiteral(
            "No projects. A hub administrator adds one with: cloop project add DIR"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::Project &project : std::as_const(*projects))
        rows.append({ QString::number(project.id), project.path, membersText(project),
            formatTime(project.createdAt) });
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
    const bool none = *roleName == QLatin1String("none");
    if (!none && !api::parseProjectRole(*roleName))
        return command.usageError(
            QStringLiteral("--role \"%1\" is not administrator, maintainer or none")
                .arg(*roleName));
    auto project = recordOf<api::Project>(command.post(QStringLiteral("/api/projects/roles"),
        { { QStringLiteral("project"), *path }, { QStringLiteral("user"), *userName },
            { QStringLiteral("role"), *roleName } }));
    if (!project)
        return command.failed(project.error());
    if (none)
        printLine(QStringLiteral("%1 no longer has a role in %2.").arg(*userName, *path));
    else
        printLine(QStringLiteral("%1 is now %2 of %3.").arg(*userName, *roleName, *path));
    printLine(QStringLiteral("Members: %1").arg(membersText(*project)));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "add", add, "DIR", "Add a project, named by its absolute folder on the hub.",
        "cloop project add /srv/projects/hsm" },
    { "list", list, "[--json]", "List the projects you may see and their members.",
        "cloop project list" },
    { "grant", grant, "DIR --user NAME --role administrator|maintainer|none",
        "Give a user a role in a project, change it, or take it away.",
        "cloop project grant /srv/projects/hsm --user maria --role maintainer" },
};

} // namespace

std::span<const util::Subcommand> projectCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
