#pragma once

#include "hub/domain/eventbus.h"
#include "hub/storage/apitokenstore.h"

#include <QList>
#include <QObject>
#include <QPointer>

#include <memory>

class QWebSocket;

namespace cloop::hub {

class HubCore;

// wss://HUB/api/events: pushes the hub's events to signed-in clients (the
// dashboard), each only what its user may see. The first message carries
// the API token; nothing is sent before it checked out.
class EventStream final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EventStream)

public:
    explicit EventStream(HubCore &core, QObject *parent = nullptr);
    ~EventStream() override;

    void handleSocket(std::unique_ptr<QWebSocket> socket);
    int subscriberCount() const;

    static constexpr int kMaxSubscribers = 512;

private:
    struct Subscriber
    {
        QPointer<QWebSocket> socket;
        std::optional<ApiPrincipal> principal;
    };

    void onFirstMessage(Subscriber *subscriber, const QString &text);
    void onEvent(const HubEvent &event);
    bool mayReceive(const ApiPrincipal &principal, const HubEvent &event) const;
    void refuse(Subscriber *subscriber, const QString &code, const QString &message);

    HubCore &m_core;
    QList<Subscriber *> m_subscribers;
};

} // namespace cloop::hub
