#include "app-dashboard/core/timewords.h"

#include <QCoreApplication>
#include <QLocale>

namespace cloop::dashboard {

namespace {

QString withZone(const QString &words, const QDateTime &local)
{
    const QString zone = local.timeZoneAbbreviation();
    return zone.isEmpty() ? words : words + QLatin1Char(' ') + zone;
}

} // namespace

QString describeMoment(const QDateTime &at, const QDateTime &now)
{
    if (!at.isValid())
        return {};
    const QLocale locale;
    const QDateTime local = at.toLocalTime();
    const QDateTime localNow = now.toLocalTime();
    const QString time = locale.toString(local.time(), QLocale::ShortFormat);
    if (local.date() == localNow.date())
        return withZone(time, local);
    if (local.date().year() == localNow.date().year())
        return withZone(
            locale.toString(local.date(), QStringLiteral("ddd d MMM")) + QLatin1Char(' ') + time,
            local);
    return withZone(
        locale.toString(local.date(), QStringLiteral("d MMM yyyy")) + QLatin1Char(' ') + time,
        local);
}

QString describeInstant(const QDateTime &at)
{
    if (!at.isValid())
        return {};
    const QLocale locale;
    const QDateTime local = at.toLocalTime();
    return withZone(locale.toString(local.date(), QStringLiteral("d MMM yyyy")) + QLatin1Char(' ')
            + locale.toString(local.time(), QStringLiteral("HH:mm:ss")),
        local);
}

QString describeDuration(qint64 seconds)
{
    seconds = std::max<qint64>(seconds, 0);
    if (seconds < 120)
        return QCoreApplication::translate(
            "cloop::dashboard::TimeWords", "%n s", nullptr, int(seconds));
    const qint64 minutes = seconds / 60;
    // A whole hour reads as one: "1 h", "1 h 30 min", never "60 min".
    if (minutes < 60)
        return QCoreApplication::translate(
            "cloop::dashboard::TimeWords", "%n min", nullptr, int(minutes));
    const qint64 hours = minutes / 60;
    if (hours < 48)
        return minutes % 60 == 0
            ? QCoreApplication::translate(
                "cloop::dashboard::TimeWords", "%n h", nullptr, int(hours))
            : QCoreApplication::translate("cloop::dashboard::TimeWords", "%1 h %2 min")
                  .arg(hours)
                  .arg(minutes % 60);
    const qint64 days = hours / 24;
    return hours % 24 == 0
        ? QCoreApplication::translate("cloop::dashboard::TimeWords", "%n days", nullptr, int(days))
        : QCoreApplication::translate(
            "cloop::dashboard::TimeWords", "%n days %1 h", nullptr, int(days))
              .arg(hours % 24);
}

QString describeTimeLeft(const QDateTime &until, const QDateTime &now)
{
    const qint64 seconds = now.secsTo(until);
    if (seconds <= 0)
        return QCoreApplication::translate("cloop::dashboard::TimeWords", "expired");
    return QCoreApplication::translate("cloop::dashboard::TimeWords", "%1 left")
        .arg(describeDuration(seconds));
}

} // namespace cloop::dashboard
