#include "common/api/recordfields.h"

namespace cloop::api {

RecordReader::RecordReader(const QJsonObject &object, QLatin1StringView record)
    : m_object(object)
    , m_record(record)
{ }

QJsonValue RecordReader::present(
    QLatin1StringView key, bool (QJsonValue::*is)() const, const char *what)
{
    const QJsonValue value = m_object.value(key);
    if (value.isUndefined() || value.isNull())
        return {};
    if (!(value.*is)()) {
        fail(QStringLiteral("\"%1\" must be %2").arg(key, QLatin1String(what)));
        return {};
    }
    return value;
}

qint64 RecordReader::integer(QLatin1StringView key)
{
    return optionalInteger(key).value_or(0);
}

std::optional<qint64> RecordReader::optionalInteger(QLatin1StringView key)
{
    const QJsonValue value = present(key, &QJsonValue::isDouble, "a number");
    if (!value.isDouble())
        return std::nullopt;
    const double number = value.toDouble();
    // Ids and counts are whole numbers within what a double holds exactly
    // (the range first: converting a larger double is undefined).
    if (!(number <= 9007199254740992.0 && number >= -9007199254740992.0)
        || number != double(qint64(number))) {
        fail(QStringLiteral("\"%1\" must be a whole number").arg(key));
        return std::nullopt;
    }
    return qint64(number);
}

QString RecordReader::text(QLatin1StringView key)
{
    return optionalText(key).value_or(QString());
}

std::optional<QString> RecordReader::optionalText(QLatin1StringView key)
{
    const QJsonValue value = present(key, &QJsonValue::isString, "a string");
    if (!value.isString())
        return std::nullopt;
    return value.toString();
}

bool RecordReader::flag(QLatin1StringView key)
{
    return present(key, &QJsonValue::isBool, "true or false").toBool();
}

QDateTime RecordReader::time(QLatin1StringView key)
{
    const QString written = text(key);
    if (written.isEmpty())
        return {};
    const QDateTime time = QDateTime::fromString(written, Qt::ISODateWithMs);
    if (!time.isValid())
        fail(QStringLiteral("\"%1\" is not an ISO 8601 time: \"%2\"").arg(key, written.left(40)));
    return time;
}

QJsonObject RecordReader::object(QLatin1StringView key)
{
    return present(key, &QJsonValue::isObject, "an object").toObject();
}

QJsonArray RecordReader::array(QLatin1StringView key)
{
    return present(key, &QJsonValue::isArray, "a list").toArray();
}

QStringList RecordReader::texts(QLatin1StringView key)
{
    QStringList out;
    for (const QJsonValue &entry : array(key)) {
        if (!entry.isString()) {
            fail(QStringLiteral("\"%1\" must be a list of strings").arg(key));
            return {};
        }
        out.append(entry.toString());
    }
    return out;
}

void RecordReader::fail(const QString &problem)
{
    if (!m_error)
        m_error = Error::make(QStringLiteral("invalid_record"),
            QStringLiteral("%1 record: %2").arg(m_record, problem));
}

QString timeText(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
}

QJsonValue timeOrNull(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(timeText(time)) : QJsonValue(QJsonValue::Null);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QJsonValue textOrNull(const std::optional<QString> &text)
{
    return text ? QJsonValue(*text) : QJsonValue(QJsonValue::Null);
}

QJsonValue integerOrNull(const std::optional<qint64> &number)
{
    return number ? QJsonValue(*number) : QJsonValue(QJsonValue::Null);
}

} // namespace cloop::api
