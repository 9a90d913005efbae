#include "hub/edge/httprequestparser.h"

#include <http_parser.h>

namespace cloop::hub::edge {

namespace {

int statusFor(http_errno error)
{
    switch (error) {
    case HPE_HEADER_OVERFLOW:
        return 431;
    case HPE_INVALID_VERSION:
        return 505;
    default:
        return 400;
    }
}

bool equalsIgnoringCase(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && QByteArrayView(a).compare(b, Qt::CaseInsensitive) == 0;
}

} // namespace

QByteArray HttpRequestHead::value(QByteArrayView name) const
{
    for (const HttpHeader &header : headers) {
        if (equalsIgnoringCase(header.name, name))
            return header.value;
    }
    return {};
}

QByteArray HttpRequestHead::path() const
{
    const qsizetype query = target.indexOf('?');
    return query < 0 ? target : target.left(query);
}

struct HttpRequestParser::ParserState
{
    http_parser parser {};
    http_parser_settings settings {};
};

struct HttpRequestParser::Callbacks
{
    static HttpRequestParser &self(http_parser *parser)
    {
        return *static_cast<HttpRequestParser *>(parser->data);
    }

    static int onMessageBegin(http_parser *parser)
    {
        self(parser).startMessage();
        return 0;
    }

    static int onUrl(http_parser *parser, const char *at, size_t length)
    {
        self(parser).m_head.target.append(at, static_cast<qsizetype>(length));
        return 0;
    }

    static int onHeaderField(http_parser *parser, const char *at, size_t length)
    {
        HttpRequestParser &me = self(parser);
        QList<HttpHeader> &headers = me.m_head.headers;
        // A field may arrive in pieces; a new one starts after a value. The
        // head's byte limit bounds how many there can be; their count is
        // checked once the head is whole, so that where the input was split
        // never changes the verdict.
        if (me.m_lastWasValue || headers.isEmpty()) {
            headers.append(HttpHeader {});
            me.m_lastWasValue = false;
        }
        headers.last().name.append(at, static_cast<qsizetype>(length));
        return 0;
    }

    static int onHeaderValue(http_parser *parser, const char *at, size_t length)
    {
        HttpRequestParser &me = self(parser);
        me.m_lastWasValue = true;
        me.m_head.headers.last().value.append(at, static_cast<qsizetype>(length));
        return 0;
    }

    static int onHeadersComplete(http_parser *parser)
    {
        HttpRequestParser &me = self(parser);
        HttpRequestHead &head = me.m_head;
        if (parser->http_major != 1) {
            me.m_refusal = HttpParseError { 505, "only HTTP/1.x is served here" };
            return -1;
        }
        if (head.headers.size() > me.m_limits.maxHeaders) {
            me.m_refusal = HttpParseError { 431,
                QByteArray("more than ") + QByteArray::number(me.m_limits.maxHeaders)
                    + " header fields" };
            return -1;
        }
        for (HttpHeader &header : head.headers) {
            header.name = header.name.toLower();
            header.value = header.value.trimmed();
        }
        head.method = http_method_str(static_cast<http_method>(parser->method));
        head.versionMinor = parser->http_minor;
        if (parser->flags & F_CONTENTLENGTH)
            head.contentLength = parser->content_length;
        head.chunked = (parser->flags & F_CHUNKED) != 0;
        head.upgrade = parser->upgrade != 0;
        head.keepAlive = http_should_keep_alive(parser) != 0;
        head.expectContinue = equalsIgnoringCase(head.value("expect"), "100-continue");
        me.m_headDone = true;
        // Stop here: the caller decides about the body before any of it is read.
        http_parser_pause(parser, 1);
        return 0;
    }

    static int onBody(http_parser *parser, const char *at, size_t length)
    {
        HttpRequestParser &me = self(parser);
        if (me.m_body.size() + static_cast<qsizetype>(length) > me.m_bodyLimit) {
            me.m_refusal = HttpParseError { 413,
                QByteArray("the body is larger than this request takes (")
                    + QByteArray::number(me.m_bodyLimit) + " bytes)" };
            return 1;
        }
        me.m_body.append(at, static_cast<qsizetype>(length));
        return 0;
    }

