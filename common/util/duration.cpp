#include "common/util/duration.h"

namespace cloop::util {

Result<std::chrono::seconds> parseDuration(const QString &text)
{
    auto invalid = [&] {
        return Error::make(QStringLiteral("invalid_duration"),
            QStringLiteral("\"%1\" is not a duration (use e.g. 90s, 30m, 8h, 7d)").arg(text));
    };
    if (text.isEmpty())
        return invalid();
    constexpr qint64 kMaxSeconds = qint64(10) * 365 * 24 * 3600;
    qint64 total = 0;
    qint64 number = -1;
    for (const QChar c : text) {
        if (c >= QLatin1Char('0') && c <= QLatin1Char('9')) { // ASCII only: "٥h" is not a duration
            number = (number < 0 ? 0 : number) * 10 + (c.unicode() - u'0');
            if (number > kMaxSeconds)
                return invalid();
            continue;
        }
        if (number < 0)
            return invalid();
        qint64 unit = 0;
        switch (c.unicode()) {
        case u's':
            unit = 1;
            break;
        case u'm':
            unit = 60;
            break;
        case u'h':
            unit = 3600;
            break;
        case u'd':
            unit = 86400;
            break;
        default:
            return invalid();
        }
        total += number * unit;
        if (total > kMaxSeconds)
            return invalid();
        number = -1;
    }
    if (number >= 0) // a trailing number without a unit
        return invalid();
    return std::chrono::seconds(total);
}

QString formatDuration(std::chrono::seconds duration)
{
    qint64 s = duration.count();
    if (s == 0)
        return QStringLiteral("0s");
    QString out;
    if (s < 0) {
        out = QStringLiteral("-");
        s = -s;
    }
    const struct
    {
        qint64 size;
        char16_t unit;
    } units[] = { { 86400, u'd' }, { 3600, u'h' }, { 60, u'm' }, { 1, u's' } };
    for (const auto &u : units) {
        if (s >= u.size) {
            out += QString::number(s / u.size) + QChar(u.unit);
            s %= u.size;
        }
    }
    return out;
}

QString formatMilliseconds(qint64 milliseconds)
{
    if (milliseconds < 1000)
        return QStringLiteral("%1 ms").arg(milliseconds);
    if (milliseconds % 1000 == 0)
        return QStringLiteral("%1 s").arg(milliseconds / 1000);
    return QStringLiteral("%1 s").arg(static_cast<double>(milliseconds) / 1000.0, 0, 'f', 1);
}

QString formatUtcTime(const QDateTime &at)
{
    if (!at.isValid())
        return QStringLiteral("-");
    return at.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
}

} // namespace cloop::util
