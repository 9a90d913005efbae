#include "common/net/websocketupgrade.h"

#include "common/net/websocketframes.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <http_parser.h>

#include <array>

namespace cloop::net::websocket {

namespace {

constexpr qsizetype kMaxHeadBytes = 8 * 1024;
constexpr int kMaxHeaders = 64;
constexpr qsizetype kMaxRefusalBody = 2 * 1024;

bool hasToken(QByteArrayView list, QByteArrayView token)
{
    for (const QByteArray &item : list.toByteArray().split(',')) {
        if (item.trimmed().compare(token, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

QString headTooLong()
{
    return QStringLiteral("the answer's head is longer than %1 bytes").arg(kMaxHeadBytes);
}

} // namespace

QByteArray newClientKey()
{
    std::array<quint32, 4> random {};
    QRandomGenerator::system()->fillRange(random.data(), random.size());
    return QByteArray(reinterpret_cast<const char *>(random.data()), sizeof random).toBase64();
}

QByteArray upgradeRequest(QByteArrayView host, QByteArrayView path, QByteArrayView clientKey)
{
    QByteArray request;
    request.reserve(160 + host.size() + path.size());
    request.append("GET ").append(path.isEmpty() ? QByteArrayView("/") : path);
    request.append(" HTTP/1.1\r\nHost: ").append(host);
    request.append("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ");
    request.append(clientKey).append("\r\nSec-WebSocket-Version: 13\r\n\r\n");
    return request;
}

struct UpgradeResponseReader::Parser
{
    http_parser parser {};
    http_parser_settings settings {};

    static UpgradeResponseReader &self(http_parser *parser)
    {
        return *static_cast<UpgradeResponseReader *>(parser->data);
    }

    static int onStatus(http_parser *parser, const char *at, size_t length)
    {
        self(parser).m_statusText.append(at, static_cast<qsizetype>(length));
        return 0;
    }

    // A field or a value may arrive in pieces: a field's name is whole once
    // its value begins, a value once the next field (or the end) begins.
    static int onHeaderField(http_parser *parser, const char *at, size_t length)
    {
        UpgradeResponseReader &me = self(parser);
        if (me.m_inValue) {
            me.m_field.clear();
            me.m_inValue = false;
        }
        if (me.m_field.isEmpty() && ++me.m_headers > kMaxHeaders) {
            me.m_problem
                = QStringLiteral("the answer has more than %1 header fields").arg(kMaxHeaders);
            return -1;
        }
        me.m_field.append(QByteArray(at, static_cast<qsizetype>(length)).toLower());
        return 0;
    }

    static int onHeaderValue(http_parser *parser, const char *at, size_t length)
    {
        UpgradeResponseReader &me = self(parser);
        me.m_inValue = true;
        QByteArray *target = nullptr;
        if (me.m_field == "upgrade")
            target = &me.m_upgrade;
        else if (me.m_field == "connection")
            target = &me.m_connection;
        else if (me.m_field == "sec-websocket-accept")
            target = &me.m_accept;
        else if (me.m_field == "retry-after")
            target = &me.m_retryAfter;
        if (target)
            target->append(at, static_cast<qsizetype>(length));
        return 0;
    }

    static int onHeadersComplete(http_parser *parser)
    {
        UpgradeResponseReader &me = self(parser);
        me.m_headDone = true;
        me.m_status = static_cast<int>(parser->status_code);
        // What follows a 101 is the WebSocket's, whatever length the head
        // claims: the parser is told there is no body (1), so it stops at
        // the head's end.
        return me.m_status == 101 ? 1 : 0;
    }

    static int onBody(http_parser *parser, const char *at, size_t length)
    {
        UpgradeResponseReader &me = self(parser);
        const qsizetype room = kMaxRefusalBody - me.m_body.size();
        me.m_body.append(at, std::min(room, static_cast<qsizetype>(length)));
        return 0;
    }

    static int onMessageComplete(http_parser *parser)
    {
        self(parser).m_messageDone = true;
        http_parser_pause(parser, 1);
        return 0;
    }
};

UpgradeResponseReader::UpgradeResponseReader(QByteArray clientKey)
    : m_parser(std::make_unique<Parser>())
    , m_expectedAccept(acceptKeyFor(clientKey))
{
    http_parser_init(&m_parser->parser, HTTP_RESPONSE);
    m_parser->parser.data = this;
    http_parser_settings &settings = m_parser->settings;
    http_parser_settings_init(&settings);
    settings.on_status = &Parser::onStatus;
    settings.on_header_field = &Parser::onHeaderField;
    settings.on_header_value = &Parser::onHeaderValue;
    settings.on_headers_complete = &Parser::onHeadersComplete;
    settings.on_body = &Parser::onBody;
    settings.on_message_complete = &Parser::onMessageComplete;
}

UpgradeResponseReader::~UpgradeResponseReader() = default;

UpgradeResponseReader::Progress UpgradeResponseReader::done(Step step, qsizetype consumed)
{
    m_outcome = step;
    return { step, consumed };
}

UpgradeResponseReader::Progress UpgradeResponseReader::malformed(
    const QString &why, qsizetype consumed)
{
    if (m_problem.isEmpty())
        m_problem = why;
    return done(Step::Malformed, consumed);
}

UpgradeResponseReader::Progress UpgradeResponseReader::feed(QByteArrayView bytes)
{
    if (m_outcome)
        return { *m_outcome, 0 };
    http_parser &parser = m_parser->parser;
    qsizetype consumed = 0;
    while (consumed < bytes.size()) {
        // The head is given no more than its budget, so a head over it is
        // refused the same however the input was split.
        QByteArrayView part = bytes.sliced(consumed);
        if (!m_headDone)
            part = part.first(std::min(part.size(), kMaxHeadBytes - m_headBytes));
        const auto parsed = static_cast<qsizetype>(http_parser_execute(
            &parser, &m_parser->settings, part.data(), static_cast<size_t>(part.size())));
        consumed += parsed;
        const auto error = static_cast<http_errno>(parser.http_errno);
        if (error != HPE_OK && error != HPE_PAUSED)
            return malformed(QStringLiteral("not an HTTP answer (%1)")
                                 .arg(QString::fromLatin1(http_errno_description(error))),
                consumed);
        const QByteArrayView taken = part.first(parsed);
        if (!m_headDone) {
            m_headTail = (m_headTail + taken.toByteArray()).right(3);
            m_headBytes += parsed;
            if (m_headBytes >= kMaxHeadBytes)
                return malformed(headTooLong(), consumed);
            continue;
        }
        if (m_status == 101) {
            // The parser forgives a line that ends in a lone CR; the bytes
            // after the head are the WebSocket's, so where it ends must be
            // exact.
            const QByteArray end = (m_headTail + taken.toByteArray()).right(3);
            if (!end.endsWith("\n\r\n") && !end.endsWith("\n\n"))
                return malformed(
                    QStringLiteral("the answer's head does not end with an empty line"), consumed);
            const Step verdict = checkUpgrade();
            if (verdict == Step::Upgraded && !parser.upgrade)
                return malformed(
                    QStringLiteral("a 101 answer that does not switch protocols"), consumed);
            return done(verdict, consumed);
        }
        if (m_messageDone) {
            m_problem = refusal();
            return done(Step::Refused, consumed);
        }
        if (parsed == 0)
            break;
    }
    return { Step::NeedMore, consumed };
}

UpgradeResponseReader::Progress UpgradeResponseReader::finish()
{
    if (m_outcome)
        return { *m_outcome, 0 };
    if (m_headDone && m_status != 101) {
        // An answer without a length ends with the connection.
        http_parser_execute(&m_parser->parser, &m_parser->settings, nullptr, 0);
        m_problem = refusal();
        return done(Step::Refused, 0);
    }
    return malformed(m_headBytes == 0
            ? QStringLiteral("the server closed the connection without answering the upgrade")
            : QStringLiteral("the server closed the connection in the middle of its answer"),
        0);
}

UpgradeResponseReader::Step UpgradeResponseReader::checkUpgrade()
{
    if (m_upgrade.trimmed().compare("websocket", Qt::CaseInsensitive) != 0)
        m_problem = QStringLiteral("the 101 answer does not upgrade to a WebSocket");
    else if (!hasToken(m_connection, "upgrade"))
        m_problem = QStringLiteral("the 101 answer's Connection header does not say Upgrade");
    else if (m_accept.trimmed() != m_expectedAccept)
        m_problem = QStringLiteral("the 101 answer's Sec-WebSocket-Accept does not answer our key");
    else
        return Step::Upgraded;
    return Step::Malformed;
}

QString UpgradeResponseReader::refusal() const
{
    // The hub says why in its JSON error; anything else in its own words.
    QString why;
    const QJsonObject body = QJsonDocument::fromJson(m_body).object();
    const QJsonValue error = body.value(QLatin1String("error"));
    if (error.isObject())
        why = error.toObject().value(QLatin1String("message")).toString();
    else if (body.value(QLatin1String("message")).isString())
        why = body.value(QLatin1String("message")).toString();
    else
        why = QString::fromUtf8(m_body).simplified().left(200);
    QString text = QStringLiteral("the server answered the upgrade with %1 %2")
                       .arg(m_status)
                       .arg(QString::fromLatin1(m_statusText).simplified());
    if (!why.isEmpty())
        text += QStringLiteral(": ") + why;
    if (!m_retryAfter.isEmpty())
        text += QStringLiteral(" (retry after %1 s)")
                    .arg(QString::fromLatin1(m_retryAfter.trimmed()));
    return text;
}

} // namespace cloop::net::websocket
