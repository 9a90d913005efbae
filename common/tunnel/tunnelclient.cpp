#include "common/tunnel/tunnelclient.h"

#include "common/logging.h"
#include "common/net/streamwebsocket.h"
#include "common/net/tlsstream.h"
#include "common/net/websocketdial.h"
#include "common/protocol/protocolversion.h"
#include "common/util/duration.h"

namespace cloop::tunnel {

using namespace protocol;

TunnelClient::TunnelClient(TunnelClientOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_backoff(m_options.initialBackoff, m_options.maxBackoff, m_options.backoffRandom)
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &TunnelClient::connectNow);
    m_authTimer.setSingleShot(true);
    // One timer bounds the whole attempt: TCP, TLS, the WebSocket upgrade
    // and the answer to our first message. A peer that accepts TCP and then
    // says nothing must not hold the daemon forever.
    connect(&m_authTimer, &QTimer::timeout, this, [this] {
        const QString limit = util::formatMilliseconds(m_options.authenticationTimeout.count());
        if (m_state == State::Connecting) {
            failAttempt(Error::make(QStringLiteral("timeout"),
                QStringLiteral("the connection to the hub was not established within %1")
                    .arg(limit)));
            return;
        }
        failAttempt(Error::make(QStringLiteral("timeout"),
            QStringLiteral("the hub did not answer the %1 within %2")
                .arg(
                    m_credential.isEmpty() ? QStringLiteral("enrollment") : QStringLiteral("hello"),
                    limit)));
    });
}

TunnelClient::~TunnelClient()
{
    if (m_connection)
        m_connection->disconnect(this);
}

void TunnelClient::setCredential(const QString &credential)
{
    m_credential = credential;
    m_token.clear();
}

void TunnelClient::setEnrollmentToken(const QString &token)
{
    m_token = token;
    m_credential.clear();
}

void TunnelClient::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void TunnelClient::setHubUrls(const QList<QUrl> &urls)
{
    if (urls.isEmpty())
        return;
    m_options.hubUrls = urls;
    if (!urls.contains(m_lastReadyUrl))
        m_lastReadyUrl.clear();
}

QList<QUrl> TunnelClient::roundOrder() const
{
    QList<QUrl> order;
    if (m_options.hubUrls.contains(m_lastReadyUrl))
        order.append(m_lastReadyUrl);
    for (const QUrl &url : m_options.hubUrls) {
        if (url != m_lastReadyUrl)
            order.append(url);
    }
    return order;
}

void TunnelClient::start()
{
    if (m_state != State::Idle && m_state != State::Stopped)
        return;
    if (m_options.hubUrls.isEmpty()) {
        setState(State::Stopped);
        Q_EMIT refused(Error::make(
            QStringLiteral("invalid_url"), QStringLiteral("there is no hub URL to dial"), true));
        return;
    }
    for (const QUrl &hubUrl : std::as_const(m_options.hubUrls)) {
        const auto urlCheck
            = net::checkHubUrl(hubUrl, m_options.allowInsecurePlaintext, m_options.insecureOption);
        if (!urlCheck) {
            setState(State::Stopped);
            Q_EMIT refused(urlCheck.error());
            return;
        }
    }
    m_backoff.reset();
    m_round.clear();
    m_roundIndex = 0;
    m_state = State::Idle; // start() after stop() or refused() begins anew
    connectNow();
}

void TunnelClient::stop()
{
    m_retryTimer.stop();
    m_authTimer.stop();
    setState(State::Stopped);
    delete m_dial.data();
    if (TunnelConnection *connection = m_connection.data()) {
        connection->disconnect(this);
        connect(connection, &TunnelConnection::disconnected, connection, &QObject::deleteLater);
        connection->close(QStringLiteral("daemon stopping"));
        m_connection = nullptr;
    }
}

void TunnelClient::connectNow()
{
    if (m_state == State::Stopped)
        return;
    if (m_roundIndex >= m_round.size()) {
        m_round = roundOrder();
        m_roundIndex = 0;
    }
    m_currentUrl = m_round.at(m_roundIndex);
    const QUrl url = net::endpointUrl(m_currentUrl, m_options.endpointPath);
    const auto plaintextRemote = net::checkHubUrl(m_currentUrl, m_options.allowInsecurePlaintext);
    if (plaintextRemote.ok() && *plaintextRemote) {
        qCWarning(lcNet).noquote() << "INSECURE: connecting to" << m_currentUrl.host()
                                   << "without TLS; the credential and all device traffic can be "
                                      "read and altered on the way";
    } else if (url.scheme() == QLatin1String("wss") && m_options.trust.pins().isEmpty()) {
        qCWarning(lcNet).noquote()
            << "UNPINNED: connecting to" << m_currentUrl.host()
            << "with no pin of its key; any certificate a trusted CA issued for that name "
               "passes for the hub";
    }

    m_attemptError.reset();
    std::shared_ptr<const net::TlsContext> tls;
    if (url.scheme() == QLatin1String("wss")) {
        auto context = m_options.trust.clientContext();
        if (!context) {
            // The CA store cannot be read: no attempt could succeed.
            setState(State::Stopped);
            Q_EMIT refused(Error::make(context.error().code, context.error().message, true));
            return;
        }
        tls = std::move(*context);
    }
    auto *dial = new net::WebSocketDial(url, std::move(tls), this);
    m_dial = dial;
    // The pin is checked on every connection, also when a public CA
    // vouched for the certificate, and before any secret leaves.
    dial->setPeerCheck([trust = m_options.trust](const net::TlsStream &stream) {
        return trust.judge(stream.certificateProblems(), stream.peerKeyDigest());
    });
    connect(dial, &net::WebSocketDial::opened, this, &TunnelClient::onOpened);
    connect(dial, &net::WebSocketDial::failed, this, &TunnelClient::onDialFailed);

    setState(State::Connecting);
    if (m_round.size() > 1)
        qCInfo(lcNet).noquote() << "dialling" << url.toString()
                                << QStringLiteral("(hub URL %1 of %2 this round)")
                                       .arg(m_roundIndex + 1)
                                       .arg(m_round.size());
    else
        qCInfo(lcNet).noquote() << "dialling" << url.toString();
    Q_EMIT attemptStarted(m_currentUrl);
    m_authTimer.start(m_options.authenticationTimeout);
    dial->start();
}

