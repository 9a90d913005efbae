#include "cli/bindingcommands.h"

#include "common/api/bindingrequest.h"

#include "cli/argumentchecks.h"
#include "cli/bindingtermsoptions.h"
#include "cli/command.h"
#include "cli/output.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

const QCommandLineOption kProjectOption(QStringLiteral("project"),
    QStringLiteral("The project's directory on the hub."), QStringLiteral("DIR"));
const QCommandLineOption kReasonOption(QStringLiteral("reason"),
    QStringLiteral("Why (kept in the audit log)."), QStringLiteral("TEXT"));

// What bind and request share: the forwarder id, the project, the terms.
struct BindingAsk
{
    qint64 forwarderId = 0;
    QJsonObject body;
};

Result<BindingAsk> readBindingAsk(
    const Command &command, const BindingTermsOptions &terms, const QString &syntax)
{
    auto given = command.positionals(1, syntax);
    if (!given)
        return given.error();
    auto id = parseId(given->first(), QStringLiteral("forwarder id"));
    if (!id)
        return id.error();
    auto projectText = command.required(kProjectOption, syntax);
    if (!projectText)
        return projectText.error();
    auto project = checkProjectPath(*projectText);
    if (!project)
        return project.error();
    auto body = terms.read(command);
    if (!body)
        return body.error();
    body->insert(QStringLiteral("project"), *project);
    return BindingAsk { *id, *body };
}

QString stateText(const api::Binding &binding)
{
    QString out = api::Binding::stateName(binding.state);
    if (binding.isActive())
        return out;
    out.replace(QLatin1Char('_'), QLatin1Char(' '));
    if (binding.endedAt.isValid())
        out += QLatin1Char(' ') + formatTime(binding.endedAt);
    if (!binding.endedBy.isEmpty())
        out += QStringLiteral(" by ") + binding.endedBy;
    if (!binding.endReason.isEmpty())
        out += QStringLiteral(": ") + binding.endReason;
    return out;
}

int bind(const QStringList &arguments)
{
    Command command(QStringLiteral("forward bind"),
        QStringLiteral("Lend a forwarder's device to a project's runs for a while. Needs "
                       "executor.manage on the project (its administrators, hub administrators); "
                       "maintainers use `cloop forward request`."));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The forwarder's id (see cloop forward list)."));
    const BindingTermsOptions terms(BindingTermsOptions::Scope::All);
    command.addOptions({ kProjectOption });
    command.addJsonOption();
    terms.addTo(command);
    if (auto done = command.parse(arguments))
        return *done;
    auto ask = readBindingAsk(command, terms,
        QStringLiteral("cloop forward bind ID --project DIR [--ttl 24h] [--virtual-executor NAME] "
                       "[--target IF] [--address CIDR]"));
    if (!ask)
        return command.usageError(ask.error().message);
    auto answer
        = command.post(QStringLiteral("/api/forwarders/%1/bind").arg(ask->forwarderId), ask->body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto binding = api::Binding::fromJson(*answer);
    if (!binding)
        return command.failed(binding.error());
    for (const QString &line : describeBinding(*binding))
        printLine(line);
    return kExitOk;
}

int bindings(const QStringList &arguments)
{
    Command command(QStringLiteral("forward bindings"),
        QStringLiteral("List the bindings you may see: active ones, or with --all every one and "
                       "how it ended."));
    const QCommandLineOption all(QStringLiteral("all"), QStringLiteral("Include ended bindings."));
    command.addOptions({ kProjectOption, all });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(
            0, QStringLiteral("cloop forward bindings [--project DIR] [--all] [--json]"));
        !given)
        return command.usageError(given.error().message);
    QueryItems query;
    if (command.isSet(kProjectOption)) {
        auto project = checkProjectPath(command.value(kProjectOption));
        if (!project)
            return command.usageError(project.error().message);
        query.append({ QStringLiteral("project"), *project });
    }
    if (command.isSet(all))
        query.append({ QStringLiteral("all"), QStringLiteral("1") });
    auto bindings = command.getList<api::Binding>(
        QStringLiteral("/api/bindings"), QLatin1StringView("bindings"), query);
    if (!bindings)
        return command.failed(bindings.error());
    if (command.printedJson(*bindings))
        return kExitOk;
    if (bindings->isEmpty()) {
        printLine(command.isSet(all)
                ? QStringLiteral("No bindings.")
                : QStringLiteral("No active bindings (--all shows ended ones)."));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::Binding &binding : std::as_const(*bindings)) {
        rows.append({ QString::number(binding.id),
            QStringLiteral("%1 (%2)").arg(binding.forwarder).arg(binding.forwarderId),
            binding.project, executorText(binding.virtualExecutor),
            targetText(binding.target, binding.address),
            binding.isActive() ? formatTimeAndDistance(binding.expiresAt)
                               : formatTime(binding.expiresAt),
            stateText(binding) });
    }
    printLine(
        formatTable({ QStringLiteral("ID"), QStringLiteral("FORWARDER"), QStringLiteral("PROJECT"),
                        QStringLiteral("EXECUTOR"), QStringLiteral("SANDBOX IF"),
                        QStringLiteral("EXPIRES"), QStringLiteral("STATE") },
            rows));
    return kExitOk;
}

