#include "hub/edge/httpconnection.h"

#include "common/logging.h"
#include "common/net/streamwebsocket.h"
#include "common/net/tlsstream.h"
#include "common/net/websocketframes.h"
#include "hub/edge/httpfront.h"

#include <QSocketNotifier>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/socket.h>

namespace cloop::hub::edge {

namespace {

bool sameIgnoringCase(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && a.compare(b, Qt::CaseInsensitive) == 0;
}

QString codeFor(int status)
{
    switch (status) {
    case 408:
        return QStringLiteral("request_timeout");
    case 413:
        return QStringLiteral("body_too_large");
    case 431:
        return QStringLiteral("head_too_large");
    case 404:
        return QStringLiteral("not_found");
    case 505:
        return QStringLiteral("http_version_not_supported");
    default:
        return QStringLiteral("bad_request");
    }
}

} // namespace

HttpConnection::HttpConnection(net::TlsStream *stream, PreAuthPool::Place place, HttpFront &front,
    HttpService &service, const EdgeLimits &limits)
    : QObject(&front)
    , m_stream(stream)
    , m_place(std::move(place))
    , m_front(front)
    , m_service(service)
    , m_limits(limits)
    , m_peer(stream->peerAddress())
    , m_parser(limits.request)
{
    m_stream->setParent(this);
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &HttpConnection::onDeadline);
}

HttpConnection::~HttpConnection()
{
    // Before the descriptor it watches closes with the members.
    delete m_drainNotifier;
    if (m_stream)
        m_stream->disconnect(this);
}

QString HttpConnection::describe() const
{
    return m_peer.toString();
}

void HttpConnection::start()
{
    connect(m_stream, &net::TlsStream::encrypted, this, &HttpConnection::onEncrypted);
    connect(m_stream, &net::TlsStream::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_stream, &net::TlsStream::drained, this, &HttpConnection::onDrained);
    connect(m_stream, &net::TlsStream::failed, this, [this](const QString &reason) {
        if (m_state == State::Handshaking && m_front.handshakeLog().admit())
            qCInfo(lcHubEdge).noquote()
                << "TLS handshake with" << describe() << "failed:" << reason;
    });
    connect(m_stream, &net::TlsStream::ended, this, &HttpConnection::finish);
    arm(m_limits.handshakeTimeout);
    m_stream->startServerHandshake();
}

void HttpConnection::arm(std::chrono::milliseconds deadline)
{
    m_deadline.start(deadline);
}

void HttpConnection::onEncrypted()
{
    m_state = State::Idle;
    arm(m_limits.firstRequestTimeout);
    process();
}

void HttpConnection::onReadyRead()
{
    if (m_state == State::Lingering) {
        // Until the answer is out: what TLS decrypts is dropped.
        discardReadable();
        return;
    }
    if (m_state == State::Serving) {
        // A pipelined request waits in TCP until this one is answered.
        m_stream->setReadPaused(true);
        return;
    }
    process();
}

void HttpConnection::discardReadable()
{
    char scratch[16 * 1024];
    qsizetype got = 0;
    while (m_stream && (got = m_stream->read(scratch, sizeof scratch)) > 0) {
        m_discarded += got;
        if (m_discarded > m_limits.lingerBytes) {
            finish();
            return;
        }
    }
}

bool HttpConnection::fillPending()
{
    m_pendingOffset = 0;
    const bool inHead = m_state == State::Idle || m_state == State::Head;
    const qsizetype most = inHead ? m_limits.request.maxHeadBytes + 1 : m_limits.readBufferBytes;
    m_pending.resize(most);
    const qsizetype got = m_stream->read(m_pending.data(), most);
    // Nothing yet, or the end (the stream says so with ended()).
    m_pending.resize(std::max<qsizetype>(got, 0));
    return got > 0;
}

void HttpConnection::process()
{
    while (m_state == State::Idle || m_state == State::Head || m_state == State::Body) {
        if (m_pendingOffset >= m_pending.size() && !fillPending())
            return;
        if (m_state == State::Idle) {
            m_state = State::Head;
            arm(m_limits.headTimeout);
        }
        const auto progress = m_parser.feed(QByteArrayView(m_pending).sliced(m_pendingOffset));
        m_pendingOffset += progress.consumed;
        switch (progress.step) {
        case HttpRequestParser::Step::NeedMore:
            break;
        case HttpRequestParser::Step::HeadComplete:
            onHeadComplete();
            break;
        case HttpRequestParser::Step::MessageComplete:
            onMessageComplete();
            break;
        case HttpRequestParser::Step::Failed: {
            const HttpParseError &error = m_parser.error();
            refuse(HttpAnswer::error(
                       error.status, codeFor(error.status), QString::fromLatin1(error.reason)),
                false);
            return;
        }
        }
    }
}

