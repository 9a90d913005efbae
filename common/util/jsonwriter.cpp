#include "common/util/jsonwriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace cloop::util {

namespace {

bool needsEscape(char16_t c)
{
    return c < 0x20 || c == u'"' || c == u'\\';
}

void appendEscaped(QByteArray &out, char16_t c)
{
    switch (c) {
    case u'"':
        out += "\\\"";
        return;
    case u'\\':
        out += "\\\\";
        return;
    case u'\n':
        out += "\\n";
        return;
    case u'\r':
        out += "\\r";
        return;
    case u'\t':
        out += "\\t";
        return;
    case u'\b':
        out += "\\b";
        return;
    case u'\f':
        out += "\\f";
        return;
    default:
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[(c >> 4) & 0xf];
        out += kHex[c & 0xf];
    }
}

} // namespace

void JsonWriter::separate()
{
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (m_hasMember.isEmpty())
        return;
    if (m_hasMember.last())
        m_out += ',';
    m_hasMember.last() = true;
}

void JsonWriter::beginObject()
{
    separate();
    m_out += '{';
    m_hasMember.append(false);
}

void JsonWriter::endObject()
{
    m_hasMember.removeLast();
    m_out += '}';
}

void JsonWriter::beginArray()
{
    separate();
    m_out += '[';
    m_hasMember.append(false);
}

void JsonWriter::endArray()
{
    m_hasMember.removeLast();
    m_out += ']';
}

JsonWriter &JsonWriter::key(QLatin1StringView name)
{
    return memberKey(name);
}

void JsonWriter::writeString(QStringView text)
{
    // Most text is plain ASCII: written in one pass into room made once.
    const qsizetype start = m_out.size();
    m_out.resize(start + text.size() + 2);
    char *out = m_out.data() + start;
    *out++ = '"';
    qsizetype plain = 0;
    for (const QChar c : text) {
        const char16_t unit = c.unicode();
        if (unit >= 0x80 || needsEscape(unit))
            break;
        *out++ = char(unit);
        ++plain;
    }
    if (plain == text.size()) {
        *out = '"';
        return;
    }
    m_out.truncate(start + 1 + plain);
    qsizetype runStart = plain;
    for (qsizetype i = plain; i < text.size(); ++i) {
        const char16_t c = text[i].unicode();
        if (!needsEscape(c))
            continue;
        m_out += text.sliced(runStart, i - runStart).toUtf8();
        appendEscaped(m_out, c);
        runStart = i + 1;
    }
    m_out += text.sliced(runStart).toUtf8();
    m_out += '"';
}

void JsonWriter::writeString(QLatin1StringView text)
{
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x80 && !needsEscape(byte);
    });
    if (plain) {
        const qsizetype start = m_out.size();
        m_out.resize(start + text.size() + 2);
        char *out = m_out.data() + start;
        *out++ = '"';
        out = std::copy(text.begin(), text.end(), out);
        *out = '"';
        return;
    }
    m_out += '"';
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (needsEscape(byte))
            appendEscaped(m_out, byte);
        else if (byte < 0x80)
            m_out += c;
        else // Latin-1 above ASCII takes two bytes in UTF-8
            m_out += QString(QChar(char16_t(byte))).toUtf8();
    }
    m_out += '"';
}

void JsonWriter::value(const QString &text)
{
    separate();
    writeString(QStringView(text));
}

void JsonWriter::value(QLatin1StringView text)
{
    separate();
    writeString(text);
}

void JsonWriter::value(qint64 number)
{
    separate();
    m_out += QByteArray::number(number);
}

void JsonWriter::value(bool flag)
{
    separate();
    m_out += flag ? "true" : "false";
}

void JsonWriter::null()
{
    separate();
    m_out += "null";
}

void JsonWriter::value(const QJsonValue &json)
{
    switch (json.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        null();
        return;
    case QJsonValue::Bool:
        value(json.toBool());
        return;
    case QJsonValue::String:
        value(json.toString());
        return;
    case QJsonValue::Object: {
        // Member by member in the object's own order, which is the order
        // QJsonDocument writes: no document built just to be written out.
        const QJsonObject object = json.toObject();
        beginObject();
        for (auto member = object.constBegin(); member != object.constEnd(); ++member)
            memberKey(QStringView(member.key())).value(member.value());
        endObject();
        return;
    }
    case QJsonValue::Array:
        beginArray();
        for (const QJsonValue &element : json.toArray())
            value(element);
        endArray();
        return;
    case QJsonValue::Double: {
        // Qt writes numbers the way its own parser reads them back; a
        // one-element array borrows that without its brackets.
        separate();
        const QByteArray wrapped
            = QJsonDocument(QJsonArray { json }).toJson(QJsonDocument::Compact);
        m_out += wrapped.mid(1, wrapped.size() - 2);
        return;
    }
    }
}

} // namespace cloop::util
