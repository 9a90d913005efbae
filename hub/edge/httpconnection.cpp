#include "hub/edge/httpconnection.h"

#include "common/logging.h"
#include "hub/edge/httpfront.h"

#include <QSslSocket>

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

HttpConnection::HttpConnection(QSslSocket *socket, PreAuthPool::Place place, HttpFront &front,
    HttpService &service, const EdgeLimits &limits)
    : QObject(&front)
    , m_socket(socket)
    , m_place(std::move(place))
    , m_front(front)
    , m_service(service)
    , m_limits(limits)
    , m_peer(socket->peerAddress())
    , m_parser(limits.request)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &HttpConnection::onDeadline);
}

HttpConnection::~HttpConnection()
{
    // Before the descriptor it watches closes with the members.
    delete m_drainNotifier;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
}

QString HttpConnection::describe() const
{
    return m_peer.toString();
}

void HttpConnection::start()
{
    connect(m_socket, &QSslSocket::encrypted, this, &HttpConnection::onEncrypted);
    connect(m_socket, &QSslSocket::readyRead, this, &HttpConnection::onReadyRead);
    // Not bytesWritten: QSslSocket emits it once the plain text is
    // encrypted, before the bytes reach the network.
    connect(m_socket, &QSslSocket::encryptedBytesWritten, this,
        &HttpConnection::onEncryptedBytesWritten);
    connect(m_socket, &QAbstractSocket::disconnected, this, &HttpConnection::finish);
    connect(m_socket, &QAbstractSocket::errorOccurred, this,
        [this](QAbstractSocket::SocketError error) {
            if (m_state == State::Handshaking && m_front.handshakeLog().admit())
                qCInfo(lcHubEdge).noquote()
                    << "TLS handshake with" << describe() << "failed:" << m_socket->errorString();
            Q_UNUSED(error)
            finish();
        });
    m_socket->setReadBufferSize(m_limits.readBufferBytes);
    arm(m_limits.handshakeTimeout);
    // TLS starts with the client's first bytes: until then a connection
    // costs a socket and a timer, not a TLS context (which Qt builds per
    // connection, and which is most of what a connection costs the hub).
    if (m_socket->bytesAvailable() > 0)
        m_socket->startServerEncryption();
}

void HttpConnection::arm(std::chrono::milliseconds deadline)
{
    m_deadline.start(deadline);
}

void HttpConnection::onEncrypted()
{
    m_state = State::Idle;
    arm(m_limits.firstRequestTimeout);
    // The first head is read under a transaction, so that an upgrade can
    // give the WebSocket layer the request exactly as it came.
    m_socket->startTransaction();
    process();
}

void HttpConnection::onReadyRead()
{
    if (m_state == State::Handshaking) {
        // The ClientHello stays in the socket for TLS to read.
        if (m_socket->mode() == QSslSocket::UnencryptedMode)
            m_socket->startServerEncryption();
        return;
    }
    if (m_state == State::Lingering) {
        // Until the answer is out: what TLS already decrypted is dropped.
        m_discarded += m_socket->readAll().size();
        if (m_discarded > m_limits.lingerBytes)
            finish();
        return;
    }
    process();
}

bool HttpConnection::fillPending()
{
    m_pending.clear();
    m_pendingOffset = 0;
    const bool inHead = m_state == State::Idle || m_state == State::Head;
    m_pending
        = m_socket->read(inHead ? m_limits.request.maxHeadBytes + 1 : m_limits.readBufferBytes);
    return !m_pending.isEmpty();
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
    if (m_firstRequest)
        m_socket->commitTransaction();

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

void HttpConnection::handOver()
{
    m_deadline.stop();
    // What is still queued goes ahead of whatever the new owner writes.
    for (; !m_outbox.empty(); m_outbox.pop_front()) {
        m_socket->write(m_outbox.front().constData() + m_outboxOffset,
            m_outbox.front().size() - m_outboxOffset);
        m_outboxOffset = 0;
    }
    m_socket->rollbackTransaction();
    m_socket->disconnect(this);
    m_state = State::Done;
    QSslSocket *socket = std::exchange(m_socket, nullptr);
    m_front.upgrade(socket, std::move(m_place));
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
    // One piece at a time, the next once TLS has passed the last one on:
    // handed a whole large answer, Qt encrypts all of it into OpenSSL's
    // memory buffer, which grows by copying itself again and again (a
    // 4.6 MB listing spent a fifth of its time there).
    constexpr qsizetype kPiece = 128 * 1024;
    while (m_socket && !m_outbox.empty()
        && m_socket->bytesToWrite() + m_socket->encryptedBytesToWrite() < kPiece) {
        const QByteArray &front = m_outbox.front();
        const qsizetype length = std::min(kPiece, front.size() - m_outboxOffset);
        m_socket->write(front.constData() + m_outboxOffset, length);
        m_outboxOffset += length;
        if (m_outboxOffset == front.size()) {
            m_outbox.pop_front();
            m_outboxOffset = 0;
        }
    }
}

void HttpConnection::onEncryptedBytesWritten()
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
    if (m_socket->isTransactionStarted())
        m_socket->commitTransaction();
    // Nothing after a refused head is read, so the connection cannot go on.
    send(answer, true);
}

void HttpConnection::linger()
{
    m_state = State::Lingering;
    m_pending.clear();
    m_pendingOffset = 0;
    if (m_socket->isTransactionStarted())
        m_socket->commitTransaction();
    arm(m_limits.lingerTimeout);
    m_discarded += m_socket->readAll().size();
    drainWhenFlushed();
}

void HttpConnection::drainWhenFlushed()
{
    if (m_state != State::Lingering || m_drain.valid() || !m_socket)
        return;
    if (!m_outbox.empty() || m_socket->bytesToWrite() > 0 || m_socket->encryptedBytesToWrite() > 0)
        return;
    // The answer is on its way. The peer now sees the end and closes; what
    // it still sends is read raw and dropped (no decryption, bounded in
    // bytes and time) instead of making the kernel answer with a reset that
    // could destroy the answer in flight. TLS has nothing more to do: the
    // connection lives on in a copy of the descriptor only.
    const int descriptor = static_cast<int>(m_socket->socketDescriptor());
    ::shutdown(descriptor, SHUT_WR);
    m_drain = util::Fd(::fcntl(descriptor, F_DUPFD_CLOEXEC, 0));
    m_socket->disconnect(this);
    m_socket->abort();
    m_socket->deleteLater();
    m_socket = nullptr;
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
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
        m_socket = nullptr;
    }
    Q_EMIT finished();
    deleteLater();
}

} // namespace cloop::hub::edge
