#pragma once

#include "common/api/recordfields.h"

#include <concepts>
#include <tuple>

namespace cloop::api {

// A record's fields are listed once, in a table of Field and ChoiceField
// rows, and read and written from it: a field cannot be read under one key
// and written under another, nor written and forgotten on the way in.
//
// A row's member type says how its value is read (RecordReader's rules)
// and written: what may be missing (an optional, a time) is written null
// when it is; `empty` says what a field of plain text or number that holds
// its empty value becomes.
enum class WhenEmpty
{
    Written, // "" or 0, as it is
    Null, // the API's "not known"
    LeftOut // absent from the object
};

namespace recordvalue {

template <typename Value>
concept NestedRecord = requires(const Value &value, const QJsonObject &json)
{
    { Value::fromJson(json) };
    {
        value.toJson()
        } -> std::same_as<QJsonObject>;
};

inline void read(RecordReader &from, QLatin1StringView key, qint64 &value)
{
    value = from.integer(key);
}
inline void read(RecordReader &from, QLatin1StringView key, int &value)
{
    value = int(from.integer(key));
}
inline void read(RecordReader &from, QLatin1StringView key, std::optional<qint64> &value)
{
    value = from.optionalInteger(key);
}
inline void read(RecordReader &from, QLatin1StringView key, std::optional<int> &value)
{
    const auto number = from.optionalInteger(key);
    value = number ? std::optional<int>(int(*number)) : std::nullopt;
}
inline void read(RecordReader &from, QLatin1StringView key, QString &value)
{
    value = from.text(key);
}
inline void read(RecordReader &from, QLatin1StringView key, std::optional<QString> &value)
{
    value = from.optionalText(key);
}
inline void read(RecordReader &from, QLatin1StringView key, bool &value)
{
    value = from.flag(key);
}
// Absent is "not said", which a plain flag cannot tell from false.
inline void read(RecordReader &from, QLatin1StringView key, std::optional<bool> &value)
{
    value = from.source().contains(key) ? std::optional<bool>(from.flag(key)) : std::nullopt;
}
inline void read(RecordReader &from, QLatin1StringView key, QDateTime &value)
{
    value = from.time(key);
}
inline void read(RecordReader &from, QLatin1StringView key, QStringList &value)
{
    value = from.texts(key);
}
inline void read(RecordReader &from, QLatin1StringView key, QJsonObject &value)
{
    value = from.object(key);
}
template <NestedRecord Value> void read(RecordReader &from, QLatin1StringView key, Value &value)
{
    value = from.nested<Value>(from.object(key));
}

template <NestedRecord Value>
void read(RecordReader &from, QLatin1StringView key, QList<Value> &value)
{
    value.clear();
    for (const QJsonValue &entry : from.array(key)) {
        if (!entry.isObject()) {
            from.fail(QStringLiteral("\"%1\" must be a list of objects").arg(key));
            return;
        }
        auto record = Value::fromJson(entry.toObject());
        if (!record) {
            from.fail(record.error().message);
            return;
        }
        value.append(std::move(*record));
    }
}

inline bool isEmpty(qint64 value)
{
    return value == 0;
}
inline bool isEmpty(int value)
{
    return value == 0;
}
inline bool isEmpty(const QString &value)
{
    return value.isEmpty();
}
template <typename Value> bool isEmpty(const std::optional<Value> &value)
{
    return !value.has_value();
}
template <typename Value> bool isEmpty(const Value &)
{
    return false;
}

inline QJsonValue written(const QDateTime &value)
{
    return timeOrNull(value);
}
inline QJsonValue written(const QStringList &value)
{
    return QJsonArray::fromStringList(value);
}
template <typename Value> QJsonValue written(const std::optional<Value> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}
template <NestedRecord Value> QJsonValue written(const Value &value)
{
    return value.toJson();
}
template <NestedRecord Value> QJsonValue written(const QList<Value> &value)
{
    return toJsonArray(value);
}
template <typename Value> QJsonValue written(const Value &value)
{
    return QJsonValue(value);
}

} // namespace recordvalue

template <typename Record, typename Value> struct Field
{
    QLatin1StringView key;
    Value Record::*member;
    WhenEmpty empty = WhenEmpty::Written;

    template <typename Into> void readInto(RecordReader &from, Into &record) const
    {
        recordvalue::read(from, key, record.*member);
    }

    template <typename From> void writeFrom(const From &record, QJsonObject &object) const
    {
        const Value &value = record.*member;
        if (empty == WhenEmpty::Written || !recordvalue::isEmpty(value))
            object.insert(key, recordvalue::written(value));
        else if (empty == WhenEmpty::Null)
            object.insert(key, QJsonValue(QJsonValue::Null));
    }
};

enum class Presence
{
    Optional,
    Required
};

// A field whose value is one of an enum's names; an optional one that is
// absent reads as the default a new record holds.
template <typename Record, typename Value, std::size_t N> struct ChoiceField
{
    QLatin1StringView key;
    Value Record::*member;
    const std::array<NamedValue<Value>, N> *names;
    Presence presence = Presence::Optional;

    template <typename Into> void readInto(RecordReader &from, Into &record) const
    {
        if (presence == Presence::Required && from.text(key).isEmpty())
            from.fail(QStringLiteral("\"%1\" is missing").arg(key));
        record.*member = from.choice(key, *names, record.*member);
    }

    template <typename From> void writeFrom(const From &record, QJsonObject &object) const
    {
        object.insert(key, nameIn(*names, record.*member));
    }
};

template <typename Record, typename... Fields>
void readFields(RecordReader &from, Record &record, const std::tuple<Fields...> &fields);
template <typename Record, typename... Fields>
QJsonObject writeRecord(const Record &record, const std::tuple<Fields...> &fields);

// A list of objects, each read and written by the table `entryFields`; a
// problem in an entry is the whole record's.
template <typename Record, typename Entry, typename EntryFields> struct ListField
{
    QLatin1StringView key;
    QList<Entry> Record::*member;
    const EntryFields *entryFields;

    template <typename Into> void readInto(RecordReader &from, Into &record) const
    {
        record.*member = from.objects<Entry>(key, [this](RecordReader &entry) {
            Entry read;
            readFields(entry, read, *entryFields);
            return read;
        });
    }

    template <typename From> void writeFrom(const From &record, QJsonObject &object) const
    {
        QJsonArray entries;
        for (const Entry &entry : record.*member)
            entries.append(writeRecord(entry, *entryFields));
        object.insert(key, entries);
    }
};

// An object that may be absent, read and written by the table `entryFields`.
template <typename Record, typename Entry, typename EntryFields> struct ObjectField
{
    QLatin1StringView key;
    std::optional<Entry> Record::*member;
    const EntryFields *entryFields;

    template <typename Into> void readInto(RecordReader &from, Into &record) const
    {
        if (!from.source().contains(key))
            return;
        const QJsonObject object = from.object(key);
        RecordReader entry(object, key);
        Entry read;
        readFields(entry, read, *entryFields);
        if (auto checked = entry.finish(std::move(read)))
            record.*member = std::move(*checked);
        else
            from.fail(checked.error().message);
    }

    template <typename From> void writeFrom(const From &record, QJsonObject &object) const
    {
        if (const auto &entry = record.*member)
            object.insert(key, writeRecord(*entry, *entryFields));
    }
};

// Spelled out for the compilers that do not yet deduce an aggregate's
// arguments from its members (clang before 17).
template <typename Record, typename Value>
Field(QLatin1StringView, Value Record::*) -> Field<Record, Value>;
template <typename Record, typename Value>
Field(QLatin1StringView, Value Record::*, WhenEmpty) -> Field<Record, Value>;
template <typename Record, typename Value, std::size_t N>
ChoiceField(QLatin1StringView, Value Record::*, const std::array<NamedValue<Value>, N> *)
    -> ChoiceField<Record, Value, N>;
template <typename Record, typename Value, std::size_t N>
ChoiceField(QLatin1StringView, Value Record::*, const std::array<NamedValue<Value>, N> *, Presence)
    -> ChoiceField<Record, Value, N>;
template <typename Record, typename Entry, typename EntryFields>
ListField(QLatin1StringView, QList<Entry> Record::*, const EntryFields *)
    -> ListField<Record, Entry, EntryFields>;
template <typename Record, typename Entry, typename EntryFields>
ObjectField(QLatin1StringView, std::optional<Entry> Record::*, const EntryFields *)
    -> ObjectField<Record, Entry, EntryFields>;

template <typename Record, typename... Fields>
void readFields(RecordReader &from, Record &record, const std::tuple<Fields...> &fields)
{
    std::apply([&](const auto &...field) { (field.readInto(from, record), ...); }, fields);
}

template <typename Record, typename... Fields>
void writeFields(const Record &record, QJsonObject &object, const std::tuple<Fields...> &fields)
{
    std::apply([&](const auto &...field) { (field.writeFrom(record, object), ...); }, fields);
}

// The whole record from `object`; `name` names it in errors.
template <typename Record, typename... Fields>
Result<Record> readRecord(
    const QJsonObject &object, QLatin1StringView name, const std::tuple<Fields...> &fields)
{
    RecordReader from(object, name);
    Record record;
    readFields(from, record, fields);
    return from.finish(std::move(record));
}

template <typename Record, typename... Fields>
QJsonObject writeRecord(const Record &record, const std::tuple<Fields...> &fields)
{
    QJsonObject object;
    writeFields(record, object, fields);
    return object;
}

} // namespace cloop::api
