#include "common/util/bytesize.h"

#include <QRegularExpression>

namespace cloop::util {

namespace {

struct Unit
{
    QLatin1StringView names[3];
    int shift;
};

const Unit kUnits[] = {
    { { QLatin1StringView("K"), QLatin1StringView("KB"), QLatin1StringView("KiB") }, 10 },
    { { QLatin1StringView("M"), QLatin1StringView("MB"), QLatin1StringView("MiB") }, 20 },
    { { QLatin1StringView("G"), QLatin1StringView("GB"), QLatin1StringView("GiB") }, 30 },
    { { QLatin1StringView("T"), QLatin1StringView("TB"), QLatin1StringView("TiB") }, 40 },
};

constexpr qint64 kLargest = qint64(1) << 62;

} // namespace

Result<qint64> parseByteSize(const QString &text)
{
    static const QRegularExpression shape(QStringLiteral("\\A([0-9]{1,19})\\s*([A-Za-z]*)\\z"));
    const auto invalid = [&text] {
        return Error::make(QStringLiteral("invalid_size"),
            QStringLiteral("\"%1\" is not a size (use e.g. 65536, 512KiB, 64MiB, 4GiB)").arg(text));
    };
    const auto match = shape.match(text.trimmed());
    if (!match.hasMatch())
        return invalid();
    bool numeric = false;
    const qint64 number = match.captured(1).toLongLong(&numeric);
    if (!numeric || number > kLargest)
        return invalid();
    const QString unit = match.captured(2);
    if (unit.isEmpty() || unit == QLatin1String("B"))
        return number;
    for (const Unit &known : kUnits) {
        for (const QLatin1StringView name : known.names) {
            if (unit.compare(name, Qt::CaseInsensitive) != 0)
                continue;
            if (number > (kLargest >> known.shift))
                return invalid();
            return number << known.shift;
        }
    }
    return invalid();
}

QString formatByteSize(qint64 bytes)
{
    static const char *const kNames[] = { "KiB", "MiB", "GiB", "TiB" };
    if (bytes < 1024 && bytes > -1024)
        return bytes == 1 ? QStringLiteral("1 byte") : QStringLiteral("%1 bytes").arg(bytes);
    double value = double(bytes);
    int unit = -1;
    while ((value >= 1024 || value <= -1024) && unit < 3) {
        value /= 1024;
        ++unit;
    }
    // Whole numbers as such ("64 MiB"), the rest with one decimal.
    const bool whole = value == double(qint64(value));
    return QStringLiteral("%1 %2").arg(
        whole ? QString::number(qint64(value)) : QString::number(value, 'f', 1),
        QLatin1String(kNames[unit]));
}

} // namespace cloop::util
