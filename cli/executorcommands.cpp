#include "cli/executorcommands.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/daemonadmin.h"
#include "cli/output.h"
#include "cli/runcommands.h"
#include "common/api/enrollment.h"
#include "common/api/run.h"
#include "common/api/virtualexecutor.h"
#include "common/protocol/agentcapabilities.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

QString executorMachine()
{
    return QStringLiteral("On the machine that will run sandboxes");
}

int enroll(const QStringList &arguments)
{
    Command command(QStringLiteral("executor enroll"),
        QStringLiteral(
            "Enroll an executor agent and print the one-time command to run on its machine."));
    const QCommandLineOption name(
        QStringLiteral("name"), QStringLiteral("The executor's name."), QStringLiteral("NAME"));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"),
        QStringLiteral("How long the bundle can be redeemed (default 24h)."),
        QStringLiteral("DURATION"));
    command.addOptions({ name, ttl });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop executor enroll --name N [--token-ttl 24h]");
    if (auto given = command.positionals(0, syntax); !given)
        return command.usageError(given.error().message);
    auto executorName = command.required(name, syntax);
    if (!executorName)
        return command.usageError(executorName.error().message);
    if (Status valid = checkDaemonName(*executorName, QLatin1StringView("executor")); !valid)
        return command.usageError(valid.error().message);
    if (command.isSet(ttl))
        if (Status valid = checkDuration(command.value(ttl), QStringLiteral("--token-ttl")); !valid)
            return command.usageError(valid.error().message);
    QJsonObject body { { QStringLiteral("name"), *executorName } };
    if (command.isSet(ttl))
        body.insert(QStringLiteral("token_ttl"), command.value(ttl));
    auto answer = command.post(QStringLiteral("/api/executors"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto enrollment = api::ExecutorEnrollment::fromJson(*answer);
    if (!enrollment)
        return command.failed(enrollment.error());
    printLine(QStringLiteral("Enrolled executor %1 \"%2\".")
                  .arg(enrollment->daemon.id)
                  .arg(enrollment->daemon.name));
    printEnrollmentCommand(
        enrollment->bundle, enrollment->tokenExpiresAt, executorMachine(), kExecutorNoun);
    return kExitOk;
}

int reenroll(const QStringList &arguments)
{
    return reenrollDaemon<api::Executor>(arguments, kExecutorNoun, executorMachine());
}

// One line about what the agent reported, or why there is none yet.
QString capabilitySummary(const api::Executor &executor)
{
    if (executor.reportedCapabilities.isEmpty())
        return QStringLiteral("-");
    auto capabilities = executor.capabilities();
    if (!capabilities)
        return QStringLiteral("unreadable: %1").arg(capabilities.error().message);
    return capabilities->summary();
}

int list(const QStringList &arguments)
{
    Command command(
        QStringLiteral("executor list"), QStringLiteral("List the hub's executor agents."));
    const QCommandLineOption all(
        QStringLiteral("all"), QStringLiteral("Include revoked executors."));
    command.addOptions({ all });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop executor list [--json] [--all]"));
        !given)
        return command.usageError(given.error().message);
    auto listed = command.getList<api::Executor>(
        QStringLiteral("/api/executors"), QLatin1StringView("executors"));
    if (!listed)
        return command.failed(listed.error());
    QList<api::Executor> executors = std::move(*listed);
    if (!command.isSet(all))
        executors.removeIf(
            [](const api::Executor &executor) { return executor.revokedAt.isValid(); });
    if (command.printedJson(executors))
        return kExitOk;
    if (executors.isEmpty()) {
        printLine(
            QStringLiteral("No executors yet. Enroll one with: cloop executor enroll --name NAME"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::Executor &executor : std::as_const(executors)) {
        rows.append({ QString::number(executor.id), executor.name, softwareCell(executor),
            executor.protocolVersion > 0 ? QString::number(executor.protocolVersion)
                                         : QStringLiteral("-"),
            stateCell(executor), formatLastSeen(executor), capabilitySummary(executor) });
    }
    printLine(formatTable({ QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("VERSION"),
                              QStringLiteral("PROTOCOL"), QStringLiteral("STATE"),
                              QStringLiteral("LAST SEEN"), QStringLiteral("CAPABILITIES") },
        rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    return revokeDaemon(arguments, kExecutorNoun);
}

int upgrade(const QStringList &arguments)
{
    return upgradeDaemon(arguments, kExecutorNoun);
}

int createVirtual(const QStringList &arguments)
{
    Command command(QStringLiteral("executor virtual create"),
        QStringLiteral(
            "Name an agent plus sandbox settings; runs may target the name (--virtual-executor)."));
    command.addPositional(QStringLiteral("NAME"), QStringLiteral("The virtual executor's name."));
    const QCommandLineOption agentOption(
        QStringLiteral("agent"), QStringLiteral("The executor agent's id."), QStringLiteral("ID"));
    const QCommandLineOption runtime(QStringLiteral("runtime"),
        QStringLiteral("The OCI runtime its runs use (runc, crun…)."), QStringLiteral("NAME"));
    command.addOptions({ agentOption, runtime });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax
        = QStringLiteral("cloop executor virtual create NAME --agent ID [--runtime R]");
    auto given = command.positionals(1, syntax);
    if (!given)
        return command.usageError(given.error().message);
    auto agentId = command.required(agentOption, syntax);
    if (!agentId)
        return command.usageError(agentId.error().message);
    auto id = parseId(*agentId, QStringLiteral("executor id"));
    if (!id)
        return command.usageError(id.error().message);
    QJsonObject body { { QStringLiteral("name"), given->first() },
        { QStringLiteral("executor_id"), *id } };
    if (command.isSet(runtime))
        body.insert(QStringLiteral("runtime"), command.value(runtime));
    auto answer = command.post(QStringLiteral("/api/virtual-executors"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto created = api::VirtualExecutor::fromJson(*answer);
    if (!created)
        return command.failed(created.error());
    printLine(QStringLiteral("Virtual executor \"%1\" runs on executor %2 (%3)%4.")
                  .arg(given->first())
                  .arg(*id)
                  .arg(created->executor,
                      command.isSet(runtime)
                          ? QStringLiteral(" with the %1 runtime").arg(command.value(runtime))
                          : QString()));
    return kExitOk;
}

int listVirtual(const QStringList &arguments)
{
    Command command(
        QStringLiteral("executor virtual list"), QStringLiteral("List the virtual executors."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop executor virtual list [--json]"));
        !given)
        return command.usageError(given.error().message);
    auto records = command.getList<api::VirtualExecutor>(
        QStringLiteral("/api/virtual-executors"), QLatin1StringView("virtual_executors"));
    if (!records)
        return command.failed(records.error());
    if (command.printedJson(*records))
        return kExitOk;
    QList<QStringList> rows;
    for (const api::VirtualExecutor &record : std::as_const(*records)) {
        rows.append(
            { record.name, QStringLiteral("%1 (%2)").arg(record.executor).arg(record.executorId),
                record.runtime.isEmpty() ? QStringLiteral("default") : record.runtime });
    }
    printLine(formatTable(
        { QStringLiteral("NAME"), QStringLiteral("EXECUTOR"), QStringLiteral("RUNTIME") }, rows));
    return kExitOk;
}

int installHarness(const QStringList &arguments)
{
    Command command(QStringLiteral("executor harness install"),
        QStringLiteral("Have an executor install a harness with the installer its own table "
                       "names (the vendor's documented command), as its workload user; prints "
                       "the installer's output and exits with its exit code."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The executor's id."));
    command.addPositional(
        QStringLiteral("NAME"), QStringLiteral("The harness, as it is called on PATH (claude)."));
    const QCommandLineOption noWait(
        QStringLiteral("no-wait"), QStringLiteral("Queue the install and print its run's id."));
    command.addOptions({ noWait });
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(
        2, QStringLiteral("cloop executor harness install ID NAME [--no-wait]"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("executor id"));
    if (!id)
        return command.usageError(id.error().message);
    const QString name = given->at(1);
    if (!protocol::AgentCapabilities::isHarnessName(name))
        return command.usageError(
            QStringLiteral("\"%1\" is not a harness name (what it is called on PATH: claude)")
                .arg(name.left(64)));
    auto queued
        = recordOf<api::Run>(command.post(QStringLiteral("/api/executors/%1/harnesses").arg(*id),
            { { QStringLiteral("name"), name } }));
    if (!queued)
        return command.failed(queued.error());
    if (command.isSet(noWait)) {
        printLine(QString::number(queued->id));
        return kExitOk;
    }
    printNote(
        QStringLiteral("run %1 installs %2 on executor %3").arg(queued->id).arg(name).arg(*id));
    const int exitCode = waitForRun(command, queued->id);
    if (exitCode != kExitOk)
        return exitCode;
    auto executor
        = recordOf<api::Executor>(command.get(QStringLiteral("/api/executors/%1").arg(*id)));
    if (!executor)
        return command.failed(executor.error());
    auto capabilities = executor->capabilities();
    const QString path = capabilities ? capabilities->harnesses.value(name) : QString();
    if (path.isEmpty()) {
        printNote(QStringLiteral("the installer succeeded, but executor %1 does not find %2 on its "
                                 "PATH or in its harness home's folders")
                      .arg(*id)
                      .arg(name));
        return kExitFailed;
    }
    printLine(QStringLiteral("Executor %1 has %2 at %3.").arg(*id).arg(name, path));
    return kExitOk;
}

constexpr util::Subcommand kHarnessSubcommands[] = {
    { "install", installHarness, "ID NAME [--no-wait]",
        "Have an executor install a harness with the installer its table names.",
        "cloop executor harness install 2 claude" },
};

std::span<const util::Subcommand> harnessCommands()
{
    return kHarnessSubcommands;
}

constexpr util::Subcommand kVirtualSubcommands[] = {
    { "create", createVirtual, "NAME --agent ID [--runtime R]",
        "Name an agent plus sandbox settings for runs and bindings to target.",
        "cloop executor virtual create gpu-box --agent 2 --runtime runsc" },
    { "list", listVirtual, "[--json]", "List the virtual executors.",
        "cloop executor virtual list" },
};

std::span<const util::Subcommand> virtualCommands()
{
    return kVirtualSubcommands;
}

constexpr util::Subcommand kSubcommands[] = {
    { "enroll", enroll, "--name N [--token-ttl 24h] [--json]",
        "Enroll an agent; print the one-time command for its machine.",
        "cloop executor enroll --name bench-1" },
    { "reenroll", reenroll, "ID [--token-ttl 24h] [--json]",
        "A new one-time command for an agent that never redeemed its bundle.",
        "cloop executor reenroll 2" },
    { "list", list, "[--all] [--json]", "List executor agents and what they can do.",
        "cloop executor list" },
    { "revoke", revoke, "ID [--reason TEXT]", "Revoke an executor agent: it never connects again.",
        "cloop executor revoke 2 --reason \"machine retired\"" },
    { "upgrade", upgrade, "ID [--target T] [--json]", "Ask an agent's machine to upgrade itself.",
        "cloop executor upgrade 2 --target 0.4.0" },
    // Run by the umbrella, which gives the agent its kernel.
    { "agent", nullptr, "[--token-file F] [--work-root DIR] [--label K=V]… [--max-concurrent N]",
        "Run the executor agent on this machine.",
        "cloop executor agent --token-file ~/executor.bundle" },
    { "virtual", nullptr, "create|list", "Virtual executors: an agent plus sandbox settings.",
        "cloop executor virtual list", virtualCommands },
    { "harness", nullptr, "install", "Harnesses (the tools runs call) on an executor.",
        "cloop executor harness install 2 claude", harnessCommands },
};

} // namespace

std::span<const util::Subcommand> executorCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
