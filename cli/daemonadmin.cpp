#include "cli/daemonadmin.h"

#include "common/api/enrolleddaemon.h"
#include "common/api/enrollment.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/output.h"

namespace cloop::cli {

namespace {
// The one positional a command on one daemon takes: its id.
Result<qint64> daemonIdOf(const Command &command, const QString &usage, const QString &name)
{
    auto given = command.positionals(1, usage);
    if (!given)
        return given.error();
    return parseId(given->first(), QStringLiteral("%1 id").arg(name));
}
} // namespace

int revokeDaemon(const QStringList &arguments, const DaemonNoun &noun)
{
    const QString name = QString::fromLatin1(noun.noun);
    const QString family = QString::fromLatin1(noun.family);
    Command command(QStringLiteral("%1 revoke").arg(family),
        QStringLiteral("Revoke %1: its live session ends now and it can never connect again.")
            .arg(QLatin1String(noun.withArticle)));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The %1's id (see cloop %2 list).").arg(name, family));
    const QCommandLineOption reason(QStringLiteral("reason"),
        QStringLiteral("Why (kept in the audit log)."), QStringLiteral("TEXT"));
    command.addOptions({ reason });
    if (auto done = command.parse(arguments))
        return *done;
    auto id = daemonIdOf(
        command, QStringLiteral("cloop %1 revoke ID [--reason TEXT]").arg(family), name);
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

template <typename Daemon>
int reenrollDaemon(const QStringList &arguments, const DaemonNoun &noun, const QString &where)
{
    const QString name = QString::fromLatin1(noun.noun);
    const QString family = QString::fromLatin1(noun.family);
    Command command(QStringLiteral("%1 reenroll").arg(family),
        QStringLiteral("Issue a new one-time enrollment bundle for %1 that never redeemed its "
                       "first (lost, leaked or expired) and print the command again. Earlier "
                       "bundles stop working at once.")
            .arg(QLatin1String(noun.withArticle)));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The %1's id (see cloop %2 list).").arg(name, family));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"),
        QStringLiteral("How long the bundle can be redeemed (default 24h)."),
        QStringLiteral("DURATION"));
    command.addOptions({ ttl });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto id = daemonIdOf(
        command, QStringLiteral("cloop %1 reenroll ID [--token-ttl 24h]").arg(family), name);
    if (!id)
        return command.usageError(id.error().message);
    QJsonObject body;
    if (command.isSet(ttl)) {
        if (Status valid = checkDuration(command.value(ttl), QStringLiteral("--token-ttl")); !valid)
            return command.usageError(valid.error().message);
        body.insert(QStringLiteral("token_ttl"), command.value(ttl));
    }
    auto answer = command.post(
        QStringLiteral("%1/%2/enrollment").arg(QLatin1String(noun.apiPath)).arg(*id), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto enrollment = api::Enrollment<Daemon>::fromJson(*answer);
    if (!enrollment)
        return command.failed(enrollment.error());
    printLine(QStringLiteral("New enrollment bundle for %1 %2 \"%3\"; earlier ones no longer work.")
                  .arg(name)
                  .arg(enrollment->daemon.id)
                  .arg(enrollment->daemon.name));
    printEnrollmentCommand(enrollment->bundle, enrollment->tokenExpiresAt, where, noun);
    return kExitOk;
}

template int reenrollDaemon<api::Forwarder>(
    const QStringList &, const DaemonNoun &, const QString &);
template int reenrollDaemon<api::Executor>(
    const QStringList &, const DaemonNoun &, const QString &);

int upgradeDaemon(const QStringList &arguments, const DaemonNoun &noun)
{
    const QString name = QString::fromLatin1(noun.noun);
    const QString family = QString::fromLatin1(noun.family);
    Command command(QStringLiteral("%1 upgrade").arg(family),
        QStringLiteral("Ask a connected %1 to upgrade itself from the releases the hub offers. "
                       "Its device checks the target against its own channel and installs it "
                       "through its root helper, only if its operator allowed remote upgrades.")
            .arg(name));
    command.addPositional(
        QStringLiteral("ID"), QStringLiteral("The %1's id (see cloop %2 list).").arg(name, family));
    const QCommandLineOption target(QStringLiteral("target"),
        QStringLiteral("A release (0.4.0), latest (the newest on the device's channel, the "
                       "default) or edge:COMMIT."),
        QStringLiteral("T"), QStringLiteral("latest"));
    command.addOptions({ target });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto id = daemonIdOf(
        command, QStringLiteral("cloop %1 upgrade ID [--target T] [--json]").arg(family), name);
    if (!id)
        return command.usageError(id.error().message);
    auto answer
        = command.post(QStringLiteral("%1/%2/upgrade").arg(QLatin1String(noun.apiPath)).arg(*id),
            { { QStringLiteral("target"), command.value(target) } });
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    const QString state = answer->value(QLatin1String("state")).toString();
    const QString to = answer->value(QLatin1String("target")).toString();
    if (state == QLatin1String("draining"))
        printLine(QStringLiteral("%1 %2 takes %3: it finishes its %4 run(s) first, then its root "
                                 "helper installs it. Follow it: cloop %5 list")
                      .arg(name)
                      .arg(*id)
                      .arg(to)
                      .arg(answer->value(QLatin1String("draining")).toInt())
                      .arg(family));
    else
        printLine(QStringLiteral("%1 %2 takes %3: its root helper installs it now. Follow it: "
                                 "cloop %4 list, cloop audit --action %5.upgrade.outcome")
                      .arg(name)
                      .arg(*id)
                      .arg(to, family, name));
    return kExitOk;
}

QString softwareCell(const api::EnrolledDaemon &daemon)
{
    if (daemon.version.isEmpty())
        return QStringLiteral("-");
    QString cell = daemon.version;
    if (daemon.channel == QLatin1String("edge"))
        cell += QStringLiteral(" (edge)");
    if (daemon.upgrading)
        return cell + QStringLiteral(", upgrading to ")
            + daemon.upgrade.value(QLatin1String("target")).toString();
    const QString last = daemon.upgrade.value(QLatin1String("state")).toString();
    if (last == QLatin1String("rolled_back") || last == QLatin1String("failed"))
        cell += QStringLiteral(", upgrade %1").arg(QString(last).replace(u'_', u' '));
    if (!daemon.offeredVersion.isEmpty())
        cell += QStringLiteral(", %1 offered").arg(daemon.offeredVersion);
    return cell;
}

QString stateCell(const api::EnrolledDaemon &daemon)
{
    if (daemon.upgrading && daemon.connected)
        return QStringLiteral("upgrading");
    // Words for people; --json keeps the enum (awaiting_enrollment).
    return QString(api::EnrolledDaemon::stateName(daemon.state)).replace(u'_', u' ');
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
