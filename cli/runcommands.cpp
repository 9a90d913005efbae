#include "cli/runcommands.h"

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

void note(const QString &line)
{
    std::fprintf(stderr, "%s\n", qPrintable(line));
}

// Prints a run's output from the hub as it arrives (stdout to stdout,
// stderr to stderr, lost stretches as a note) until the run finished and
// its whole log was printed; without `live`, what is stored now.
Status followLog(Command &command, qint64 runId, bool live)
{
    qint64 offset = 0;
    for (;;) {
        auto log = command.get(QStringLiteral("/api/runs/%1/log").arg(runId),
            { { QStringLiteral("offset"), QString::number(offset) } });
        if (!log)
            return log.error();
        const QJsonArray records = log->value(QLatin1String("records")).toArray();
        for (const QJsonValue &value : records) {
            const QJsonObject record = value.toObject();
            const qint64 start = record.value(QLatin1String("offset")).toInteger();
            if (record.contains(QLatin1String("lost"))) {
                const qint64 lost = record.value(QLatin1String("lost")).toInteger();
                note(QStringLiteral("[cloop: %1 bytes dropped: %2]")
                         .arg(lost)
                         .arg(record.value(QLatin1String("dropped_by")).toString()
                                     == QLatin1String("hub")
                                 ? QStringLiteral(
                                     "the hub keeps only the newest output of a run "
                                     "(cloop hub serve --run-log-cap, --run-log-budget)")
                                 : QStringLiteral(
                                     "more than the agent retains for a run waited for the hub")));
                offset = start + lost;
                continue;
            }
            const QByteArray data
                = QByteArray::fromBase64(record.value(QLatin1String("data")).toString().toLatin1());
            std::FILE *stream
                = record.value(QLatin1String("stream")).toString() == QLatin1String("stderr")
                ? stderr
                : stdout;
            std::fwrite(data.constData(), 1, static_cast<size_t>(data.size()), stream);
            std::fflush(stream);
            offset = start + data.size();
        }
        const bool finished = log->value(QLatin1String("finished")).toBool();
        const bool complete = log->value(QLatin1String("complete")).toBool();
        const bool nothingMoreComing
            = log->value(QLatin1String("expected_end")).isNull() && records.isEmpty();
        if (!records.isEmpty() && offset < log->value(QLatin1String("end")).toInteger())
            continue; // more is stored than one answer carries
        if (!live || (finished && (complete || nothingMoreComing)))
            return {};
        waitMilliseconds(kPollIntervalMs);
    }
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
    auto created = command.post(QStringLiteral("/api/runs"), body);
    if (!created)
        return command.failed(created.error());
    const qint64 runId = created->value(QLatin1String("id")).toInteger();
    if (command.isSet(noWait)) {
        printLine(QString::number(runId));
        return kExitOk;
    }
    note(QStringLiteral("run %1 queued").arg(runId));
    auto followed = followLog(command, runId, true);
    if (!followed)
        return command.failed(followed.error());
    auto run = command.get(QStringLiteral("/api/runs/%1").arg(runId));
    if (!run)
        return command.failed(run.error());
    note(QStringLiteral("run %1 %2").arg(runId).arg(run->value(QLatin1String("state")).toString()));
    if (!run->value(QLatin1String("error")).isNull())
        note(QStringLiteral("run %1: %2")
                 .arg(runId)
                 .arg(run->value(QLatin1String("error")).toString()));
    const QJsonValue exitCode = run->value(QLatin1String("exit_code"));
    return exitCode.isNull() ? kExitFailed : exitCode.toInt();
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
    auto answer = command.get(QStringLiteral("/api/runs"), query);
    if (!answer)
        return command.failed(answer.error());
    const QJsonArray runs = answer->value(QLatin1String("runs")).toArray();
    if (command.printedJson(runs))
        return kExitOk;
    QList<QStringList> rows;
    for (const QJsonValue &value : runs) {
        const QJsonObject run = value.toObject();
        QStringList argv;
        for (const QJsonValue &arg : run.value(QLatin1String("argv")).toArray())
            argv.append(arg.toString());
        const QJsonValue executor = run.value(QLatin1String("executor_id"));
        const QJsonValue exitCode = run.value(QLatin1String("exit_code"));
        rows.append({ QString::number(run.value(QLatin1String("id")).toInteger()),
            run.value(QLatin1String("project")).toString(),
            executor.isNull() ? QStringLiteral("-") : QString::number(executor.toInteger()),
            run.value(QLatin1String("state")).toString(),
            exitCode.isNull() ? QStringLiteral("-") : QString::number(exitCode.toInt()),
            argv.join(QLatin1Char(' ')).left(60) });
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
    auto run = command.get(QStringLiteral("/api/runs/%1").arg(*id));
    if (!run)
        return command.failed(run.error());
    if (command.printedJson(*run))
        return kExitOk;
    const auto text = [&run](const char *key) {
        const QJsonValue value = run->value(QLatin1String(key));
        if (value.isNull() || value.isUndefined())
            return QStringLiteral("-");
        return value.isDouble() ? QString::number(value.toInteger()) : value.toVariant().toString();
    };
    const auto time
        = [&run](const char *key) { return formatTime(run->value(QLatin1String(key))); };
    QStringList argv;
    for (const QJsonValue &arg : run->value(QLatin1String("argv")).toArray())
        argv.append(arg.toString());
    printLine(formatFields({
        { QStringLiteral("run"), QString::number(*id) },
        { QStringLiteral("project"), text("project") },
        { QStringLiteral("command"), argv.join(QLatin1Char(' ')) },
        { QStringLiteral("requested by"), text("requested_by") },
        { QStringLiteral("executor"), text("executor_id") },
        { QStringLiteral("virtual executor"), text("virtual_executor") },
        { QStringLiteral("image"), text("image") },
        { QStringLiteral("state"), text("state") },
        { QStringLiteral("exit code"), text("exit_code") },
        { QStringLiteral("error"), text("error") },
        { QStringLiteral("queued"), time("created_at") },
        { QStringLiteral("started"), time("started_at") },
        { QStringLiteral("finished"), time("finished_at") },
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

constexpr Subcommand kSubcommands[]
    = { { "list", list }, { "show", show }, { "logs", logs }, { "cancel", cancel } };

} // namespace

int runRunCommand(const QStringList &arguments)
{
    // `cloop run list|cancel …` are subcommands; anything else starts a run.
    if (hasSubcommand(kSubcommands, arguments.value(1)))
        return runSubcommand(arguments, kSubcommands);
    return create(QStringList { QStringLiteral("cloop run") } + arguments.mid(1));
}

} // namespace cloop::cli
