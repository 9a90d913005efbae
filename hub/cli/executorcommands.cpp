#include "hub/cli/executorcommands.h"

#include "daemon-agent/agentcommand.h"
#include "common/protocol/agentcapabilities.h"
#include "hub/cli/command.h"
#include "hub/cli/daemonadmin.h"
#include "hub/cli/output.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

int enroll(const QStringList &arguments)
{
    Command command(QStringLiteral("executor enroll"),
                    QStringLiteral("Enroll an executor agent and print the one-time command to run on its machine."));
    const QCommandLineOption name(QStringLiteral("name"), QStringLiteral("The executor's name."), QStringLiteral("NAME"));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"), QStringLiteral("How long the bundle can be redeemed (default 24h)."),
                                 QStringLiteral("DURATION"));
    command.addOptions({name, ttl});
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop executor enroll --name N [--token-ttl 24h]");
    if (auto given = command.positionals(0, syntax); !given)
        return command.usageError(given.error().message);
    auto executorName = command.required(name, syntax);
    if (!executorName)
        return command.usageError(executorName.error().message);
    QJsonObject body{{QStringLiteral("name"), *executorName}};
    if (command.isSet(ttl))
        body.insert(QStringLiteral("token_ttl"), command.value(ttl));
    auto answer = command.post(QStringLiteral("/api/executors"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    const QJsonObject executor = answer->value(QLatin1String("executor")).toObject();
    printLine(QStringLiteral("Enrolled executor %1 \"%2\".")
                      .arg(executor.value(QLatin1String("id")).toInteger())
                      .arg(executor.value(QLatin1String("name")).toString()));
    printEnrollmentCommand(*answer, QStringLiteral("On the machine that will run sandboxes"));
    return kExitOk;
}

// One line about what the agent reported, or why there is none yet.
QString capabilitySummary(const QJsonObject &executor)
{
    const QJsonObject reported = executor.value(QLatin1String("capabilities")).toObject();
    if (reported.isEmpty())
        return QStringLiteral("-");
    auto capabilities = protocol::AgentCapabilities::fromJson(reported);
    if (!capabilities)
        return QStringLiteral("unreadable: %1").arg(capabilities.error().message);
    return capabilities->summary();
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("executor list"), QStringLiteral("List the hub's executor agents."));
    const QCommandLineOption all(QStringLiteral("all"), QStringLiteral("Include revoked executors."));
    command.addOptions({all});
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop executor list [--json] [--all]")); !given)
        return command.usageError(given.error().message);
    auto answer = command.get(QStringLiteral("/api/executors"));
    if (!answer)
        return command.failed(answer.error());
    QJsonArray executors;
    for (const QJsonValue &value : answer->value(QLatin1String("executors")).toArray()) {
        if (command.isSet(all) || value.toObject().value(QLatin1String("revoked_at")).isNull())
            executors.append(value);
    }
    if (command.printedJson(executors))
        return kExitOk;
    if (executors.isEmpty()) {
        printLine(QStringLiteral("No executors yet. Enroll one with: cloop executor enroll --name NAME"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const QJsonValue &value : std::as_const(executors)) {
        const QJsonObject executor = value.toObject();
        const QJsonValue protocol = executor.value(QLatin1String("protocol"));
        rows.append({QString::number(executor.value(QLatin1String("id")).toInteger()),
                     executor.value(QLatin1String("name")).toString(),
                     executor.value(QLatin1String("version")).toString(QStringLiteral("-")),
                     protocol.isNull() ? QStringLiteral("-") : QString::number(protocol.toInt()),
                     executor.value(QLatin1String("state")).toString(), formatLastSeen(executor),
                     capabilitySummary(executor)});
    }
    printLine(formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("VERSION"), QStringLiteral("PROTOCOL"),
                           QStringLiteral("STATE"), QStringLiteral("LAST SEEN"), QStringLiteral("CAPABILITIES")},
                          rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    return revokeDaemon(arguments, kExecutorNoun);
}

int runAgent(const QStringList &arguments)
{
    return agent::runAgentCommand(arguments);
}

constexpr Subcommand kSubcommands[] = {{"enroll", enroll}, {"list", list}, {"revoke", revoke}, {"agent", runAgent}};

} // namespace

int runExecutorCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kSubcommands);
}

} // namespace cloop::cli
