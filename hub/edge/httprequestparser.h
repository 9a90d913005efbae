#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <memory>
#include <optional>

namespace cloop::hub::edge {

struct HttpHeader
{
    QByteArray name; // lower case
    QByteArray value;
};

// What a request says before its body: everything the front decides on
// (refuse, upgrade, how much body to accept) without reading further.
struct HttpRequestHead
{
    QByteArray method; // "GET", "POST", ...
    QByteArray target; // as sent: "/api/runs?all=1"
    int versionMinor = 1; // HTTP/1.<minor>
    QList<HttpHeader> headers;
    std::optional<quint64> contentLength;
    bool chunked = false;
    // "Connection: upgrade" with an "Upgrade" header.
    bool upgrade = false;
    bool keepAlive = true;
    bool expectContinue = false;
    qsizetype size = 0; // bytes of the request line and headers

    // The first value of a header, by case-insensitive name; empty when absent.
    QByteArray value(QByteArrayView name) const;
    // The target's path, without the query.
    QByteArray path() const;
    // The body the head announces: its Content-Length, or unknown (chunked).
    bool announcesBody() const { return chunked || (contentLength && *contentLength > 0); }
};

// Why a request cannot be served, as the HTTP status to answer with.
struct HttpParseError
{
    int status = 400;
    QByteArray reason;
};

// An incremental, bounded parser for HTTP/1.x requests on one connection,
// over Debian's http-parser. It stops after each head and after each
// message, so the caller decides (and answers) before a byte more is read:
// a head over its limit, a body over what the route takes, and malformed
// input end in an error, never in unbounded buffering.
class HttpRequestParser final
{
public:
    struct Limits
    {
        qsizetype maxHeadBytes = 16 * 1024;
        int maxHeaders = 64;
    };

    enum class Step
    {
        NeedMore, // everything given was consumed
        HeadComplete, // head() is ready; set the body limit, then feed the rest
        MessageComplete, // takeBody(); the next feed starts the next request
        Failed, // error(); nothing more is accepted
    };

    struct Progress
    {
        Step step = Step::NeedMore;
        qsizetype consumed = 0;
    };

    HttpRequestParser();
    explicit HttpRequestParser(Limits limits);
    ~HttpRequestParser();
    HttpRequestParser(const HttpRequestParser &) = delete;
    HttpRequestParser &operator=(const HttpRequestParser &) = delete;

    Progress feed(QByteArrayView data);

    const HttpRequestHead &head() const { return m_head; }
    // The largest body the current request may have. A declared length
    // over it fails at once (413), a chunked body as soon as it passes it.
    void setBodyLimit(qsizetype bytes);
    QByteArray takeBody() { return std::exchange(m_body, {}); }
    const HttpParseError &error() const { return m_error; }
    bool hasFailed() const { return m_failed; }
    // True while a request has begun and is not complete.
    bool isInsideMessage() const { return m_begun && !m_complete; }

private:
    struct Callbacks;
    friend struct Callbacks;

    Progress fail(int status, QByteArray reason, qsizetype consumed);
    void startMessage();

    struct ParserState;
    std::unique_ptr<ParserState> m_state;
    Limits m_limits;
    HttpRequestHead m_head;
    QByteArray m_body;
    qsizetype m_bodyLimit = 0;
    qsizetype m_headBytes = 0;
    HttpParseError m_error;
    // Set by a callback that refused: the status it chose wins over the
    // parser's own "callback failed".
    std::optional<HttpParseError> m_refusal;
    bool m_lastWasValue = false;
    bool m_begun = false;
    bool m_headDone = false;
    bool m_complete = false;
    bool m_failed = false;
};

} // namespace cloop::hub::edge
