#include "cli/auditcommand.h"

#include "cli/command.h"
#include "cli/output.h"
#include "common/api/auditlogentry.h"
#include "common/util/duration.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace cloop::cli {

namespace {

// A duration back from now ("2h") as it is; a time as ISO 8601 UTC (a time
// without a zone is this machine's local time).
Result<QString> parseSince(const QString &text)
{
    if (util::parseDuration(text))
        return text;
    const QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (time.isValid())
        return time.toUTC().toString(Qt::ISODateWithMs);
    return Error::make(QStringLiteral("usage"),
        QStringLiteral(
            "--since \"%1\" is neither a time (2026-11-29T17:00:00Z) nor a duration back "
            "from now (90s, 30m, 2h, 7d)")
            .arg(text));
}

} // namespace

int runAuditCommand(const QStringList &arguments)
{
    Command command(QStringLiteral("audit"),
        QStringLiteral("Show the hub's audit log (hub administrators): who changed what, when."));
    const QCommandLineOption since(QStringLiteral("since"),
        QStringLiteral("From this ISO 8601 time, or this long ago (2h, 7d)."),
        QStringLiteral("TIME|DURATION"));
    const QCommandLineOption action(QStringLiteral("action"),
        QStringLiteral("Only this action, such as forwarder.bind or project.role."),
        QStringLiteral("NAME"));
    command.addOptions({ since, action });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(
            0, QStringLiteral("cloop audit [--since TIME|DURATION] [--action NAME] [--json]"));
        !given)
        return command.usageError(given.error().message);
    QueryItems query;
    if (command.isSet(since)) {
        auto from = parseSince(command.value(since));
        if (!from)
            return command.usageError(from.error().message);
        query.append({ QStringLiteral("since"), *from });
    }
    if (command.isSet(action)) {
        static const QRegularExpression actionName(QStringLiteral("\\A[a-z]+(\\.[a-z_]+){1,3}\\z"));
        if (!actionName.match(command.value(action)).hasMatch())
            return command.usageError(
                QStringLiteral("--action \"%1\" is not an action name such as forwarder.bind")
                    .arg(command.value(action)));
        query.append({ QStringLiteral("action"), command.value(action) });
    }
    auto entries = command.getList<api::AuditLogEntry>(
        QStringLiteral("/api/audit"), QLatin1StringView("entries"), query);
    if (!entries)
        return command.failed(entries.error());
    if (command.printedJson(*entries))
        return kExitOk;
    if (entries->isEmpty()) {
        printLine(QStringLiteral("No audit entries match."));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::AuditLogEntry &entry : std::as_const(*entries)) {
        rows.append(
            { entry.at.isValid() ? entry.at.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                                 : QStringLiteral("-"),
                entry.describeActor(), entry.action, entry.describeSubject(),
                api::describeAuditDetails(entry.details) });
    }
    printLine(formatTable(
        { QStringLiteral("TIME (UTC)"), QStringLiteral("ACTOR"), QStringLiteral("ACTION"),
            QStringLiteral("SUBJECT"), QStringLiteral("DETAILS") },
        rows));
    return kExitOk;
}

} // namespace cloop::cli
