#include "support/eventclient.h"

#include "support/hubprocess.h"
#include "support/processutil.h"

#include <QJsonDocument>
#include <QTest>

namespace cloop::testing {

EventClient::EventClient(const HubProcess &hub)
    : m_trust(*net::PinSet::parse(hub.pin()), {})
{
    m_socket.setSslConfiguration(m_trust.configuration());
    QObject::connect(
        &m_socket, &QWebSocket::sslErrors, &m_socket, [this](const QList<QSslError> &errors) {
            auto verdict = m_trust.judge(errors, m_socket.sslConfiguration().peerCertificate());
            if (verdict)
                m_socket.ignoreSslErrors(*verdict);
        });
    QObject::connect(
        &m_socket, &QWebSocket::textMessageReceived, &m_socket, [this](const QString &text) {
            messages.append(QJsonDocument::fromJson(text.toUtf8()).object());
        });
    QUrl url = hub.apiUrl(QStringLiteral("/api/events"));
    url.setScheme(QStringLiteral("wss"));
    m_socket.open(url);
}

bool EventClient::waitConnected()
{
    return QTest::qWaitFor(
        [this] { return m_socket.state() == QAbstractSocket::ConnectedState; }, kLongWaitMs);
}

void EventClient::send(const QJsonObject &message)
{
    m_socket.sendTextMessage(QString::fromUtf8(QJsonDocument(message).toJson()));
}

bool EventClient::subscribe(const QString &token)
{
    if (!waitConnected())
        return false;
    send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), token } });
    return waitFor(QStringLiteral("subscribed"));
}

bool EventClient::waitFor(const QString &type, const QString &event)
{
    return QTest::qWaitFor([&] { return indexOf(type, event) >= 0; }, kLongWaitMs);
}

bool EventClient::waitForEvent(
    const QString &event, const std::function<bool(const QJsonObject &)> &matches, int timeoutMs)
{
    return QTest::qWaitFor(
        [&] {
            for (const QJsonObject &message : std::as_const(messages)) {
                if (message.value(QLatin1String("type")).toString() == QLatin1String("event")
                    && message.value(QLatin1String("event")).toString() == event
                    && matches(message.value(QLatin1String("data")).toObject()))
                    return true;
            }
            return false;
        },
        timeoutMs);
}

qsizetype EventClient::indexOf(const QString &type, const QString &event) const
{
    for (qsizetype i = 0; i < messages.size(); ++i) {
        if (messages[i].value(QLatin1String("type")).toString() == type
            && (event.isEmpty() || messages[i].value(QLatin1String("event")).toString() == event))
            return i;
    }
    return -1;
}

} // namespace cloop::testing
