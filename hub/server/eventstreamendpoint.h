#pragma once

#include "hub/domain/eventbus.h"
#include "hub/edge/preauthpool.h"
#include "hub/storage/apitokenstore.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <functional>
#include <memory>

namespace cloop::net {
class MessageSocket;
}

namespace cloop::util {
class LogThrottle;
}

namespace cloop::hub {

class HubCore;

namespace edge {
class FirstMessageWait;
struct FirstMessage;
} // namespace edge

// wss://HUB/api/events: pushes the hub's events to signed-in clients (the
// dashboard), each only what its user may see. The first message carries
// the API token; nothing is sent before it checked out, only people with a
// role somewhere may subscribe, and a subscription ends within a second of
// its token's revocation or its user's last role going.
class EventStreamEndpoint final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EventStreamEndpoint)

public:
    struct Limits
    {
        int maxSubscribers = 4096;
        // One person cannot take the places of everyone else.
        int maxPerUser = 8;
        std::chrono::milliseconds authenticationTimeout { 10'000 };
        // Every subscription's token and roles are checked again this often,
        // besides at once when the hub itself changes them.
        std::chrono::milliseconds recheckInterval { 5'000 };
        // A subscriber that answers no ping for three of these is dropped.
        std::chrono::milliseconds pingInterval { 30'000 };
    };

    explicit EventStreamEndpoint(HubCore &core, QObject *parent = nullptr);
    EventStreamEndpoint(HubCore &core, Limits limits, QObject *parent = nullptr);
    ~EventStreamEndpoint() override;

    void handleSocket(
        std::unique_ptr<net::MessageSocket> socket, edge::PreAuthPool::Place place = {});
    int subscriberCount() const { return static_cast<int>(m_subscribers.size()); }
    int subscriberCountOf(qint64 userId) const;

private:
    struct Subscriber
    {
        net::MessageSocket *socket = nullptr;
        ApiPrincipal principal;
        QElapsedTimer lastPong;
    };

    void onFirstMessage(edge::FirstMessageWait *wait, const edge::FirstMessage &message);
    void refuse(edge::FirstMessageWait *wait, const Error &error);
    void onEvent(const HubEvent &event);
    bool mayReceive(const ApiPrincipal &principal, const HubEvent &event) const;
    // Checks token and roles of the subscriptions `affected` selects again,
    // and ends those that no longer hold.
    void recheck(const std::function<bool(const Subscriber &)> &affected);
    Status stillEntitled(const Subscriber &subscriber) const;
    void end(Subscriber *subscriber, const Error &reason);
    void remove(Subscriber *subscriber);
    void ping();

    HubCore &m_core;
    Limits m_limits;
    QList<Subscriber *> m_subscribers;
    QTimer m_recheckTimer;
    QTimer m_pingTimer;
    std::unique_ptr<util::LogThrottle> m_refusalLog;
};

} // namespace cloop::hub
