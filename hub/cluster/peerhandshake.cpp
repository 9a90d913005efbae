#include "hub/cluster/peerhandshake.h"

#include "common/net/spkipin.h"
#include "common/util/duration.h"
#include "hub/cluster/peerwire.h"
#include "hub/edge/httpanswer.h"
#include "hub/edge/httprequestparser.h"

#include <QSslSocket>

namespace cloop::hub {

namespace {

// What a connection may hold decrypted before it is a peer's: a request
// head and some.
constexpr qint64 kReadBufferBytes = 32 * 1024;

bool isWebSocketUpgrade(const edge::HttpRequestHead &head)
{
    const QByteArray upgrade = head.value("upgrade");
    return head.upgrade && upgrade.compare("websocket", Qt::CaseInsensitive) == 0;
}

} // namespace

PeerHandshake::PeerHandshake(
    QSslSocket *socket, PeerDirectory &directory, qint64 selfId, QObject *parent)
    : QObject(parent)
    , m_socket(socket)
    , m_directory(directory)
    , m_selfId(selfId)
    , m_peerAddress(socket->peerAddress())
    , m_peerPort(socket->peerPort())
{
    socket->setParent(this);
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &PeerHandshake::onDeadline);
}

PeerHandshake::~PeerHandshake()
{
    // The socket, still ours, goes with us as a child; not a word more from it.
    if (m_socket)
        m_socket->disconnect(this);
}

void PeerHandshake::start(const QSslConfiguration &tls, std::chrono::milliseconds deadline)
{
    QSslSocket *socket = m_socket;
    if (!socket)
        return;
    connect(socket, &QSslSocket::sslErrors, this, &PeerHandshake::onSslErrors);
    connect(socket, &QSslSocket::encrypted, this, &PeerHandshake::onEncrypted);
    connect(socket, &QSslSocket::readyRead, this, &PeerHandshake::readHead);
    connect(socket, &QAbstractSocket::disconnected, this, &PeerHandshake::onGone);
    connect(socket, &QAbstractSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
        if (m_stage == Stage::Tls && m_socket)
            noteRefusal(QStringLiteral("TLS handshake failed: %1").arg(m_socket->errorString()));
        // A failed handshake may end without disconnected(); look a turn later.
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (!m_socket || m_socket->state() == QAbstractSocket::UnconnectedState)
                    onGone();
            },
            Qt::QueuedConnection);
    });
    socket->setReadBufferSize(kReadBufferBytes);
    socket->setSslConfiguration(tls);
    m_deadline.start(deadline);
    socket->startServerEncryption();
}

QSslSocket *PeerHandshake::releaseSocket()
{
    m_deadline.stop();
    m_stage = Stage::Done;
    QSslSocket *socket = m_socket;
    m_socket = nullptr;
    if (socket) {
        socket->disconnect(this);
        socket->setParent(nullptr);
        // Unlimited again, as any WebSocket's: the channels' windows bound it now.
        socket->setReadBufferSize(0);
    }
    return socket;
}

void PeerHandshake::noteRefusal(const QString &reason)
{
    if (!m_refusal)
        m_refusal = reason;
}

Result<PeerMember> PeerHandshake::identify()
{
    const QSslCertificate leaf = m_socket->peerCertificate();
    const auto refused = [](const QString &message) {
        return Error::make(QStringLiteral("peer_refused"), message);
    };
    if (leaf.isNull())
        return refused(QStringLiteral("it presented no client certificate"));
    const QString pin = net::PinSet::pinOf(leaf);
    // Read at every handshake: a member that died keeps its certificate.
    const std::optional<PeerMember> member = m_directory.liveMemberWithPin(pin);
    if (!member)
        return refused(
            QStringLiteral("its certificate's key %1 is not that of a live hub member").arg(pin));
    if (member->id == m_selfId)
        return refused(QStringLiteral("it presented this member's own key"));
    if (Status key = verifyMemberKey(*member, leaf); !key)
        return refused(QStringLiteral("%1: %2").arg(describeMember(*member), key.error().message));
    return *member;
}

