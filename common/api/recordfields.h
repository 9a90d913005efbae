#pragma once

#include "common/result.h"
#include "common/util/jsonlistentries.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <array>
#include <optional>

namespace cloop::api {

// What the admin API's records (docs/api.md) are made of, read and written
// the same way by every record type in this folder.
//
// Reading is forgiving about absence and strict about shape: a field that
// is absent or null reads as its empty value (a hub may leave out what it
// does not know, an event may carry part of a record), but a field of the
// wrong type, a time that is no time or a state no version names refuses
// the whole record, naming the field.
class RecordReader
{
public:
    // `record` names the record in errors: "binding record: …".
    RecordReader(const QJsonObject &object, QLatin1StringView record);

    qint64 integer(QLatin1StringView key);
    std::optional<qint64> optionalInteger(QLatin1StringView key);
    QString text(QLatin1StringView key);
    // Null and absent are nothing; "" is something (an unplugged device's bus id).
    std::optional<QString> optionalText(QLatin1StringView key);
    bool flag(QLatin1StringView key);
    QDateTime time(QLatin1StringView key);
    QJsonObject object(QLatin1StringView key);
    QJsonArray array(QLatin1StringView key);
    QStringList texts(QLatin1StringView key);

    // A name out of a fixed set, such as a state; absent reads as `absent`.
    template <typename Table, typename Value>
    Value choice(QLatin1StringView key, const Table &names, Value absent)
    {
        const QString name = text(key);
        if (name.isEmpty())
            return absent;
        for (const auto &[value, known] : names) {
            if (name == known)
                return value;
        }
        fail(QStringLiteral("\"%1\" is not one of the names this version knows: \"%2\"")
                 .arg(key, name.left(40)));
        return absent;
    }

    // The list of objects under `key`, each read by `readEntry(RecordReader &)`;
    // a problem in an entry is the whole record's.
    template <typename Entry, typename ReadEntry>
    QList<Entry> objects(QLatin1StringView key, ReadEntry readEntry)
    {
        QList<Entry> entries;
        for (const QJsonValue &value : array(key)) {
            if (!value.isObject()) {
                fail(QStringLiteral("\"%1\" must be a list of objects").arg(key));
                return {};
            }
            const QJsonObject object = value.toObject();
            RecordReader entry(object, key);
            Entry parsed = readEntry(entry);
            if (entry.m_error)
                fail(entry.m_error->message);
            entries.append(std::move(parsed));
        }
        return entries;
    }

    // A record nested in this one, read by its own fromJson.
    template <typename Record> Record nested(const QJsonObject &object)
    {
        auto read = Record::fromJson(object);
        if (!read) {
            fail(read.error().message);
            return {};
        }
        return *read;
    }

    void fail(const QString &problem);
    const QJsonObject &source() const { return m_object; }

    template <typename Record> Result<Record> finish(Record record) const
    {
        if (m_error)
            return *m_error;
        return record;
    }

private:
    QJsonValue present(QLatin1StringView key, bool (QJsonValue::*is)() const, const char *what);

    const QJsonObject &m_object;
    QLatin1StringView m_record;
    std::optional<Error> m_error;
};

// A fixed set of names for the values of an enum, in one table per enum.
template <typename Value> struct NamedValue
{
    Value value;
    QLatin1StringView name;
};

template <typename Value, std::size_t N>
constexpr QLatin1StringView nameIn(const std::array<NamedValue<Value>, N> &names, Value value)
{
    for (const auto &[known, name] : names) {
        if (known == value)
            return name;
    }
    return names[0].name;
}

template <typename Value, std::size_t N>
std::optional<Value> valueIn(const std::array<NamedValue<Value>, N> &names, QStringView name)
{
    for (const auto &[value, known] : names) {
        if (name == known)
            return value;
    }
    return std::nullopt;
}

// How the records write what may be missing: null, never an empty string
// or a zero that could be mistaken for a value.
QString timeText(const QDateTime &time); // "2026-11-29T17:34:42.305Z"
QJsonValue timeOrNull(const QDateTime &time);
QJsonValue textOrNull(const QString &text);
QJsonValue textOrNull(const std::optional<QString> &text);
QJsonValue integerOrNull(const std::optional<qint64> &number);

// The list under `key` of an answer such as {"bindings": [...]}, each
// entry read by Record::fromJson; the first unreadable entry refuses all.
template <typename Record>
Result<QList<Record>> listOf(const QJsonObject &answer, QLatin1StringView key)
{
    QList<Record> records;
    const QJsonValue list = answer.value(key);
    if (!list.isArray() && !list.isUndefined())
        return Error::make(QStringLiteral("invalid_record"),
            QStringLiteral("the answer's \"%1\" is not a list").arg(key));
    const QJsonArray entries = list.toArray();
    records.reserve(entries.size());
    for (const QJsonValue &entry : entries) {
        auto record = Record::fromJson(entry.toObject());
        if (!record)
            return record.error();
        records.append(std::move(*record));
    }
    return records;
}

// The same list read straight from the answer's text, one entry at a time:
// for listings that may hold thousands of records (util::jsonListEntries).
template <typename Record>
Result<QList<Record>> listInText(QByteArrayView answer, QLatin1StringView key)
{
    auto entries = util::jsonListEntries(answer, key);
    if (!entries)
        return entries.error();
    QList<Record> records;
    records.reserve(entries->size());
    for (const QByteArrayView entry : std::as_const(*entries)) {
        QJsonParseError parseError {};
        const QJsonDocument document = QJsonDocument::fromJson(
            QByteArray::fromRawData(entry.data(), entry.size()), &parseError);
        if (parseError.error != QJsonParseError::NoError)
            return Error::make(QStringLiteral("bad_answer"),
                QStringLiteral("entry %1 of \"%2\" is not JSON: %3")
                    .arg(records.size() + 1)
                    .arg(key, parseError.errorString()));
        auto record = Record::fromJson(document.object());
        if (!record)
            return record.error();
        records.append(std::move(*record));
    }
    return records;
}

// The record `json` holds; none when it is empty or is not such a record.
template <typename Record> std::optional<Record> recordIn(const QJsonObject &json)
{
    if (json.isEmpty())
        return std::nullopt;
    auto record = Record::fromJson(json);
    return record ? std::optional<Record>(std::move(*record)) : std::nullopt;
}

template <typename Record> QJsonArray toJsonArray(const QList<Record> &records)
{
    QJsonArray out;
    for (const Record &record : records)
        out.append(record.toJson());
    return out;
}

} // namespace cloop::api