    static int onMessageComplete(http_parser *parser)
    {
        HttpRequestParser &me = self(parser);
        me.m_complete = true;
        // One request at a time: the next one is read after this one is answered.
        http_parser_pause(parser, 1);
        return 0;
    }
};

HttpRequestParser::HttpRequestParser(Limits limits)
    : m_state(std::make_unique<ParserState>())
    , m_limits(limits)
{
    http_parser_init(&m_state->parser, HTTP_REQUEST);
    m_state->parser.data = this;
    http_parser_settings &settings = m_state->settings;
    http_parser_settings_init(&settings);
    settings.on_message_begin = &Callbacks::onMessageBegin;
    settings.on_url = &Callbacks::onUrl;
    settings.on_header_field = &Callbacks::onHeaderField;
    settings.on_header_value = &Callbacks::onHeaderValue;
    settings.on_headers_complete = &Callbacks::onHeadersComplete;
    settings.on_body = &Callbacks::onBody;
    settings.on_message_complete = &Callbacks::onMessageComplete;
}

HttpRequestParser::HttpRequestParser()
    : HttpRequestParser(Limits {})
{ }

HttpRequestParser::~HttpRequestParser() = default;

void HttpRequestParser::startMessage()
{
    m_head = HttpRequestHead {};
    m_body.clear();
    m_bodyLimit = 0;
    m_lastWasValue = false;
    m_begun = true;
}

void HttpRequestParser::setBodyLimit(qsizetype bytes)
{
    m_bodyLimit = bytes;
    if (m_head.contentLength && *m_head.contentLength > static_cast<quint64>(bytes)) {
        fail(413,
            QByteArray("a body of ") + QByteArray::number(*m_head.contentLength)
                + " bytes is larger than this request takes (" + QByteArray::number(bytes)
                + " bytes)",
            0);
    }
}

HttpRequestParser::Progress HttpRequestParser::fail(
    int status, QByteArray reason, qsizetype consumed)
{
    m_failed = true;
    m_error = HttpParseError { status, std::move(reason) };
    return Progress { Step::Failed, consumed };
}

HttpRequestParser::Progress HttpRequestParser::feed(QByteArrayView data)
{
    if (m_failed)
        return Progress { Step::Failed, 0 };
    if (m_complete) {
        // The previous request was answered: the next one starts from scratch.
        m_complete = false;
        m_begun = false;
        m_headDone = false;
        m_headBytes = 0;
    }
    if (data.isEmpty())
        return Progress { Step::NeedMore, 0 };

    const bool inHead = !m_headDone;
    qsizetype chunk = data.size();
    if (inHead) {
        const qsizetype room = m_limits.maxHeadBytes - m_headBytes;
        if (room <= 0)
            return fail(431,
                "the request head is larger than " + QByteArray::number(m_limits.maxHeadBytes)
                    + " bytes",
                0);
        chunk = std::min(chunk, room);
    }

    http_parser &parser = m_state->parser;
    if (HTTP_PARSER_ERRNO(&parser) == HPE_PAUSED)
        http_parser_pause(&parser, 0);
    const auto consumed = static_cast<qsizetype>(
        http_parser_execute(&parser, &m_state->settings, data.data(), static_cast<size_t>(chunk)));
    if (inHead)
        m_headBytes += consumed;

    const auto error = static_cast<http_errno>(HTTP_PARSER_ERRNO(&parser));
    if (error == HPE_PAUSED) {
        if (m_complete)
            return Progress { Step::MessageComplete, consumed };
        if (inHead && m_headDone) {
            // The last line feed of the head is read on the next feed.
            m_head.size = m_headBytes + 1;
            return Progress { Step::HeadComplete, consumed };
        }
    }
    if (m_refusal)
        return fail(m_refusal->status, std::move(m_refusal->reason), consumed);
    if (error != HPE_OK)
        return fail(statusFor(error),
            QByteArray("malformed request: ") + http_errno_description(error), consumed);
    if (!m_headDone && m_headBytes >= m_limits.maxHeadBytes)
        return fail(431,
            "the request head is larger than " + QByteArray::number(m_limits.maxHeadBytes)
                + " bytes",
            consumed);
    return Progress { Step::NeedMore, consumed };
}

} // namespace cloop::hub::edge
