#include "common/util/jsonlistentries.h"

#include <QString>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace cloop::util {

namespace {

// rapidjson's SAX reader with its own event handler: it validates the text
// and, parsing iteratively, calls back with the stream at each bracket, so
// the handler can note where each entry of the list begins and ends.
class ListEntriesHandler
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ListEntriesHandler>
{
public:
    ListEntriesHandler(
        const rapidjson::MemoryStream &stream, QByteArrayView text, QLatin1StringView key)
        : m_stream(stream)
        , m_text(text)
        , m_key(key)
    { }

    // Scalars, and anything else the base class routes here.
    bool Default() { return fits(Shape::Scalar); }

    bool StartObject()
    {
        if (!open(Shape::Object))
            return false;
        if (m_inList && m_depth == kInList + 1)
            m_entryStart = qsizetype(m_stream.Tell());
        return true;
    }

    bool Key(const char *text, rapidjson::SizeType length, bool /*copy*/)
    {
        if (m_depth != 1)
            return true;
        m_valueIsList = QByteArrayView(text, length) == QByteArrayView(m_key);
        if (m_valueIsList && m_seenKey)
            return refuse(QStringLiteral("\"%1\" appears twice").arg(m_key));
        m_seenKey = m_seenKey || m_valueIsList;
        return true;
    }

    bool EndObject(rapidjson::SizeType /*members*/)
    {
        --m_depth;
        if (m_inList && m_depth == kInList) {
            const qsizetype end = qsizetype(m_stream.Tell()) + 1;
            const QByteArrayView entry = m_text.sliced(m_entryStart, end - m_entryStart);
            // Where the brackets are is the reader's own detail; checked, not trusted.
            if (!entry.startsWith('{') || !entry.endsWith('}'))
                return refuse(QStringLiteral("entry %1 of \"%2\" could not be delimited")
                                  .arg(m_entries.size() + 1)
                                  .arg(m_key));
            m_entries.append(entry);
        }
        return true;
    }

    bool StartArray() { return open(Shape::Array); }

    bool EndArray(rapidjson::SizeType /*elements*/)
    {
        if (--m_depth == 1)
            m_inList = false;
        return true;
    }

    const QString &problem() const { return m_problem; }
    QList<QByteArrayView> takeEntries() { return std::move(m_entries); }

private:
    enum class Shape
    {
        Scalar,
        Object,
        Array
    };
    // Brackets open: 1 inside the root object, 2 inside the list, 3 inside
    // one of its entries.
    static constexpr int kInList = 2;

    // Whether a value of `shape` may stand where the reader is.
    bool fits(Shape shape)
    {
        if (m_depth == 0 && shape != Shape::Object)
            return refuse(QStringLiteral("the answer is not a JSON object"));
        if (m_depth == 1 && m_valueIsList && shape != Shape::Array)
            return refuse(QStringLiteral("\"%1\" is not a list").arg(m_key));
        if (m_inList && m_depth == kInList && shape != Shape::Object)
            return refuse(QStringLiteral("entry %1 of \"%2\" is not an object")
                              .arg(m_entries.size() + 1)
                              .arg(m_key));
        return true;
    }

    bool open(Shape shape)
    {
        if (!fits(shape))
            return false;
        if (m_depth == 1) {
            m_inList = m_valueIsList;
            m_valueIsList = false;
        }
        ++m_depth;
        return true;
    }

    bool refuse(QString problem)
    {
        m_problem = std::move(problem);
        return false;
    }

    const rapidjson::MemoryStream &m_stream;
    QByteArrayView m_text;
    QLatin1StringView m_key;
    int m_depth = 0;
    bool m_valueIsList = false; // the root's member being read is `key`
    bool m_inList = false; // inside the list under `key`
    bool m_seenKey = false;
    qsizetype m_entryStart = 0;
    QList<QByteArrayView> m_entries;
    QString m_problem;
};

} // namespace

Result<QList<QByteArrayView>> jsonListEntries(QByteArrayView text, QLatin1StringView key)
{
    rapidjson::MemoryStream stream(text.data(), size_t(text.size()));
    ListEntriesHandler handler(stream, text, key);
    rapidjson::Reader reader;
    // Iterative, so that deep nesting costs heap, never the stack.
    constexpr unsigned kFlags
        = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
    const rapidjson::ParseResult parsed = reader.Parse<kFlags>(stream, handler);
    if (!handler.problem().isEmpty())
        return Error::make(QStringLiteral("bad_answer"), handler.problem());
    if (parsed.IsError())
        return Error::make(QStringLiteral("bad_answer"),
            QStringLiteral("the answer is not JSON: %1 at byte %2")
                .arg(QLatin1StringView(rapidjson::GetParseError_En(parsed.Code())))
                .arg(parsed.Offset()));
    return handler.takeEntries();
}

} // namespace cloop::util
