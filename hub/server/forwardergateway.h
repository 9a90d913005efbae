#pragma once

#include "common/protocol/controlmessage.h"
#include "common/tunnel/tunnelconnection.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <memory>

class QWebSocket;

namespace cloop::hub {

class ForwarderStore;

// The hub's side of /api/forwarders/connect: authenticates each new
// WebSocket by its first message (a credential, or a one-time token to
// redeem), then keeps one live session per forwarder.
class ForwarderGateway final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderGateway)

public:
    struct Options
    {
        std::chrono::milliseconds authenticationTimeout{10'000};
        qsizetype maxPendingConnections = 256;
        tunnel::TunnelTiming timing;
        tunnel::ChannelMultiplexer::Limits limits;
        QString software;
    };

    ForwarderGateway(ForwarderStore &store, Options options, QObject *parent = nullptr);
    ~ForwarderGateway() override;

    void handleSocket(std::unique_ptr<QWebSocket> socket);

    bool isConnected(qint64 forwarderId) const { return m_sessions.contains(forwarderId); }
    tunnel::TunnelConnection *session(qint64 forwarderId) const { return m_sessions.value(forwarderId); }
    int pendingCount() const { return static_cast<int>(m_pending.size()); }

    // Ends a live session with a final error (revocation: permanent).
    void drop(qint64 forwarderId, const protocol::ErrorMessage &reason);

Q_SIGNALS:
    void forwarderConnected(qint64 forwarderId, const QString &name);
    void forwarderDisconnected(qint64 forwarderId, const QString &reason);

private:
    void onFirstMessage(tunnel::TunnelConnection *connection, const protocol::ControlMessage &message);
    void refuse(tunnel::TunnelConnection *connection, const Error &error);
    void admit(tunnel::TunnelConnection *connection, qint64 forwarderId);
    void retire(tunnel::TunnelConnection *connection, const protocol::ErrorMessage &reason);

    ForwarderStore &m_store;
    Options m_options;
    QList<QPointer<tunnel::TunnelConnection>> m_pending;
    QHash<qint64, tunnel::TunnelConnection *> m_sessions;
};

} // namespace cloop::hub
