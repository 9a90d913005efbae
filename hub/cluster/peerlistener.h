#pragma once

#include "common/result.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/util/fd.h"
#include "common/util/logthrottle.h"
#include "hub/cluster/peerdirectory.h"
#include "hub/cluster/peerwire.h"

#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QSet>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QWebSocketServer>

#include <chrono>
#include <memory>

namespace cloop::hub::edge {
class TcpListener;
}

namespace cloop::hub {

class PeerHandshake;

// This member's peer port: other live members connect here over mutual
// TLS, each proved by its certificate's pin in the members table alone,
// and get a tunnel (the hub's side of it) for the channels they open.
// Before a connection has proved itself it costs a small, fixed budget:
// one deadline for TLS and the upgrade, a cap on how many may be at that
// stage together (more are closed at once), and at most one log line,
// throttled, for each refused.
class PeerListener final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PeerListener)

public:
    struct Options
    {
        QHostAddress address = QHostAddress::Any;
        quint16 port = 0; // 0: any free port (port() tells)
        // This member: its own key is refused.
        qint64 selfId = 0;
        // From accept to the WebSocket: TLS, pin, request head, upgrade.
        std::chrono::milliseconds handshakeTimeout { 10'000 };
        int maxUnauthenticated = 64;
        tunnel::ChannelMultiplexer::Limits limits = peerMultiplexerLimits();
        tunnel::TunnelTiming timing;
    };

    static Result<std::unique_ptr<PeerListener>> listen(Options options, PeerDirectory &directory,
        const QList<QSslCertificate> &chain, const QSslKey &key, QObject *parent = nullptr);
    // Open connections close (their channels with ConnectionLost).
    ~PeerListener() override;

    quint16 port() const;
    // Connections accepted from now on show this certificate (a reloaded
    // one); those open keep theirs.
    void setIdentity(const QList<QSslCertificate> &chain, const QSslKey &key);

    int unauthenticatedCount() const { return static_cast<int>(m_handshakes.size()); }
    int connectionCount() const { return static_cast<int>(m_connections.size()); }
    quint64 refusedCount() const { return m_refused; }

Q_SIGNALS:
    // A member connected. The connection is the listener's: it is deleted
    // (later) once it disconnected; its heartbeat is running.
    void peerConnected(
        const cloop::hub::PeerMember &member, cloop::tunnel::TunnelConnection *connection);
    // A connection that never became a member's, and why.
    void connectionRefused(const QHostAddress &peer, const QString &reason);

private:
    PeerListener(
        Options options, PeerDirectory &directory, const QSslConfiguration &tls, QObject *parent);
    void onAccepted(util::Fd descriptor, const QHostAddress &peer);
    void upgrade(PeerHandshake *handshake);
    void onWebSocket();
    void refuse(const QHostAddress &peer, const QString &reason);
    static QString peerKey(const QHostAddress &address, quint16 port);

    Options m_options;
    PeerDirectory &m_directory;
    QSslConfiguration m_tls;
    util::LogThrottle m_refusalLog;
    // TLS is done by the handshakes: the WebSocket layer gets sockets
    // already encrypted, and only through handleConnection().
    QWebSocketServer m_webSockets;
    QSet<PeerHandshake *> m_handshakes;
    // Handshakes whose socket the WebSocket layer is upgrading, by the
    // peer's address and port, until it hands them back as WebSockets.
    QHash<QString, PeerHandshake *> m_upgrading;
    QSet<tunnel::TunnelConnection *> m_connections;
    quint64 m_refused = 0;
    std::unique_ptr<edge::TcpListener> m_listener;
};

} // namespace cloop::hub
