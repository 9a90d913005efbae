#include "hub/server/eventstream.h"

#include "common/logging.h"
#include "hub/domain/accesspolicy.h"
#include "hub/hubcore.h"
#include "hub/storage/database.h"

#include <QJsonDocument>
#include <QTimer>
#include <QWebSocket>

namespace cloop::hub {

namespace {
constexpr int kAuthenticationTimeoutMs = 10'000;
constexpr qint64 kMaxFirstMessage = 4096;

QString encode(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}
} // namespace

EventStream::EventStream(HubCore &core, QObject *parent) : QObject(parent), m_core(core)
{
    connect(&core.events(), &EventBus::published, this, &EventStream::onEvent);
}

EventStream::~EventStream()
{
    for (Subscriber *subscriber : std::as_const(m_subscribers)) {
        if (subscriber->socket)
            subscriber->socket->disconnect(this);
        delete subscriber;
    }
}

int EventStream::subscriberCount() const
{
    return static_cast<int>(std::count_if(m_subscribers.cbegin(), m_subscribers.cend(),
                                          [](const Subscriber *s) { return s->principal.has_value(); }));
}

void EventStream::handleSocket(std::unique_ptr<QWebSocket> owned)
{
    QWebSocket *socket = owned.release();
    socket->setParent(this);
    if (m_subscribers.size() >= kMaxSubscribers) {
        socket->close(QWebSocketProtocol::CloseCodeTooMuchData, QStringLiteral("too many event subscribers"));
        socket->deleteLater();
        return;
    }
    socket->setMaxAllowedIncomingMessageSize(kMaxFirstMessage);
    auto *subscriber = new Subscriber{socket, std::nullopt};
    m_subscribers.append(subscriber);

    connect(socket, &QWebSocket::textMessageReceived, this, [this, subscriber](const QString &text) {
        if (!subscriber->principal)
            onFirstMessage(subscriber, text);
    });
    connect(socket, &QWebSocket::disconnected, this, [this, subscriber] {
        m_subscribers.removeAll(subscriber);
        if (subscriber->socket)
            subscriber->socket->deleteLater();
        delete subscriber;
    });
    QTimer::singleShot(kAuthenticationTimeoutMs, socket, [this, subscriber] {
        if (!subscriber->principal)
            refuse(subscriber, QStringLiteral("timeout"), QStringLiteral("no subscribe message within 10 s"));
    });
}

void EventStream::refuse(Subscriber *subscriber, const QString &code, const QString &message)
{
    if (!subscriber->socket)
        return;
    subscriber->socket->sendTextMessage(encode({{QStringLiteral("type"), QStringLiteral("error")},
                                                {QStringLiteral("code"), code},
                                                {QStringLiteral("message"), message},
                                                {QStringLiteral("permanent"), true}}));
    subscriber->socket->close(QWebSocketProtocol::CloseCodePolicyViolated, message.left(120));
}

void EventStream::onFirstMessage(Subscriber *subscriber, const QString &text)
{
    const QJsonObject message = QJsonDocument::fromJson(text.toUtf8()).object();
    if (message.value(QLatin1String("type")).toString() != QLatin1String("subscribe")
        || !message.value(QLatin1String("token")).isString()) {
        refuse(subscriber, QStringLiteral("protocol_error"),
               QStringLiteral("the first message must be {\"type\": \"subscribe\", \"token\": …}"));
        return;
    }
    auto principal = m_core.tokens().authenticate(message.value(QLatin1String("token")).toString());
    if (!principal) {
        qCWarning(lcHubApi).noquote() << "refused an event subscriber from"
                                      << subscriber->socket->peerAddress().toString() << ":" << principal.error().code;
        refuse(subscriber, principal.error().code, principal.error().message);
        return;
    }
    subscriber->principal = *principal;
    subscriber->socket->setMaxAllowedIncomingMessageSize(kMaxFirstMessage);
    subscriber->socket->sendTextMessage(encode({{QStringLiteral("type"), QStringLiteral("subscribed")},
                                                {QStringLiteral("user"), principal->userName}}));
}

bool EventStream::mayReceive(const ApiPrincipal &principal, const HubEvent &event) const
{
    const AccessPolicy &policy = m_core.policy();
    if (event.projectId)
        return policy.requireMember(principal, *event.projectId, QString()).ok();
    return policy.requireAnyRole(principal, QString()).ok();
}

void EventStream::onEvent(const HubEvent &event)
{
    const QString text = encode({{QStringLiteral("type"), QStringLiteral("event")},
                                 {QStringLiteral("event"), event.name},
                                 {QStringLiteral("at"), toDbTime(event.at)},
                                 {QStringLiteral("data"), event.data}});
    for (Subscriber *subscriber : std::as_const(m_subscribers)) {
        if (subscriber->principal && subscriber->socket && mayReceive(*subscriber->principal, event))
            subscriber->socket->sendTextMessage(text);
    }
}

} // namespace cloop::hub
