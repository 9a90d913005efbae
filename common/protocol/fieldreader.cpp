#include "common/protocol/fieldreader.h"

#include <QJsonValue>

#include <cmath>

namespace cloop::protocol {

Error protocolError(const QString &message)
{
    return Error::make(QStringLiteral("protocol_error"), message);
}

QString FieldReader::string(QLatin1StringView key, qsizetype maxLength, bool required)
{
    const QJsonValue value = m_object.value(key);
    if (value.isUndefined() && !required)
        return {};
    if (!value.isString()) {
        fail(QStringLiteral("\"%1\" must be a string").arg(key));
        return {};
    }
    QString text = value.toString();
    if (required && text.isEmpty())
        fail(QStringLiteral("\"%1\" must not be empty").arg(key));
    else if (text.size() > maxLength)
        fail(QStringLiteral("\"%1\" is longer than %2 characters").arg(key).arg(maxLength));
    return text;
}

qint64 FieldReader::integer(QLatin1StringView key, qint64 min, qint64 max)
{
    const QJsonValue value = m_object.value(key);
    const double number = value.toDouble(-1);
    if (!value.isDouble() || std::trunc(number) != number) {
        fail(QStringLiteral("\"%1\" must be an integer").arg(key));
        return 0;
    }
    // Range first: converting a double outside qint64 is undefined.
    // min and max lie within +-2^53, so they convert exactly.
    if (!(number >= static_cast<double>(min) && number <= static_cast<double>(max))) {
        fail(QStringLiteral("\"%1\" = %2 is outside %3..%4")
                 .arg(key)
                 .arg(number, 0, 'g', 17)
                 .arg(min)
                 .arg(max));
        return 0;
    }
    return static_cast<qint64>(number);
}

bool FieldReader::boolean(QLatin1StringView key)
{
    const QJsonValue value = m_object.value(key);
    if (value.isUndefined())
        return false;
    if (!value.isBool()) {
        fail(QStringLiteral("\"%1\" must be true or false").arg(key));
        return false;
    }
    return value.toBool();
}

QJsonObject FieldReader::optionalObject(QLatin1StringView key)
{
    const QJsonValue value = m_object.value(key);
    if (value.isUndefined() || value.isNull())
        return {};
    if (!value.isObject()) {
        fail(QStringLiteral("\"%1\" must be an object").arg(key));
        return {};
    }
    return value.toObject();
}

void FieldReader::fail(const QString &problem)
{
    if (!m_error)
        m_error = protocolError(QStringLiteral("%1: %2").arg(m_subject, problem));
}

} // namespace cloop::protocol
