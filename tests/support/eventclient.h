#pragma once

// A pinned WebSocket to a hub's event stream (wss://HUB/api/events),
// collecting every message it receives, as the dashboard would.

#include "common/net/hubtls.h"

#include <QJsonObject>
#include <QList>
#include <QWebSocket>

namespace cloop::testing {

class HubProcess;

class EventClient
{
public:
    explicit EventClient(const HubProcess &hub);

    bool waitConnected();
    void send(const QJsonObject &message);
    // Connects and subscribes with `token`; whether it was told "subscribed".
    bool subscribe(const QString &token);
    bool waitFor(const QString &type, const QString &event = {});
    // The first message of that type (and event) whose data satisfies
    // `matches`, waited for.
    bool waitForEvent(const QString &event, const std::function<bool(const QJsonObject &)> &matches,
        int timeoutMs);
    qsizetype indexOf(const QString &type, const QString &event = {}) const;
    QAbstractSocket::SocketState state() const { return m_socket.state(); }

    QList<QJsonObject> messages;

private:
    net::HubTrust m_trust;
    QWebSocket m_socket;
};

} // namespace cloop::testing
