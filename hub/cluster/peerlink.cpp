#include "hub/cluster/peerlink.h"

#include "common/logging.h"
#include "common/net/heartbeat.h"
#include "common/net/hubtls.h"
#include "common/net/qtmessagesocket.h"
#include "common/protocol/controlmessage.h"
#include "common/util/bytesize.h"
#include "common/util/duration.h"
#include "hub/cluster/peerwire.h"

#include <QSslSocket>
#include <QWebSocket>

namespace cloop::hub {

PeerLink::PeerLink(
    PeerMember member, const QSslConfiguration &tls, Options options, QObject *parent)
    : QObject(parent)
    , m_member(std::move(member))
    , m_options(options)
    , m_mux(tunnel::ChannelMultiplexer::Side::Daemon, options.limits)
    , m_messages(new net::QtMessageSocket(
          new QWebSocket(QString(), QWebSocketProtocol::VersionLatest), this))
    , m_socket(m_messages->webSocket())
    , m_heartbeat(
          new net::Heartbeat(m_messages, options.timing.idlePace(), options.timing.watchfulPace()))
{
    m_socket->setSslConfiguration(tls);
    m_messages->setMaxIncomingMessageBytes(
        std::max<qint64>(protocol::kMaxFrameSize, protocol::kMaxControlMessageSize));
    connect(m_socket, &QWebSocket::sslErrors, this, &PeerLink::onSslErrors);
    connect(m_socket, &QWebSocket::connected, this, &PeerLink::onConnected);
    connect(m_messages, &net::MessageSocket::binaryReceived, this, &PeerLink::onBinary);
    connect(m_messages, &net::MessageSocket::textReceived, this, &PeerLink::onText);
    connect(m_messages, &net::MessageSocket::disconnected, this, &PeerLink::onSocketGone);
    connect(&m_mux, &tunnel::ChannelMultiplexer::frameReady, this, &PeerLink::onFrame);
    connect(&m_mux, &tunnel::ChannelMultiplexer::channelCountChanged, m_heartbeat,
        [heartbeat = m_heartbeat](int count) { heartbeat->setWatchful(count > 0); });
    connect(m_heartbeat, &net::Heartbeat::timedOut, this, [this](qint64 silentMs) {
        fail(QStringLiteral("no sign of life from it for %1")
                 .arg(util::formatMilliseconds(silentMs)));
    });

    m_connectTimer.setSingleShot(true);
    connect(&m_connectTimer, &QTimer::timeout, this, [this] {
        fail(QStringLiteral("no verified connection within %1")
                 .arg(util::formatMilliseconds(m_options.connectTimeout.count())));
    });
    m_idleTimer.setSingleShot(true);
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        close(QStringLiteral("no channel for %1")
                  .arg(util::formatMilliseconds(m_options.idleTimeout.count())));
    });
}

PeerLink::~PeerLink()
{
    if (m_state != State::Closed) {
        m_state = State::Closed;
        m_mux.closeAll(QStringLiteral("the link to %1 was closed").arg(describeMember(m_member)));
    }
}

void PeerLink::dial()
{
    const QUrl url = net::endpointUrl(m_member.peerUrl, kPeerEndpointPath);
    qCDebug(lcHubCluster).noquote()
        << "linking to" << describeMember(m_member) << "at" << url.toString();
    m_connectTimer.start(m_options.connectTimeout);
    m_idleTimer.start(m_options.idleTimeout);
    m_socket->open(url);
    // A URL QWebSocket cannot use fails inside open() without a state change.
    if (m_socket->state() == QAbstractSocket::UnconnectedState)
        QMetaObject::invokeMethod(this, &PeerLink::onSocketGone, Qt::QueuedConnection);
}

Result<tunnel::Channel *> PeerLink::openChannel(const QJsonObject &metadata)
{
    if (!isUsable())
        return Error::make(QStringLiteral("peer_link_closed"),
            QStringLiteral("the link to %1 is closing").arg(describeMember(m_member)));
    auto channel = m_mux.openChannel(metadata);
    if (!channel)
        return Error::make(channel.error().code,
            QStringLiteral("%1: %2").arg(describeMember(m_member), channel.error().message));
    m_idleTimer.stop();
    connect(*channel, &tunnel::Channel::closed, this, &PeerLink::onChannelClosed);
    return channel;
}

void PeerLink::onChannelClosed()
{
    if (m_mux.channelCount() == 0 && isUsable())
        m_idleTimer.start(m_options.idleTimeout);
}

QSslCertificate PeerLink::peerLeaf() const
{
    // The TLS socket itself: what it saw, whether or not QWebSocket has
    // copied its configuration yet.
    if (const auto *tls = m_socket->findChild<QSslSocket *>())
        return tls->peerCertificate();
    return m_socket->sslConfiguration().peerCertificate();
}

void PeerLink::onSslErrors(const QList<QSslError> &errors)
{
    const auto verdict = waivableErrors(m_member, errors, peerLeaf(), CertificateRole::Server);
    if (!verdict) {
        // Not ignored: the handshake fails, and this is why.
        m_refusal = verdict.error().message;
        return;
    }
    if (auto *tls = m_socket->findChild<QSslSocket *>())
        tls->ignoreSslErrors(*verdict);
    else
        m_socket->ignoreSslErrors(*verdict);
}

