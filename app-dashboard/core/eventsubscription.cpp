#include "app-dashboard/core/eventsubscription.h"

#include "common/api/eventstreammessage.h"

#include "app-dashboard/core/logging.h"

#include <QJsonDocument>

namespace cloop::dashboard {

EventSubscription::EventSubscription(QObject *parent)
    : QObject(parent)
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &EventSubscription::dial);
    connect(&m_socket, &QWebSocket::connected, this, [this] {
        if (Status pinned
            = m_endpoint.trust.verifyPeer(m_socket.sslConfiguration().peerCertificate());
            !pinned) {
            m_trustFailure = pinned.error();
            m_socket.abort();
            return;
        }
        m_socket.sendTextMessage(api::EventStreamMessage::subscribe(m_endpoint.token).toText());
    });
    connect(&m_socket, &QWebSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        auto verdict
            = m_endpoint.trust.judge(errors, m_socket.sslConfiguration().peerCertificate());
        if (verdict)
            m_socket.ignoreSslErrors(*verdict);
        else
            m_trustFailure = verdict.error();
    });
    connect(&m_socket, &QWebSocket::textMessageReceived, this, &EventSubscription::onText);
    connect(&m_socket, &QWebSocket::disconnected, this, &EventSubscription::onDisconnected);
    // A dial that never connects (hub down, refused) ends in no
    // disconnected(), only in UnconnectedState: it must be retried too.
    connect(&m_socket, &QWebSocket::stateChanged, this, [this](QAbstractSocket::SocketState state) {
        if (state == QAbstractSocket::UnconnectedState)
            QMetaObject::invokeMethod(
                this, &EventSubscription::onDisconnected, Qt::QueuedConnection);
    });
}

EventSubscription::~EventSubscription()
{
    m_socket.disconnect(this);
    m_socket.abort();
}

void EventSubscription::start(const api::AdminEndpoint &endpoint)
{
    stop();
    m_endpoint = endpoint;
    m_backoff.reset();
    dial();
}

void EventSubscription::stop()
{
    m_retry.stop();
    if (m_socket.state() != QAbstractSocket::UnconnectedState)
        m_socket.abort();
    setState(State::Stopped);
}

void EventSubscription::dial()
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

void EventSubscription::onText(const QString &text)
{
    using Message = api::EventStreamMessage;
    const auto message = Message::fromText(text.toUtf8());
    if (!message) {
        qCDebug(lcDashboardEvents).noquote() << "ignoring a message:" << message.error().message;
        return;
    }
    switch (message->type) {
    case Message::Type::Event:
        Q_EMIT eventReceived(message->event, message->data);
        break;
    case Message::Type::Subscribed:
        m_backoff.reset();
        m_lastError.clear();
        setState(State::Live);
        Q_EMIT subscribed();
        break;
    case Message::Type::Error:
        m_lastError = message->message;
        qCWarning(lcDashboardEvents).noquote()
            << "the hub refused the event stream:" << m_lastError;
        setState(State::Refused);
        m_socket.close();
        break;
    case Message::Type::Subscribe:
        qCDebug(lcDashboardEvents) << "ignoring a subscribe message from the hub";
        break;
    }
}

void EventSubscription::onDisconnected()
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

void EventSubscription::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace cloop::dashboard
