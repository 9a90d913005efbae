#include "app-dashboard/core/timewords.h"

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

} // namespace cloop::dashboard