void PeerLink::onConnected()
{
    if (m_state != State::Dialling)
        return;
    // Checked on every connection, whatever the handshake concluded, and
    // before a single frame leaves.
    if (Status key = verifyMemberKey(m_member, peerLeaf()); !key) {
        m_refusal = key.error().message;
        fail(*m_refusal);
        return;
    }
    m_connectTimer.stop();
    m_state = State::Up;
    m_wasUp = true;
    const QList<QByteArray> held = std::exchange(m_held, {});
    m_heldBytes = 0;
    for (const QByteArray &frame : held)
        m_socket->sendBinaryMessage(frame);
    m_heartbeat->start();
    qCInfo(lcHubCluster).noquote() << "linked to" << describeMember(m_member);
    Q_EMIT up();
}

void PeerLink::onFrame(const QByteArray &frame)
{
    switch (m_state) {
    case State::Up:
        m_socket->sendBinaryMessage(frame);
        return;
    case State::Dialling:
        if (m_overHeld)
            return;
        if (m_heldBytes + frame.size() > m_options.maxHeldBytes) {
            // Not from inside the multiplexer's own call: the link fails a
            // turn later, and what comes meanwhile is dropped with it.
            m_overHeld = true;
            QMetaObject::invokeMethod(
                this,
                [this] {
                    fail(QStringLiteral("more than %1 of channel frames waited for the link")
                             .arg(util::formatByteSize(m_options.maxHeldBytes)));
                },
                Qt::QueuedConnection);
            return;
        }
        m_held.append(frame);
        m_heldBytes += frame.size();
        return;
    case State::Closing:
    case State::Closed:
        return;
    }
}

void PeerLink::onBinary(const QByteArray &bytes)
{
    if (m_state != State::Up)
        return;
    const Status status = m_mux.handleFrame(bytes);
    if (!status)
        fail(QStringLiteral("it broke the channel protocol: %1").arg(status.error().message));
}

void PeerLink::onText(const QString &text)
{
    // Members send no control messages on a peer link, except an error
    // before they close it: that is the best reason there will be.
    auto message = protocol::parseControlMessage(text.toUtf8());
    if (message) {
        if (const auto *error = std::get_if<protocol::ErrorMessage>(&*message)) {
            m_peerError = error->message;
            return;
        }
    }
    qCDebug(lcHubCluster).noquote() << "ignored a text message from" << describeMember(m_member);
}

void PeerLink::onSocketGone()
{
    if (m_state == State::Closed)
        return;
    if (m_state == State::Closing) {
        finish(QStringLiteral("the link to %1 was closed: %2")
                   .arg(describeMember(m_member), m_closeWhy));
        return;
    }
    QString cause;
    if (m_refusal)
        cause = *m_refusal;
    else if (!m_peerError.isEmpty())
        cause = m_peerError;
    else if (!m_socket->closeReason().isEmpty())
        cause = QStringLiteral("it closed the link: %1").arg(m_socket->closeReason());
    else if (!m_messages->errorString().isEmpty())
        cause = m_messages->errorString();
    else
        cause = QStringLiteral("the connection closed");
    fail(cause);
}

void PeerLink::fail(const QString &cause)
{
    if (m_state == State::Closed)
        return;
    if (m_wasUp) {
        finish(QStringLiteral("the link to %1 was lost: %2").arg(describeMember(m_member), cause));
        return;
    }
    finish(QStringLiteral("cannot link to %1 at %2: %3")
               .arg(describeMember(m_member),
                   net::endpointUrl(m_member.peerUrl, kPeerEndpointPath).toString(), cause));
}

void PeerLink::close(const QString &why)
{
    if (m_state != State::Up) {
        abort(why);
        return;
    }
    m_state = State::Closing;
    m_closeWhy = why;
    m_connectTimer.stop();
    m_idleTimer.stop();
    m_heartbeat->stop();
    m_socket->close(QWebSocketProtocol::CloseCodeNormal, why.left(120));
    // A peer that never answers the close handshake must not keep us.
    QTimer::singleShot(2000, this, [this] {
        if (m_state == State::Closing)
            m_socket->abort();
    });
}

void PeerLink::abort(const QString &why)
{
    finish(QStringLiteral("the link to %1 was closed: %2").arg(describeMember(m_member), why));
}

void PeerLink::finish(const QString &reason)
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_connectTimer.stop();
    m_idleTimer.stop();
    m_heartbeat->stop();
    m_held.clear();
    m_heldBytes = 0;
    m_socket->abort();
    if (m_wasUp)
        qCInfo(lcHubCluster).noquote() << reason;
    else
        qCWarning(lcHubCluster).noquote() << reason;
    // The owner hears first, so that a channel's holder that asks again
    // from its closed() handler meets the link gone (and any backoff).
    Q_EMIT ended(reason, m_wasUp);
    m_mux.closeAll(reason);
}

} // namespace cloop::hub
