#pragma once

#include "common/api/adminrequest.h"
#include "common/net/backoff.h"

#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <QWebSocket>

#include <optional>

namespace cloop::dashboard {

// The hub's event stream (wss://HUB/api/events) for a signed-in user: it
// subscribes with the user's token, passes each event on, and dials again
// with backoff when the link drops, so the window stays live across a hub
// restart. A refused subscription (a revoked token) stops it for good.
class EventSubscription final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EventSubscription)

public:
    enum class State
    {
        Stopped,
        Connecting,
        Live,
        Refused
    };
    Q_ENUM(State)

    explicit EventSubscription(QObject *parent = nullptr);
    ~EventSubscription() override;

    void start(const api::AdminEndpoint &endpoint);
    void stop();
    State state() const { return m_state; }
    QString lastError() const { return m_lastError; }

Q_SIGNALS:
    void stateChanged(cloop::dashboard::EventSubscription::State state);
    // After (re)subscribing: whatever happened while the link was down is
    // not replayed, so listeners reload what they show.
    void subscribed();
    void eventReceived(const QString &event, const QJsonObject &data);

private:
    void dial();
    void onText(const QString &text);
    void onDisconnected();
    void setState(State state);

    QWebSocket m_socket;
    api::AdminEndpoint m_endpoint;
    std::optional<Error> m_trustFailure;
    net::Backoff m_backoff;
    QTimer m_retry;
    State m_state = State::Stopped;
    QString m_lastError;
};

} // namespace cloop::dashboard