void PeerHandshake::onSslErrors(const QList<QSslError> &errors)
{
    auto member = identify();
    if (!member) {
        // Not ignored: the handshake fails, and this is why.
        noteRefusal(member.error().message);
        return;
    }
    const auto verdict
        = waivableErrors(*member, errors, m_socket->peerCertificate(), CertificateRole::Client);
    if (!verdict) {
        noteRefusal(QStringLiteral("%1: %2").arg(describeMember(*member), verdict.error().message));
        return;
    }
    m_member = std::move(*member);
    m_socket->ignoreSslErrors(*verdict);
}

void PeerHandshake::onEncrypted()
{
    // Without sslErrors the chain verified against some authority; that
    // alone proves nothing here: the key must still be a member's.
    if (!m_member) {
        auto member = identify();
        if (!member) {
            noteRefusal(member.error().message);
            m_socket->abort();
            onGone();
            return;
        }
        m_member = std::move(*member);
    }
    m_stage = Stage::Head;
    readHead();
}

void PeerHandshake::readHead()
{
    if (m_stage == Stage::Refusing) {
        // Until the answer is out; bounded by the deadline.
        m_socket->readAll();
        return;
    }
    if (m_stage != Stage::Head)
        return;
    edge::HttpRequestParser parser;
    // Peeked, not read: the WebSocket layer reads the request itself.
    const QByteArray peeked = m_socket->peek(kReadBufferBytes);
    const auto progress = parser.feed(peeked);
    if (progress.step == edge::HttpRequestParser::Step::NeedMore)
        return;
    if (progress.step == edge::HttpRequestParser::Step::Failed) {
        answer(parser.error().status, QString::fromLatin1(parser.error().reason));
        return;
    }
    const edge::HttpRequestHead &head = parser.head();
    if (QLatin1StringView(head.path()) != kPeerEndpointPath) {
        answer(404,
            QStringLiteral("no peer endpoint at %1")
                .arg(QString::fromLatin1(head.path().left(80))));
        return;
    }
    if (head.method != "GET" || !isWebSocketUpgrade(head) || head.announcesBody()) {
        answer(400,
            QStringLiteral("a peer link is a WebSocket upgrade of GET %1").arg(kPeerEndpointPath));
        return;
    }
    m_stage = Stage::Upgrading;
    disconnect(m_socket, &QSslSocket::readyRead, this, &PeerHandshake::readHead);
    Q_EMIT readyToUpgrade();
}

void PeerHandshake::answer(int status, const QString &reason)
{
    noteRefusal(QStringLiteral("%1 (HTTP %2)").arg(reason).arg(status));
    m_stage = Stage::Refusing;
    const QString code = status == 404 ? QStringLiteral("not_found")
        : status == 431                ? QStringLiteral("head_too_large")
                                       : QStringLiteral("bad_request");
    m_socket->write(edge::serializeAnswer(edge::HttpAnswer::error(status, code, reason), false));
    // Closes once the answer is out; disconnected() ends us.
    m_socket->disconnectFromHost();
}

void PeerHandshake::onDeadline()
{
    const QString limit = util::formatMilliseconds(m_deadline.interval());
    switch (m_stage) {
    case Stage::Tls:
        noteRefusal(QStringLiteral("no TLS handshake within %1").arg(limit));
        break;
    case Stage::Head:
        noteRefusal(QStringLiteral("no WebSocket upgrade request within %1").arg(limit));
        break;
    case Stage::Upgrading:
        noteRefusal(QStringLiteral("the WebSocket upgrade did not complete within %1").arg(limit));
        break;
    case Stage::Refusing:
    case Stage::Done:
        break;
    }
    if (m_socket)
        m_socket->abort();
    onGone();
}

void PeerHandshake::onGone()
{
    if (m_stage == Stage::Done)
        return;
    const Stage stage = m_stage;
    m_stage = Stage::Done;
    m_deadline.stop();
    QString reason;
    if (m_refusal)
        reason = *m_refusal;
    else if (stage == Stage::Tls)
        reason = QStringLiteral("it closed the connection during the TLS handshake");
    else if (stage == Stage::Head)
        reason = QStringLiteral("it closed the connection before asking for the WebSocket");
    else
        reason = QStringLiteral("the WebSocket upgrade failed");
    Q_EMIT failed(reason);
}

} // namespace cloop::hub