void TunnelClient::onOpened()
{
    net::WebSocketDial *dial = m_dial.data();
    if (!dial)
        return;
    net::StreamWebSocket *socket = dial->takeSocket();
    dial->deleteLater();
    auto *connection = new TunnelConnection(
        socket, ChannelMultiplexer::Side::Daemon, m_options.limits, m_options.timing, this);
    m_connection = connection;
    connect(connection, &TunnelConnection::controlReceived, this, &TunnelClient::onControl);
    connect(connection, &TunnelConnection::disconnected, this, &TunnelClient::onConnectionLost);
    setState(State::Authenticating);
    m_connection->startHeartbeat();
    if (!m_credential.isEmpty()) {
        m_connection->sendControl(Hello { kVersion, m_options.software, m_options.role,
            m_credential, m_options.capabilities, m_options.channel, m_options.streamTicket });
    } else {
        m_connection->sendControl(Redeem { kVersion, m_options.software, m_options.role, m_token,
            m_options.capabilities, m_options.channel });
    }
}

void TunnelClient::onControl(const ControlMessage &message)
{
    if (const auto *enrolledMessage = std::get_if<Enrolled>(&message)) {
        if (m_state != State::Authenticating || m_credential.isEmpty() == false)
            return;
        setCredential(enrolledMessage->credential);
        Q_EMIT enrolled(*enrolledMessage);
        return;
    }
    if (const auto *welcome = std::get_if<Welcome>(&message)) {
        if (m_state != State::Authenticating)
            return;
        m_authTimer.stop();
        m_backoff.reset();
        // The round is over: a later loss starts the next one here.
        m_lastReadyUrl = m_currentUrl;
        m_roundIndex = m_round.size();
        setState(State::Ready);
        Q_EMIT ready(*welcome);
        return;
    }
    if (const auto *error = std::get_if<ErrorMessage>(&message)) {
        if (error->permanent) {
            m_attemptError = Error::make(error->code, error->message, true);
            if (m_connection)
                m_connection->abort(error->message);
            return;
        }
        if (error->retryWithinMs > 0)
            // A close follows: the next attempt is drawn from the window the
            // hub gave, not from the first half second every daemon has.
            m_backoff.spreadNextOver(std::chrono::milliseconds(error->retryWithinMs));
        if (m_state != State::Ready) {
            failAttempt(Error::make(error->code, error->message));
            return;
        }
        if (error->retryWithinMs > 0) {
            qCInfo(lcNet).noquote()
                << QStringLiteral("%1; back within %2")
                       .arg(error->message,
                           util::formatMilliseconds(
                               std::min(error->retryWithinMs, qint64(m_backoff.cap().count()))));
        } else {
            qCWarning(lcNet).noquote() << "hub reported:" << error->message;
        }
    }
    if (m_state == State::Ready)
        Q_EMIT controlReceived(message);
}

void TunnelClient::onDialFailed(const Error &error)
{
    if (m_dial)
        m_dial->deleteLater();
    m_attemptError = error;
    onConnectionLost(error.message);
}

void TunnelClient::failAttempt(const Error &error)
{
    m_attemptError = error;
    if (m_connection) {
        m_connection->abort(error.message);
        return;
    }
    if (net::WebSocketDial *dial = m_dial.data()) {
        // Not dialled yet, or still in TLS or the upgrade: abandoned.
        delete dial;
        onConnectionLost(error.message);
    }
}

void TunnelClient::onConnectionLost(const QString &reason)
{
    m_authTimer.stop();
    if (m_connection) {
        m_connection->disconnect(this);
        m_connection->deleteLater();
        m_connection = nullptr;
    }
    if (m_state == State::Stopped)
        return;
    if (m_attemptError && m_attemptError->permanent) {
        setState(State::Stopped);
        Q_EMIT refused(*m_attemptError);
        return;
    }
    const QString why = m_attemptError ? m_attemptError->message : reason;
    if (m_roundIndex < m_round.size())
        ++m_roundIndex;
    const auto delay = m_roundIndex < m_round.size() ? m_options.nextUrlDelay : m_backoff.next();
    setState(State::WaitingToRetry);
    Q_EMIT disconnected(why, delay.count());
    m_retryTimer.start(delay);
}

} // namespace cloop::tunnel