int unbind(const QStringList &arguments)
{
    Command command(QStringLiteral("forward unbind"),
        QStringLiteral("End a binding now: runs of the project no longer get the device."));
    command.addPositional(QStringLiteral("BINDING"),
        QStringLiteral("The binding's id (see cloop forward bindings)."));
    command.addOptions({ kReasonOption });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop forward unbind BINDING --reason TEXT");
    auto given = command.positionals(1, syntax);
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("binding id"));
    if (!id)
        return command.usageError(id.error().message);
    auto reason = command.required(kReasonOption, syntax);
    if (!reason)
        return command.usageError(reason.error().message);
    auto unbound
        = recordOf<api::Binding>(command.post(QStringLiteral("/api/bindings/%1/unbind").arg(*id),
            { { QStringLiteral("reason"), *reason } }));
    if (!unbound)
        return command.failed(unbound.error());
    printLine(QStringLiteral("Unbound binding %1: forwarder %2 \"%3\" no longer serves %4.")
                  .arg(*id)
                  .arg(unbound->forwarderId)
                  .arg(unbound->forwarder, unbound->project));
    return kExitOk;
}

int request(const QStringList &arguments)
{
    Command command(QStringLiteral("forward request"),
        QStringLiteral("Ask for a binding. It waits in the approvals inbox of the administrators "
                       "who may decide it; one other than you approves or denies it."));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The forwarder's id (see cloop forward list)."));
    const BindingTermsOptions terms(BindingTermsOptions::Scope::All);
    command.addOptions({ kProjectOption, kReasonOption });
    command.addJsonOption();
    terms.addTo(command);
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral(
        "cloop forward request ID --project DIR [--ttl 24h] [--virtual-executor NAME] "
        "[--target IF] [--address CIDR] --reason TEXT");
    auto ask = readBindingAsk(command, terms, syntax);
    if (!ask)
        return command.usageError(ask.error().message);
    auto reason = command.required(kReasonOption, syntax);
    if (!reason)
        return command.usageError(reason.error().message);
    ask->body.insert(QStringLiteral("reason"), *reason);
    auto answer = command.post(
        QStringLiteral("/api/forwarders/%1/request").arg(ask->forwarderId), ask->body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto filed = api::BindingRequest::fromJson(*answer);
    if (!filed)
        return command.failed(filed.error());
    printLine(QStringLiteral("Filed request %1: forwarder %2 \"%3\" for %4, %5.")
                  .arg(filed->id)
                  .arg(filed->forwarderId)
                  .arg(filed->forwarder, filed->project, filed->ttl));
    printLine(QStringLiteral("It waits for an administrator of the project until %1; see it with "
                             "cloop approvals list --mine.")
                  .arg(formatTimeAndDistance(filed->expiresAt)));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "bind", bind,
        "ID --project DIR [--ttl 24h] [--virtual-executor NAME] [--target IF --address CIDR]",
        "Lend a forwarder's device to a project's runs for a while.",
        "cloop forward bind 3 --project /srv/projects/hsm --ttl 24h" },
    { "bindings", bindings, "[--project DIR] [--all] [--json]",
        "List bindings (--all: ended ones too).",
        "cloop forward bindings --project /srv/projects/hsm" },
    { "unbind", unbind, "BINDING --reason TEXT", "End a binding now.",
        "cloop forward unbind 7 --reason \"lab maintenance\"" },
    { "request", request,
        "ID --project DIR [--ttl 24h] [--virtual-executor NAME] [--target IF --address CIDR] "
        "--reason TEXT",
        "Ask the project's administrators for a binding.",
        "cloop forward request 3 --project /srv/projects/hsm --reason \"nightly HSM tests\"" },
};

} // namespace

QStringList describeBinding(const api::Binding &binding)
{
    QStringList lines { QStringLiteral("Binding %1: forwarder %2 \"%3\" serves %4 until %5.")
                            .arg(binding.id)
                            .arg(binding.forwarderId)
                            .arg(binding.forwarder, binding.project,
                                formatTimeAndDistance(binding.expiresAt)) };
    if (!binding.virtualExecutor.isEmpty())
        lines.append(QStringLiteral("Only runs on the virtual executor %1 get it.")
                         .arg(binding.virtualExecutor));
    if (!binding.target.isEmpty())
        lines.append(QStringLiteral("Inside the sandbox: %1.")
                         .arg(targetText(binding.target, binding.address)));
    return lines;
}

QString targetText(const QString &target, const QString &address)
{
    if (target.isEmpty() && address.isEmpty())
        return QStringLiteral("-");
    return QStringList { target, address }.join(QLatin1Char(' ')).trimmed();
}

QString executorText(const QString &virtualExecutor)
{
    return virtualExecutor.isEmpty() ? QStringLiteral("any") : virtualExecutor;
}

std::span<const util::Subcommand> bindingCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