void HttpConnection::onHeadComplete()
{
    const HttpRequestHead &head = m_parser.head();
    const QByteArray upgrade = head.value("upgrade");
    if (!upgrade.isEmpty()) {
        if (!m_firstRequest)
            refuse(HttpAnswer::error(400, QStringLiteral("bad_request"),
                       QStringLiteral(
                           "a WebSocket upgrade must be the first request of a connection")),
                false);
        else if (!sameIgnoringCase(upgrade, "websocket") || !head.upgrade)
            refuse(HttpAnswer::error(400, QStringLiteral("bad_request"),
                       QStringLiteral("only WebSocket upgrades are served here")),
                false);
        else if (head.method != "GET" || head.announcesBody())
            refuse(HttpAnswer::error(400, QStringLiteral("bad_request"),
                       QStringLiteral("a WebSocket upgrade is a GET without a body")),
                false);
        else if (!m_service.takesWebSocket(head.path()))
            refuse(HttpAnswer::error(404, QStringLiteral("not_found"),
                       QStringLiteral("no WebSocket endpoint at %1")
                           .arg(QString::fromLatin1(head.path().left(80)))),
                false);
        else
            handOver();
        return;
    }
    m_decision = m_service.examine(head, m_peer);
    if (m_decision.authenticated && !m_authenticated) {
        m_authenticated = true;
        m_place.release();
    }
    if (m_decision.refusal) {
        refuse(*m_decision.refusal, m_authenticated);
        return;
    }
    m_parser.setBodyLimit(m_decision.bodyLimit);
    if (m_parser.hasFailed()) {
        const HttpParseError &error = m_parser.error();
        refuse(HttpAnswer::error(
                   error.status, codeFor(error.status), QString::fromLatin1(error.reason)),
            m_authenticated);
        return;
    }
    if (head.expectContinue && head.announcesBody())
        enqueue(continueLine());
    m_state = State::Body;
    arm(m_limits.bodyTimeout);
}

std::optional<QString> HttpConnection::upgradeFault() const
{
    const HttpRequestHead &head = m_parser.head();
    if (head.value("sec-websocket-version") != "13")
        return QStringLiteral("only WebSocket version 13 is spoken here");
    const QByteArray key = head.value("sec-websocket-key");
    if (QByteArray::fromBase64(key, QByteArray::AbortOnBase64DecodingErrors).size() != 16)
        return QStringLiteral("a WebSocket upgrade needs a Sec-WebSocket-Key of 16 bytes");
    return std::nullopt;
}

void HttpConnection::handOver()
{
    if (const auto fault = upgradeFault()) {
        HttpAnswer answer = HttpAnswer::error(400, QStringLiteral("bad_request"), *fault);
        answer.headers.append(HttpHeader { "Sec-WebSocket-Version", "13" });
        refuse(answer, false);
        return;
    }
    m_deadline.stop();
    const HttpRequestHead &head = m_parser.head();
    // What is still queued goes ahead of the answer.
    for (; !m_outbox.empty(); m_outbox.pop_front()) {
        m_stream->write(QByteArrayView(m_outbox.front()).sliced(m_outboxOffset));
        m_outboxOffset = 0;
    }
    m_stream->write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Accept: "
        + net::websocket::acceptKeyFor(head.value("sec-websocket-key")) + "\r\n\r\n");
    m_stream->disconnect(this);
    m_state = State::Done;
    // Bytes read past the head are the WebSocket's first. The parser
    // stopped on the head's last line feed, which it leaves unread.
    const qsizetype headEnd = std::min(m_pendingOffset + 1, m_pending.size());
    QByteArray early = m_pending.sliced(headEnd);
    auto socket = std::make_unique<net::StreamWebSocket>(
        std::exchange(m_stream, nullptr), std::move(early));
    m_service.acceptWebSocket(std::move(socket), head.path(), std::move(m_place));
    Q_EMIT finished();
    deleteLater();
}

void HttpConnection::onMessageComplete()
{
    m_state = State::Serving;
    arm(m_limits.serveTimeout);
    auto serve = std::move(m_decision.serve);
    m_decision = HeadDecision {};
    const quint64 serial = ++m_requestSerial;
    if (!serve) {
        respond(serial,
            HttpAnswer::error(
                500, QStringLiteral("internal_error"), QStringLiteral("nothing serves this")));
        return;
    }
    const HttpRequest request { m_parser.head(), m_parser.takeBody(), m_peer };
    QPointer<HttpConnection> self(this);
    serve(request, [self, serial](const HttpAnswer &answer) {
        if (self)
            self->respond(serial, answer);
    });
}

void HttpConnection::respond(quint64 request, const HttpAnswer &answer)
{
    if (request != m_requestSerial || m_state != State::Serving)
        return;
    send(answer, false);
}

void HttpConnection::send(const HttpAnswer &answer, bool closeAfter)
{
    const HttpRequestHead &head = m_parser.head();
    const bool keepAlive = !closeAfter && head.keepAlive;
    enqueue(serializeHead(answer, keepAlive));
    if (head.method != "HEAD" && !answer.body.isEmpty())
        enqueue(answer.body);
    m_firstRequest = false;
    if (!keepAlive) {
        linger();
        return;
    }
    m_state = State::Idle;
    arm(m_authenticated ? m_limits.idleTimeout : m_limits.firstRequestTimeout);
    m_stream->setReadPaused(false);
    // A pipelined request may already be waiting.
    QMetaObject::invokeMethod(this, &HttpConnection::process, Qt::QueuedConnection);
}

