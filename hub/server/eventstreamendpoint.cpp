#include "hub/server/eventstreamendpoint.h"

#include "common/api/eventstreammessage.h"

#include "common/logging.h"
#include "common/util/logthrottle.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/tokenservice.h"
#include "hub/edge/firstmessagewait.h"
#include "hub/edge/greeting.h"
#include "hub/hubcore.h"
#include "hub/storage/database.h"

#include "common/net/messagesocket.h"
#include "common/net/websocketframes.h"
#include <QJsonDocument>

namespace cloop::hub {

namespace {
constexpr qint64 kMaxFirstMessage = 4096;

QString errorText(const Error &error)
{
    return api::EventStreamMessage::error(error).toText();
}
} // namespace

EventStreamEndpoint::EventStreamEndpoint(HubCore &core, QObject *parent)
    : EventStreamEndpoint(core, Limits {}, parent)
{ }

EventStreamEndpoint::EventStreamEndpoint(HubCore &core, Limits limits, QObject *parent)
    : QObject(parent)
    , m_core(core)
    , m_limits(limits)
    , m_refusalLog(std::make_unique<util::LogThrottle>(
          lcHubApi(), QStringLiteral("refused event subscribers")))
{
    connect(&core.events(), &EventBus::published, this, &EventStreamEndpoint::onEvent);
    m_recheckTimer.setInterval(m_limits.recheckInterval);
    connect(&m_recheckTimer, &QTimer::timeout, this,
        [this] { recheck([](const Subscriber &) { return true; }); });
    m_recheckTimer.start();
    m_pingTimer.setInterval(m_limits.pingInterval);
    connect(&m_pingTimer, &QTimer::timeout, this, &EventStreamEndpoint::ping);
    m_pingTimer.start();
}

EventStreamEndpoint::~EventStreamEndpoint()
{
    for (Subscriber *subscriber : std::as_const(m_subscribers)) {
        subscriber->socket->disconnect(this);
        delete subscriber->socket;
        delete subscriber;
    }
}

int EventStreamEndpoint::subscriberCountOf(qint64 userId) const
{
    return static_cast<int>(std::count_if(m_subscribers.cbegin(), m_subscribers.cend(),
        [userId](const Subscriber *s) { return s->principal.userId == userId; }));
}

void EventStreamEndpoint::handleSocket(
    std::unique_ptr<net::MessageSocket> socket, edge::PreAuthPool::Place place)
{
    auto *wait = new edge::FirstMessageWait(std::move(socket), std::move(place),
        m_limits.authenticationTimeout, kMaxFirstMessage, this);
    connect(wait, &edge::FirstMessageWait::arrived, this,
        [this, wait](const edge::FirstMessage &message) { onFirstMessage(wait, message); });
    connect(wait, &edge::FirstMessageWait::expired, this, [this, wait] {
        refuse(wait,
            Error::make(QStringLiteral("timeout"),
                QStringLiteral("no subscribe message within %1 s")
                    .arg(m_limits.authenticationTimeout.count() / 1000)));
    });
}

void EventStreamEndpoint::refuse(edge::FirstMessageWait *wait, const Error &error)
{
    if (m_refusalLog->admit())
        qCWarning(lcHubApi).noquote()
            << "refused an event subscriber from" << wait->socket()->peerAddress().toString() << ":"
            << error.code;
    wait->refuse(errorText(error), error.message);
}

void EventStreamEndpoint::onFirstMessage(
    edge::FirstMessageWait *wait, const edge::FirstMessage &message)
{
    auto token = edge::parseSubscription(message);
    if (!token) {
        refuse(wait, token.error());
        return;
    }
    auto principal = m_core.tokens().authenticate(*token);
    if (!principal) {
        refuse(wait, principal.error());
        return;
    }
    // Someone with no role sees nothing, and must not hold places either.
    if (Status entitled
        = m_core.policy().require(*principal, AccessPolicy::HubAction::SubscribeToEvents);
        !entitled) {
        refuse(wait, entitled.error());
        return;
    }
    if (subscriberCountOf(principal->userId) >= m_limits.maxPerUser) {
        refuse(wait,
            Error::make(QStringLiteral("too_many_subscriptions"),
                QStringLiteral("%1 already has %2 event subscriptions open (the most one user may "
                               "have); close another dashboard first")
                    .arg(principal->userName)
                    .arg(m_limits.maxPerUser)));
        return;
    }
    if (subscriberCount() >= m_limits.maxSubscribers) {
        refuse(wait,
            Error::make(QStringLiteral("too_many_subscriptions"),
                QStringLiteral("the hub has %1 event subscriptions open, the most it takes")
                    .arg(m_limits.maxSubscribers)));
        return;
    }

    auto *subscriber = new Subscriber { wait->take().release(), *principal, {} };
    subscriber->lastPong.start();
    subscriber->socket->setParent(this);
    m_subscribers.append(subscriber);
    connect(subscriber->socket, &net::MessageSocket::pongReceived, this,
        [subscriber] { subscriber->lastPong.restart(); });
    connect(subscriber->socket, &net::MessageSocket::disconnected, this,
        [this, subscriber] { remove(subscriber); });
    subscriber->socket->sendText(api::EventStreamMessage::subscribed(principal->userName).toText());
}

Status EventStreamEndpoint::stillEntitled(const Subscriber &subscriber) const
{
    auto current = m_core.tokens().principalOf(subscriber.principal.tokenId);
    if (!current)
        return current.error();
    return m_core.policy().require(*current, AccessPolicy::HubAction::SubscribeToEvents);
}

void EventStreamEndpoint::recheck(const std::function<bool(const Subscriber &)> &affected)
{
    const QList<Subscriber *> subscribers = m_subscribers;
    for (Subscriber *subscriber : subscribers) {
        if (!affected(*subscriber))
            continue;
        if (Status entitled = stillEntitled(*subscriber); !entitled) {
            // A database that cannot answer is not a revocation.
            if (entitled.error().is(ErrorCode::StorageError)
                || entitled.error().code == kDatabaseUnreachable)
                continue;
            end(subscriber, entitled.error());
        }
    }
}

void EventStreamEndpoint::end(Subscriber *subscriber, const Error &reason)
{
    qCInfo(lcHubApi).noquote() << "ended the event subscription of"
                               << subscriber->principal.userName << ":" << reason.message;
    net::MessageSocket *socket = subscriber->socket;
    socket->sendText(errorText(reason));
    socket->close(net::websocket::CloseCode::PolicyViolated, reason.message);
    remove(subscriber);
}

void EventStreamEndpoint::remove(Subscriber *subscriber)
{
    if (!m_subscribers.removeOne(subscriber))
        return;
    subscriber->socket->disconnect(this);
    // The close handshake finishes on its own, bounded by an abort.
    net::MessageSocket *socket = subscriber->socket;
    connect(socket, &net::MessageSocket::disconnected, socket, &QObject::deleteLater);
    QTimer::singleShot(2000, socket, [socket] {
        socket->abort();
        socket->deleteLater();
    });
    delete subscriber;
}

void EventStreamEndpoint::ping()
{
    const QList<Subscriber *> subscribers = m_subscribers;
    for (Subscriber *subscriber : subscribers) {
        if (subscriber->lastPong.elapsed() > 3 * m_limits.pingInterval.count()) {
            qCInfo(lcHubApi).noquote()
                << "dropped the silent event subscription of" << subscriber->principal.userName;
            subscriber->socket->abort();
            remove(subscriber);
            continue;
        }
        subscriber->socket->ping();
    }
}

bool EventStreamEndpoint::mayReceive(const ApiPrincipal &principal, const HubEvent &event) const
{
    return m_core.policy().maySee(principal, event);
}

void EventStreamEndpoint::onEvent(const HubEvent &event)
{
    // The hub changed someone's access: their subscriptions answer for it now.
    if (event.name == api::hubeventname::kTokenRevoked) {
        const qint64 tokenId = event.data.value(QLatin1String("token_id")).toInteger();
        recheck([tokenId](const Subscriber &s) { return s.principal.tokenId == tokenId; });
    } else if (event.name == api::hubeventname::kRoleChanged) {
        const qint64 userId = event.data.value(QLatin1String("user_id")).toInteger();
        recheck([userId](const Subscriber &s) { return s.principal.userId == userId; });
    }
    const QString text
        = api::EventStreamMessage::eventOf(event.name, event.at, event.data).toText();
    for (Subscriber *subscriber : std::as_const(m_subscribers)) {
        if (mayReceive(subscriber->principal, event))
            subscriber->socket->sendText(text);
    }
}

} // namespace cloop::hub
