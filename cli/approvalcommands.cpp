#include "cli/approvalcommands.h"

#include "common/api/approval.h"

#include "cli/argumentchecks.h"
#include "cli/bindingcommands.h"
#include "cli/bindingtermsoptions.h"
#include "cli/command.h"
#include "cli/output.h"

#include <QJsonArray>

namespace cloop::cli {

namespace {

QString stateText(const api::BindingRequest &request)
{
    if (request.isPending())
        return QStringLiteral("pending, expires %1").arg(formatDistance(request.expiresAt));
    QString out = api::BindingRequest::stateName(request.state);
    if (!request.decidedBy.isEmpty())
        out += QStringLiteral(" by ") + request.decidedBy;
    if (request.bindingId)
        out += QStringLiteral(": binding %1").arg(*request.bindingId);
    if (!request.decisionReason.isEmpty())
        out += QStringLiteral(": ") + request.decisionReason;
    return out;
}

// The request's id, from the one positional argument.
Result<qint64> requestId(const Command &command, const QString &syntax)
{
    auto given = command.positionals(1, syntax);
    if (!given)
        return given.error();
    return parseId(given->first(), QStringLiteral("request id"));
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("approvals list"),
        QStringLiteral("Your approvals inbox: the pending binding requests you may decide (never "
                       "your own). --all shows every request you may see, in every state; --mine "
                       "the ones you filed."));
    const QCommandLineOption all(
        QStringLiteral("all"), QStringLiteral("Every request, decided ones included."));
    const QCommandLineOption mine(
        QStringLiteral("mine"), QStringLiteral("The requests you filed."));
    command.addOptions({ all, mine });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given
        = command.positionals(0, QStringLiteral("cloop approvals list [--all | --mine] [--json]"));
        !given)
        return command.usageError(given.error().message);
    if (command.isSet(all) && command.isSet(mine))
        return command.usageError(QStringLiteral("give --all or --mine, not both"));
    QueryItems query;
    if (command.isSet(all))
        query.append({ QStringLiteral("all"), QStringLiteral("1") });
    if (command.isSet(mine))
        query.append({ QStringLiteral("mine"), QStringLiteral("1") });
    auto requests = command.getList<api::BindingRequest>(
        QStringLiteral("/api/requests"), QLatin1StringView("requests"), query);
    if (!requests)
        return command.failed(requests.error());
    if (command.printedJson(*requests))
        return kExitOk;
    if (requests->isEmpty()) {
        printLine(command.isSet(mine) ? QStringLiteral("You have filed no requests.")
                : command.isSet(all)  ? QStringLiteral("No requests.")
                                      : QStringLiteral("Nothing waits for your decision."));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::BindingRequest &request : std::as_const(*requests)) {
        rows.append({ QString::number(request.id),
            QStringLiteral("%1 (%2)").arg(request.forwarder).arg(request.forwarderId),
            request.project, request.requestedBy, request.ttl,
            executorText(request.virtualExecutor), targetText(request.target, request.address),
            request.reason, stateText(request) });
    }
    printLine(formatTable(
        { QStringLiteral("ID"), QStringLiteral("FORWARDER"), QStringLiteral("PROJECT"),
            QStringLiteral("REQUESTER"), QStringLiteral("TTL"), QStringLiteral("EXECUTOR"),
            QStringLiteral("SANDBOX IF"), QStringLiteral("REASON"), QStringLiteral("STATE") },
        rows));
    if (!command.isSet(all) && !command.isSet(mine))
        printLine(QStringLiteral(
            "\nDecide with: cloop approvals approve ID [--ttl …] [--virtual-executor …] | "
            "cloop approvals deny ID --reason TEXT"));
    return kExitOk;
}

int approve(const QStringList &arguments)
{
    Command command(QStringLiteral("approvals approve"),
        QStringLiteral("Approve a binding request (not your own), which creates the binding. "
                       "--ttl and --virtual-executor may narrow what was asked, never widen it; "
                       "the TTL counts from now."));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The request's id (see cloop approvals list)."));
    const BindingTermsOptions terms(BindingTermsOptions::Scope::Narrowing);
    command.addJsonOption();
    terms.addTo(command);
    if (auto done = command.parse(arguments))
        return *done;
    auto id = requestId(command,
        QStringLiteral("cloop approvals approve ID [--ttl DURATION] [--virtual-executor NAME]"));
    if (!id)
        return command.usageError(id.error().message);
    auto body = terms.read(command);
    if (!body)
        return command.usageError(body.error().message);
    auto answer = command.post(QStringLiteral("/api/requests/%1/approve").arg(*id), *body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto approval = api::Approval::fromJson(*answer);
    if (!approval)
        return command.failed(approval.error());
    printLine(
        QStringLiteral("Approved request %1 of %2.").arg(*id).arg(approval->request.requestedBy));
    for (const QString &line : describeBinding(approval->binding))
        printLine(line);
    return kExitOk;
}

int deny(const QStringList &arguments)
{
    Command command(
        QStringLiteral("approvals deny"), QStringLiteral("Deny a binding request (not your own)."));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The request's id (see cloop approvals list)."));
    const QCommandLineOption reason(QStringLiteral("reason"),
        QStringLiteral("Why; the requester sees it."), QStringLiteral("TEXT"));
    command.addOptions({ reason });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop approvals deny ID --reason TEXT");
    auto id = requestId(command, syntax);
    if (!id)
        return command.usageError(id.error().message);
    auto why = command.required(reason, syntax);
    if (!why)
        return command.usageError(why.error().message);
    auto denied = recordOf<api::BindingRequest>(command.post(
        QStringLiteral("/api/requests/%1/deny").arg(*id), { { QStringLiteral("reason"), *why } }));
    if (!denied)
        return command.failed(denied.error());
    printLine(QStringLiteral("Denied request %1 of %2.").arg(*id).arg(denied->requestedBy));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "list", list, "[--all | --mine] [--json]",
        "Your approvals inbox: the binding requests you may decide.", "cloop approvals list" },
    { "approve", approve, "ID [--ttl DURATION] [--virtual-executor NAME] [--json]",
        "Approve a request (not your own), maybe narrowed.",
        "cloop approvals approve 12 --ttl 8h" },
    { "deny", deny, "ID --reason TEXT", "Deny a request (not your own), saying why.",
        "cloop approvals deny 12 --reason \"the lab is booked this week\"" },
};

} // namespace

std::span<const util::Subcommand> approvalCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