void HttpConnection::enqueue(const QByteArray &bytes)
{
    m_outbox.push_back(bytes);
    writeFromOutbox();
}

void HttpConnection::writeFromOutbox()
{
    // One piece at a time, the next once the last is with the kernel: a
    // large answer is never copied whole into the stream's buffer.
    constexpr qsizetype kPiece = 128 * 1024;
    while (m_stream && !m_outbox.empty() && m_stream->bytesToWrite() < kPiece) {
        const QByteArray &front = m_outbox.front();
        const qsizetype length = std::min(kPiece, front.size() - m_outboxOffset);
        m_stream->write(QByteArrayView(front).sliced(m_outboxOffset, length));
        m_outboxOffset += length;
        if (m_outboxOffset == front.size()) {
            m_outbox.pop_front();
            m_outboxOffset = 0;
        }
    }
}

void HttpConnection::onDrained()
{
    writeFromOutbox();
    drainWhenFlushed();
}

void HttpConnection::refuse(const HttpAnswer &answer, bool authenticated)
{
    if (!authenticated && m_front.refusalLog().admit()) {
        const HttpRequestHead &head = m_parser.head();
        QString path = QString::fromLatin1(head.path().left(80));
        for (QChar &c : path) {
            if (!c.isPrint())
                c = QLatin1Char('?');
        }
        qCInfo(lcHubEdge).noquote()
            << QStringLiteral("refused %1 %2 from %3: %4 %5")
                   .arg(QString::fromLatin1(head.method.isEmpty() ? "a request" : head.method),
                       path.isEmpty() ? QStringLiteral("(no path)") : path, describe())
                   .arg(answer.status)
                   .arg(QString::fromLatin1(reasonPhrase(answer.status)));
    }
    // Nothing after a refused head is read, so the connection cannot go on.
    send(answer, true);
}

void HttpConnection::linger()
{
    m_state = State::Lingering;
    m_pending.clear();
    m_pendingOffset = 0;
    arm(m_limits.lingerTimeout);
    m_stream->setReadPaused(false);
    discardReadable();
    drainWhenFlushed();
}

void HttpConnection::drainWhenFlushed()
{
    if (m_state != State::Lingering || m_drain.valid() || !m_stream)
        return;
    if (!m_outbox.empty() || m_stream->bytesToWrite() > 0)
        return;
    // The answer is on its way. The peer now sees the end and closes; what
    // it still sends is read raw and dropped (no decryption, bounded in
    // bytes and time) instead of making the kernel answer with a reset that
    // could destroy the answer in flight. TLS has nothing more to do.
    m_stream->disconnect(this);
    m_drain = m_stream->takeDescriptor();
    m_stream->deleteLater();
    m_stream = nullptr;
    ::shutdown(m_drain.get(), SHUT_WR);
    if (!m_drain.valid()) {
        finish();
        return;
    }
    m_drainNotifier = new QSocketNotifier(m_drain.get(), QSocketNotifier::Read, this);
    connect(m_drainNotifier, &QSocketNotifier::activated, this, &HttpConnection::onDrainReadable);
    onDrainReadable();
}

void HttpConnection::onDrainReadable()
{
    char scratch[64 * 1024];
    for (;;) {
        const ssize_t n = ::recv(m_drain.get(), scratch, sizeof(scratch), MSG_DONTWAIT);
        if (n > 0) {
            m_discarded += n;
            if (m_discarded > m_limits.lingerBytes) {
                finish();
                return;
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        // The peer closed, or the connection broke: nothing left to protect.
        finish();
        return;
    }
}

void HttpConnection::onDeadline()
{
    switch (m_state) {
    case State::Handshaking:
        if (m_front.handshakeLog().admit())
            qCInfo(lcHubEdge).noquote()
                << "TLS handshake with" << describe() << "did not finish in time";
        finish();
        return;
    case State::Idle:
        finish();
        return;
    case State::Head:
    case State::Body:
        refuse(HttpAnswer::error(408, QStringLiteral("request_timeout"),
                   QStringLiteral("the request did not arrive in time")),
            m_authenticated);
        return;
    case State::Serving:
        // Whatever the service waited for never came: the caller is told,
        // and the connection does not hang on it.
        send(HttpAnswer::error(504, QStringLiteral("timeout"),
                 QStringLiteral("the hub did not answer this request in time")),
            true);
        return;
    case State::Lingering:
    case State::Done:
        finish();
        return;
    }
}

void HttpConnection::finish()
{
    if (m_state == State::Done)
        return;
    m_state = State::Done;
    m_deadline.stop();
    m_place.release();
    if (m_drainNotifier) {
        m_drainNotifier->setEnabled(false);
        m_drainNotifier->deleteLater();
        m_drainNotifier = nullptr;
    }
    m_drain.reset();
    if (m_stream) {
        m_stream->disconnect(this);
        m_stream->abort();
        m_stream->deleteLater();
        m_stream = nullptr;
    }
    Q_EMIT finished();
    deleteLater();
}

} // namespace cloop::hub::edge
