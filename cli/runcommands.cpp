#include "cli/runcommands.h"

#include "common/api/run.h"
#include "common/api/runlogpage.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QTimer>
#include <cstdio>

namespace cloop::cli {

namespace {

constexpr int kPollIntervalMs = 300;

void waitMilliseconds(int milliseconds)
{
    QEventLoop loop;
    QTimer::singleShot(milliseconds, &loop, &QEventLoop::quit);
    loop.exec();
}

// Prints a run's output from the hub as it arrives (stdout to stdout,
// stderr to stderr, lost stretches as a note) until the run finished and
// its whole log was printed; without `live`, what is stored now.
Status followLog(Command &command, qint64 runId, bool live)
{
    qint64 offset = 0;
    for (;;) {
        auto log
            = recordOf<api::RunLogPage>(command.get(QStringLiteral("/api/runs/%1/log").arg(runId),
                { { QStringLiteral("offset"), QString::number(offset) } }));
        if (!log)
            return log.error();
        using Entry = api::RunLogPage::Entry;
        for (const Entry &record : std::as_const(log->records)) {
            if (record.isGap()) {
                printNote(
                    QStringLiteral("[cloop: %1 bytes dropped: %2]")
                        .arg(record.lost)
                        .arg(record.droppedBy == Entry::DroppedBy::Hub
                                ? QStringLiteral(
                                    "the hub keeps only the newest output of a run "
                                    "(cloop hub serve --run-log-cap, --run-log-budget)")
                                : QStringLiteral(
                                    "more than the agent retains for a run waited for the hub")));
            } else {
                std::FILE *stream
                    = record.stream == protocol::LogRecordKind::Stderr ? stderr : stdout;
                std::fwrite(
                    record.data.constData(), 1, static_cast<size_t>(record.data.size()), stream);
                std::fflush(stream);
            }
            offset = record.end();
        }
        const bool nothingMoreComing = !log->expectedEnd && log->records.isEmpty();
        if (!log->records.isEmpty() && offset < log->end)
            continue; // more is stored than one answer carries
        if (!live || (log->finished && (log->complete || nothingMoreComing)))
            return {};
        waitMilliseconds(kPollIntervalMs);
    }
}

// What a run's COMMAND column and field say: its argv, or the harness an
// executor's own run installs.
QString commandText(const api::Run &run)
{
    return run.harness.isEmpty() ? run.argv.join(QLatin1Char(' '))
                                 : QStringLiteral("install harness %1").arg(run.harness);
}

int create(const QStringList &arguments)
{
    Command command(QStringLiteral("run"),
        QStringLiteral(
            "Run a command in a sandbox on one of the project's executors, wait for it, and exit "
            "with its exit code."));
    const QCommandLineOption project(QStringLiteral("project"),
        QStringLiteral("The project (its directory on the hub)."), QStringLiteral("DIR"));
    const QCommandLineOption executor(QStringLiteral("executor"),
        QStringLiteral("Run on this executor, by id or name (see cloop executor list)."),
        QStringLiteral("ID|NAME"));
    const QCommandLineOption image(QStringLiteral("image"),
        QStringLiteral("The container image (default: the agent's busybox)."),
        QStringLiteral("REF"));
    const QCommandLineOption virtualExecutor(QStringLiteral("virtual-executor"),
        QStringLiteral("Run on this virtual executor (an agent plus sandbox settings)."),
        QStringLiteral("NAME"));
    const QCommandLineOption hostProcess(QStringLiteral("host-process"),
        QStringLiteral("Run without a sandbox on an agent in host mode (no devices)."));
    const QCommandLineOption noWait(
        QStringLiteral("no-wait"), QStringLiteral("Queue the run and print its id."));
    command.addOptions({ project, executor, virtualExecutor, image, hostProcess, noWait });
    command.addPositional(QStringLiteral("CMD"),
        QStringLiteral("The command and its arguments, after --."),
        QStringLiteral("-- CMD [ARGS…]"));
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral(
        "cloop run --project DIR [--executor ID|NAME | --virtual-executor NAME] [--image REF] "
        "-- CMD [ARGS…]");
    auto projectPath = command.required(project, syntax);
    if (!projectPath)
        return command.usageError(projectPath.error().message);
    const QStringList argv = command.positionalArguments();
    if (argv.isEmpty())
        return command.usageError(QStringLiteral("give the command after --: %1").arg(syntax));
    QJsonObject body { { QStringLiteral("project"), *projectPath },
        { QStringLiteral("argv"), QJsonArray::fromStringList(argv) } };
    if (command.isSet(executor)) {
        // An id, or a name such as "hub" (the hub's own executor).
        const QString given = command.value(executor);
        bool numeric = false;
        given.toLongLong(&numeric);
        if (numeric) {
            auto id = parseId(given, QStringLiteral("executor id"));
            if (!id)
                return command.usageError(id.error().message);
            body.insert(QStringLiteral("executor_id"), *id);
        } else {
            body.insert(QStringLiteral("executor"), given);
        }
    }
    if (command.isSet(virtualExecutor)) {
        if (command.isSet(executor))
            return command.usageError(
                QStringLiteral("give --executor or --virtual-executor, not both"));
        body.insert(QStringLiteral("virtual_executor"), command.value(virtualExecutor));
    }
    if (command.isSet(image))
        body.insert(QStringLiteral("image"), command.value(image));
    if (command.isSet(hostProcess))
        body.insert(QStringLiteral("host_process"), true);
    auto created = recordOf<api::Run>(command.post(QStringLiteral("/api/runs"), body));
    if (!created)
        return command.failed(created.error());
    const qint64 runId = created->id;
    if (command.isSet(noWait)) {
        printLine(QString::number(runId));
        return kExitOk;
    }
    printNote(QStringLiteral("run %1 queued").arg(runId));
    return waitForRun(command, runId);
}

int logs(const QStringList &arguments)
{
    Command command(
        QStringLiteral("run logs"), QStringLiteral("Print a run's output as the hub stored it."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The run's id."));
    const QCommandLineOption follow(
        QStringLiteral("follow"), QStringLiteral("Keep printing until the run finished."));
    command.addOptions({ follow });
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop run logs ID [--follow]"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("run id"));
    if (!id)
        return command.usageError(id.error().message);
    if (Status followed = followLog(command, *id, command.isSet(follow)); !followed)
        return command.failed(followed.error());
    return kExitOk;
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("run list"),
        QStringLiteral("List runs: the queue and those running (--all: every run)."));
    const QCommandLineOption all(QStringLiteral("all"), QStringLiteral("Include finished runs."));
    command.addOptions({ all });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop run list [--all] [--json]"));
        !given)
        return command.usageError(given.error().message);
    QueryItems query;
    if (command.isSet(all))
        query.append({ QStringLiteral("all"), QStringLiteral("1") });
    auto runs
        = command.getList<api::Run>(QStringLiteral("/api/runs"), QLatin1StringView("runs"), query);
    if (!runs)
        return command.failed(runs.error());
    if (command.printedJson(*runs))
        return kExitOk;
    QList<QStringList> rows;
    for (const api::Run &run : std::as_const(*runs)) {
        rows.append(
            { QString::number(run.id), run.project.isEmpty() ? QStringLiteral("-") : run.project,
                run.executorId ? QString::number(*run.executorId) : QStringLiteral("-"),
                api::Run::stateName(run.state),
                run.exitCode ? QString::number(*run.exitCode) : QStringLiteral("-"),
                commandText(run).left(60) });
    }
    printLine(formatTable(
        { QStringLiteral("ID"), QStringLiteral("PROJECT"), QStringLiteral("EXECUTOR"),
            QStringLiteral("STATE"), QStringLiteral("EXIT"), QStringLiteral("COMMAND") },
        rows));
    return kExitOk;
}

int show(const QStringList &arguments)
{
    Command command(QStringLiteral("run show"),
        QStringLiteral("Show one run: where it ran, its state, exit code or error."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The run's id."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop run show ID [--json]"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("run id"));
    if (!id)
        return command.usageError(id.error().message);
    auto answer = command.get(QStringLiteral("/api/runs/%1").arg(*id));
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto run = api::Run::fromJson(*answer);
    if (!run)
        return command.failed(run.error());
    const auto text
        = [](const QString &value) { return value.isEmpty() ? QStringLiteral("-") : value; };
    const auto number
        = [](const auto &value) { return value ? QString::number(*value) : QStringLiteral("-"); };
    printLine(formatFields({
        { QStringLiteral("run"), QString::number(*id) },
        { QStringLiteral("project"), text(run->project) },
        { QStringLiteral("command"), commandText(*run) },
        { QStringLiteral("requested by"), text(run->requestedBy) },
        { QStringLiteral("executor"), number(run->executorId) },
        { QStringLiteral("virtual executor"), text(run->virtualExecutor) },
        { QStringLiteral("image"), text(run->image) },
        { QStringLiteral("state"), api::Run::stateName(run->state) },
        { QStringLiteral("exit code"), number(run->exitCode) },
        { QStringLiteral("error"), text(run->error) },
        { QStringLiteral("queued"), formatTime(run->createdAt) },
        { QStringLiteral("started"), formatTime(run->startedAt) },
        { QStringLiteral("finished"), formatTime(run->finishedAt) },
    }));
    return kExitOk;
}

int cancel(const QStringList &arguments)
{
    Command command(QStringLiteral("run cancel"),
        QStringLiteral("Cancel a run: queued, it leaves the queue; running, it is stopped."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The run's id."));
    const QCommandLineOption reason(
        QStringLiteral("reason"), QStringLiteral("Why."), QStringLiteral("TEXT"));
    command.addOptions({ reason });
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop run cancel ID [--reason TEXT]"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("run id"));
    if (!id)
        return command.usageError(id.error().message);
    auto answer = command.post(QStringLiteral("/api/runs/%1/cancel").arg(*id),
        { { QStringLiteral("reason"), command.value(reason) } });
    if (!answer)
        return command.failed(answer.error());
    printLine(QStringLiteral("Cancelled run %1.").arg(*id));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "list", list, "[--all] [--json]", "List runs: the queue and those running.",
        "cloop run list --all" },
    { "show", show, "ID [--json]", "Show one run: where it ran, its state, exit code or error.",
        "cloop run show 17" },
    { "logs", logs, "ID [--follow]", "Print a run's output as the hub stored it.",
        "cloop run logs 17 --follow" },
    { "cancel", cancel, "ID [--reason TEXT]", "Cancel a run, queued or running.",
        "cloop run cancel 17 --reason \"wrong branch\"" },
};

} // namespace

int waitForRun(Command &command, qint64 runId)
{
    auto followed = followLog(command, runId, true);
    if (!followed)
        return command.failed(followed.error());
    auto run = recordOf<api::Run>(command.get(QStringLiteral("/api/runs/%1").arg(runId)));
    if (!run)
        return command.failed(run.error());
    printNote(QStringLiteral("run %1 %2").arg(runId).arg(api::Run::stateName(run->state)));
    if (!run->error.isEmpty())
        printNote(QStringLiteral("run %1: %2").arg(runId).arg(run->error));
    return run->exitCode.value_or(kExitFailed);
}

std::span<const util::Subcommand> runCommands()
{
    return kSubcommands;
}

int runRunCommand(const QStringList &arguments)
{
    // `cloop run list|show|logs|cancel …` are subcommands; options start a run.
    const QString word = arguments.value(1);
    if (word == QLatin1String("--help") || word == QLatin1String("-h")
        || word == QLatin1String("help")) {
        std::fputs(qPrintable(util::familyHelp(arguments.constFirst(), kSubcommands,
                       QStringLiteral("Runs: starting one, and those queued, running or done."))),
            stdout);
        std::fputs("\nStarting a run:\n\n", stdout);
        std::fflush(stdout);
        return create({ arguments.constFirst(), QStringLiteral("--help") });
    }
    if (util::hasSubcommand(kSubcommands, word) || (!word.isEmpty() && !word.startsWith(u'-')))
        return util::runSubcommand(arguments, kSubcommands, {});
    return create(arguments);
}

} // namespace cloop::cli
