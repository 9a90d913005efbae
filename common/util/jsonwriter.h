#pragma once

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace cloop::util {

// Compact JSON written straight into a buffer, for answers too large to
// build as a QJsonObject tree first: a listing of 10,000 records spent most
// of its time inserting keys into QJsonObjects and copying the tree into one
// document. Keys are written in the order given and must not repeat within
// an object; the caller nests begin/end calls correctly.
class JsonWriter
{
public:
    explicit JsonWriter(QByteArray &out)
        : m_out(out)
    { }

    void beginObject();
    void endObject();
    void beginArray();
    void endArray();

    // The next value belongs to `name` in the object being written.
    JsonWriter &key(QLatin1StringView name);

    void value(const QString &text);
    void value(QLatin1StringView text);
    void value(qint64 number);
    void value(int number) { value(qint64(number)); }
    void value(bool flag);
    // Anything else, arrays and objects included, as Qt writes it.
    void value(const QJsonValue &value);
    void null();

    template <typename T> void field(QLatin1StringView name, const T &fieldValue)
    {
        key(name).value(fieldValue);
    }
    void nullField(QLatin1StringView name) { key(name).null(); }

private:
    template <typename Name> JsonWriter &memberKey(Name name)
    {
        separate();
        writeString(name);
        m_out += ':';
        m_afterKey = true;
        return *this;
    }
    void separate();
    void writeString(QStringView text);
    void writeString(QLatin1StringView text);

    QByteArray &m_out;
    // For each open object or array: whether it has a member yet.
    QList<bool> m_hasMember;
    bool m_afterKey = false;
};

// An object written by `write(writer)`, read back: for the few places that
// need as a QJsonObject what is otherwise written straight out.
template <typename Write> QJsonObject writtenObject(Write &&write)
{
    QByteArray written;
    JsonWriter out(written);
    write(out);
    return QJsonDocument::fromJson(written).object();
}

} // namespace cloop::util
