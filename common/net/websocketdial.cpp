#include "common/net/websocketdial.h"

#include "common/net/streamwebsocket.h"
#include "common/net/tcpdial.h"
#include "common/net/tlsstream.h"

namespace cloop::net {

namespace {

// Read from the stream at most this much at a time while the answer comes.
constexpr qsizetype kReadPiece = 4 * 1024;

Error dialError(QString message)
{
    return Error::make(QStringLiteral("dial_failed"), std::move(message));
}

} // namespace

WebSocketDial::WebSocketDial(QUrl url, std::shared_ptr<const TlsContext> context, QObject *parent)
    : QObject(parent)
    , m_url(std::move(url))
    , m_context(std::move(context))
{ }

WebSocketDial::~WebSocketDial()
{
    delete m_socket;
}

void WebSocketDial::start()
{
    const bool secure = m_url.scheme() == QLatin1String("wss");
    if (secure != bool(m_context) || m_url.host().isEmpty()) {
        QMetaObject::invokeMethod(
            this,
            [this] {
                fail(dialError(QStringLiteral("cannot dial %1: wss:// needs TLS, ws:// none")
                                   .arg(m_url.toString())));
            },
            Qt::QueuedConnection);
        return;
    }
    m_tcp = new TcpDial(m_url.host(), quint16(m_url.port(secure ? 443 : 80)), this);
    connect(m_tcp, &TcpDial::connected, this, &WebSocketDial::onConnected);
    connect(
        m_tcp, &TcpDial::failed, this, [this](const QString &reason) { fail(dialError(reason)); });
    m_tcp->start();
}

void WebSocketDial::onConnected()
{
    util::Fd descriptor = m_tcp->takeDescriptor();
    m_tcp->deleteLater();
    m_tcp = nullptr;
    m_stream = new TlsStream(std::move(descriptor), m_context, this);
    connect(m_stream, &TlsStream::encrypted, this, &WebSocketDial::onEncrypted);
    connect(m_stream, &TlsStream::readyRead, this, &WebSocketDial::onReadable);
    connect(m_stream, &TlsStream::failed, this, [this](const QString &reason) {
        fail(dialError(m_stream && m_stream->state() == TlsStream::State::Handshaking
                ? QStringLiteral("TLS handshake with %1 failed: %2").arg(m_url.host(), reason)
                : reason));
    });
    connect(m_stream, &TlsStream::ended, this, &WebSocketDial::onStreamEnded);
    m_stream->startClientHandshake(m_url.host());
}

void WebSocketDial::onEncrypted()
{
    if (m_context && m_peerCheck) {
        // Before the first byte of ours: not even the path goes to a
        // server we would not trust with the credential.
        if (const Status trusted = m_peerCheck(*m_stream); !trusted) {
            fail(trusted.error());
            return;
        }
    }
    m_clientKey = websocket::newClientKey();
    m_answer = std::make_unique<websocket::UpgradeResponseReader>(m_clientKey);
    QByteArray host = m_url.host(QUrl::FullyEncoded).toUtf8();
    if (host.contains(':'))
        host = '[' + host + ']';
    if (m_url.port() != -1)
        host += ':' + QByteArray::number(m_url.port());
    const QByteArray path = m_url.path(QUrl::FullyEncoded).toUtf8();
    m_stream->write(websocket::upgradeRequest(host, path, m_clientKey));
}

void WebSocketDial::onReadable()
{
    if (!m_answer)
        return; // nothing is expected before our request
    char buffer[kReadPiece];
    while (!m_done) {
        const qsizetype got = m_stream->read(buffer, sizeof buffer);
        if (got <= 0)
            return;
        const QByteArrayView bytes(buffer, got);
        const auto progress = m_answer->feed(bytes);
        if (progress.step != websocket::UpgradeResponseReader::Step::NeedMore) {
            answer(progress, bytes.sliced(progress.consumed).toByteArray());
            return;
        }
    }
}

void WebSocketDial::onStreamEnded()
{
    if (m_done)
        return;
    if (m_answer) {
        answer(m_answer->finish(), {});
        return;
    }
    fail(dialError(
        QStringLiteral("the connection to %1 ended before TLS was up").arg(m_url.host())));
}

void WebSocketDial::answer(
    const websocket::UpgradeResponseReader::Progress &progress, QByteArray rest)
{
    using Step = websocket::UpgradeResponseReader::Step;
    if (progress.step != Step::Upgraded) {
        fail(dialError(m_answer->problem()));
        return;
    }
    m_done = true;
    TlsStream *stream = std::exchange(m_stream, nullptr);
    stream->disconnect(this);
    m_socket = new StreamWebSocket(stream, std::move(rest), StreamWebSocket::Role::Client);
    Q_EMIT opened();
}

void WebSocketDial::fail(Error error)
{
    if (m_done)
        return;
    m_done = true;
    if (m_stream) {
        m_stream->disconnect(this);
        m_stream->abort();
    }
    Q_EMIT failed(error);
}

} // namespace cloop::net
