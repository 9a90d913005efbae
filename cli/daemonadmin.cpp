#include "cli/daemonadmin.h"

#include "common/api/enrolleddaemon.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"

namespace cloop::cli {

int revokeDaemon(const QStringList &arguments, const DaemonNoun &noun)
{
    const QString name = QString::fromLatin1(noun.noun);
    const QString family = QString::fromLatin1(noun.family);
    Command command(QStringLiteral("%1 revoke").arg(family),
        QStringLiteral("Revoke a %1: its live session ends now and it can never connect again.")
            .arg(name));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The %1's id (see cloop %2 list).").arg(name, family));
    const QCommandLineOption reason(QStringLiteral("reason"),
        QStringLiteral("Why (kept in the audit log)."), QStringLiteral("TEXT"));
    command.addOptions({ reason });
    if (auto done = command.parse(arguments))
        return *done;
    auto given
        = command.positionals(1, QStringLiteral("cloop %1 revoke ID [--reason TEXT]").arg(family));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("%1 id").arg(name));
    if (!id)
        return command.usageError(id.error().message);
    auto answer
        = command.post(QStringLiteral("%1/%2/revoke").arg(QLatin1String(noun.apiPath)).arg(*id),
            { { QStringLiteral("reason"), command.value(reason) } });
    if (!answer)
        return command.failed(answer.error());
    auto revoked = api::EnrolledDaemon::fromJson(*answer);
    if (!revoked)
        return command.failed(revoked.error());
    printLine(QStringLiteral("Revoked %1 %2 \"%3\".").arg(name).arg(*id).arg(revoked->name));
    return kExitOk;
}

void printEnrollmentCommand(const QString &bundle, const QDateTime &tokenExpiresAt,
    const QString &where, const DaemonNoun &noun)
{
    const QString file = QStringLiteral("%1.bundle").arg(QLatin1String(noun.noun));
    printLine(
        QStringLiteral("%1, run this once before %2:").arg(where, formatTime(tokenExpiresAt)));
    printLine(QString());
    printLine(QStringLiteral("  (umask 077; cat > %1)    # paste the bundle below, then Ctrl-D")
                  .arg(file));
    printLine(QStringLiteral("  cloop %1 --token-file %2").arg(QLatin1String(noun.daemon), file));
    printLine(QString());
    printLine(QStringLiteral("Or, as root, as the service that starts with the machine:"));
    printLine(QString());
    printLine(QStringLiteral("  (umask 077; cat > %1)").arg(file));
    printLine(
        QStringLiteral("  cloop %1 install --token-file %2").arg(QLatin1String(noun.daemon), file));
    printLine(QString());
    printLine(
        QStringLiteral("The bundle, which works once (the file is deleted when it is redeemed):"));
    printLine(QString());
    printLine(QStringLiteral("  ") + bundle);
    printLine(QString());
    printLine(QStringLiteral(
        "Treat it like a password, and keep it off command lines: every local user can read "
        "those."));
}

} // namespace cloop::cli
