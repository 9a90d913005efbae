#include "app-dashboard/core/eventstream.h"

#include "app-dashboard/core/logging.h"

#include <QJsonDocument>

namespace cloop::dashboard {

EventStream::EventStream(QObject *parent)
    : QObject(parent)
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &EventStream::dial);
    connect(&m_socket, &QWebSocket::connected, this, [this] {
        if (Status pinned
            = m_endpoint.trust.verifyPeer(m_socket.sslConfiguration().peerCertificate());
            !pinned) {
            m_trustFailure = pinned.error();
            m_socket.abort();
            return;
        }
        const QJsonObject subscribe { { QStringLiteral("type"), QStringLiteral("subscribe") },
            { QStringLiteral("token"), m_endpoint.token } };
        m_socket.sendTextMessage(
            QString::fromUtf8(QJsonDocument(subscribe).toJson(QJsonDocument::Compact)));
    });
    connect(&m_socket, &QWebSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        auto verdict
            = m_endpoint.trust.judge(errors, m_socket.sslConfiguration().peerCertificate());
        if (verdict)
            m_socket.ignoreSslErrors(*verdict);
        else
            m_trustFailure = verdict.error();
    });
    connect(&m_socket, &QWebSocket::textMessageReceived, this, &EventStream::onText);
    connect(&m_socket, &QWebSocket::disconnected, this, &EventStream::onDisconnected);
    // A dial that never connects (hub down, refused) ends in no
    // disconnected(), only in UnconnectedState: it must be retried too.
    connect(&m_socket, &QWebSocket::stateChanged, this, [this](QAbstractSocket::SocketState state) {
        if (state == QAbstractSocket::UnconnectedState)
            QMetaObject::invokeMethod(this, &EventStream::onDisconnected, Qt::QueuedConnection);
    });
}

EventStream::~EventStream()
{
    m_socket.disconnect(this);
    m_socket.abort();
}

void EventStream::start(const api::AdminEndpoint &endpoint)
{
    stop();
    m_endpoint = endpoint;
    m_backoff.reset();
    dial();
}

void EventStream::stop()
{
    m_retry.stop();
    if (m_socket.state() != QAbstractSocket::UnconnectedState)
        m_socket.abort();
    setState(State::Stopped);
}

void EventStream::dial()
{
    if (Status check = api::checkAdminUrl(m_endpoint.url); !check) {
        m_lastError = check.error().message;
        setState(State::Refused);
        return;
    }
    m_trustFailure.reset();
    setState(State::Connecting);
    QNetworkRequest request(net::endpointUrl(m_endpoint.url, QStringLiteral("/api/events")));
    request.setSslConfiguration(m_endpoint.trust.configuration());
    m_socket.open(request);
}

void EventStream::onText(const QString &text)
{
    const QJsonObject message = QJsonDocument::fromJson(text.toUtf8()).object();
    const QString type = message.value(QLatin1String("type")).toString();
    if (type == QLatin1String("event")) {
        Q_EMIT eventReceived(message.value(QLatin1String("event")).toString(),
            message.value(QLatin1String("data")).toObject());
    } else if (type == QLatin1String("subscribed")) {
        m_backoff.reset();
        m_lastError.clear();
        setState(State::Live);
        Q_EMIT subscribed();
    } else if (type == QLatin1String("error")) {
        m_lastError = message.value(QLatin1String("message")).toString();
        qCWarning(lcDashboardEvents).noquote()
            << "the hub refused the event stream:" << m_lastError;
        setState(State::Refused);
        m_socket.close();
    } else {
        qCDebug(lcDashboardEvents) << "ignoring a message of type" << type;
    }
}

void EventStream::onDisconnected()
{
    if (m_trustFailure) {
        m_lastError = m_trustFailure->message;
        setState(State::Refused);
        return;
    }
    // Both signals may report one drop; the first schedules the retry.
    if (m_state == State::Refused || m_state == State::Stopped || m_retry.isActive()
        || m_socket.state() != QAbstractSocket::UnconnectedState)
        return;
    if (m_lastError.isEmpty() || m_state == State::Live)
        m_lastError = m_socket.errorString();
    const auto delay = m_backoff.next();
    qCInfo(lcDashboardEvents).noquote()
        << "event stream lost:" << m_lastError << "- again in" << delay.count() << "ms";
    setState(State::Connecting);
    m_retry.start(delay);
}

void EventStream::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace cloop::dashboard
