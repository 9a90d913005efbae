#pragma once

#include "common/result.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cloop::protocol {

// The error every malformed message or channel opening gets.
Error protocolError(const QString &message);

// Reads typed fields out of one JSON object of the wire (a control message,
// a channel's opening) and remembers the first problem, so each parser reads
// as a list of fields. Problems read "<subject>: <problem>".
class FieldReader
{
public:
    FieldReader(const QJsonObject &object, QString subject)
        : m_object(object)
        , m_subject(std::move(subject))
    { }

    // A required string is present and not empty; an optional one may be
    // absent (and reads as empty then).
    QString string(QLatin1StringView key, qsizetype maxLength = 4096, bool required = true);
    qint64 integer(QLatin1StringView key, qint64 min, qint64 max);
    // Absent reads as false.
    bool boolean(QLatin1StringView key);
    // Absent or null reads as empty.
    QJsonObject optionalObject(QLatin1StringView key);

    bool has(QLatin1StringView key) const { return m_object.contains(key); }
    void fail(const QString &problem);

    const QJsonObject &object() const { return m_object; }
    const std::optional<Error> &error() const { return m_error; }

private:
    const QJsonObject &m_object;
    QString m_subject;
    std::optional<Error> m_error;
};

// The largest id on the wire: JSON numbers are exact up to 2^53.
inline constexpr qint64 kMaxWireId = (qint64(1) << 53);

} // namespace cloop::protocol
