#pragma once

#include "common/protocol/controlmessage.h"
#include "common/tunnel/tunnelconnection.h"
#include "hub/edge/preauthpool.h"

#include <QHash>
#include <QObject>

#include <chrono>
#include <functional>
#include <memory>

namespace cloop::util {
class LogThrottle;
}

namespace cloop::hub {

// The window over which the daemons of a stopping hub should spread their
// return: as long as a hub takes to welcome that many of them again at
// kReturnsPerSecond, so the next one is not swamped (a TLS handshake and a
// hello cost one core about 1.7 ms a daemon at 10,000): 20 s for 10,000,
// a moment for a few.
inline constexpr int kReturnsPerSecond = 500;
std::chrono::milliseconds returnSpreadFor(qsizetype sessions);

class DaemonDirectory;

namespace edge {
class FirstMessageWait;
struct FirstMessage;
} // namespace edge

// The hub's side of one daemon endpoint (/api/forwarders/connect or
// /api/executors/connect): authenticates each new WebSocket by its first
// message (a credential, or a one-time token to redeem), then keeps one live
// session per daemon. Until then a socket costs a place in the
// pre-authentication pool and one timer, and earns at most one error reply.
class DaemonGateway final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DaemonGateway)

public:
    struct Options
    {
        std::chrono::milliseconds authenticationTimeout { 10'000 };
        tunnel::TunnelTiming timing;
        tunnel::ChannelMultiplexer::Limits limits;
    };

    // Where a connection that came for one device's stream goes (a hello
    // with a stream ticket; see common/protocol/channelopen.h's DirectLeg):
    // checks the ticket against the daemon it authenticated as and, only
    // when it holds, calls `open` for the connection (welcomed, its
    // heartbeat on), which is then the door's to end.
    using StreamDoor = std::function<Status(qint64 daemonId, const QString &ticket,
        const std::function<tunnel::TunnelConnection *()> &open)>;

    DaemonGateway(DaemonDirectory &directory, Options options, QObject *parent = nullptr);
    ~DaemonGateway() override;

    // The cluster's door: the direct legs of agents of other members.
    // Without a door, a stream ticket is refused.
    void setStreamDoor(StreamDoor door) { m_streamDoor = std::move(door); }
    // The door of the legs this hub relays on its relay threads, asked
    // first for the tickets it knows.
    using TicketKnown = std::function<bool(const QString &ticket)>;
    void setRelayDoor(TicketKnown knows, StreamDoor door)
    {
        m_relayKnows = std::move(knows);
        m_relayDoor = std::move(door);
    }

    // What a WebSocket came for, by the path it asked for.
    enum class Purpose
    {
        Session,
        DirectLeg // one device's stream, with a stream ticket
    };

    // A new WebSocket on this endpoint, with its place in the pool.
    void handleSocket(std::unique_ptr<net::MessageSocket> socket,
        edge::PreAuthPool::Place place = {}, Purpose purpose = Purpose::Session);

    bool isConnected(qint64 id) const { return m_sessions.contains(id); }
    tunnel::TunnelConnection *session(qint64 id) const { return m_sessions.value(id); }
    QList<qint64> connectedIds() const { return m_sessions.keys(); }
    qsizetype sessionCount() const { return m_sessions.size(); }
    // The protocol a live session's daemon speaks; 0 when it has none.
    int protocolOf(qint64 id) const { return m_protocols.value(id); }
    int pendingCount() const { return m_pending; }

    // Ends a live session with a final error (revocation: permanent).
    void drop(qint64 id, const protocol::ErrorMessage &reason);
    // The hub is stopping: every session gets its close frame with `reason`
    // now, all before any goes away, and none is reported gone (the
    // daemons come back to the next hub; nothing about them changed). A
    // daemon that can take it is asked to spread its return over
    // `returnWithin` (returnSpreadFor).
    void closeEverySession(const QString &reason,
        std::chrono::milliseconds returnWithin = std::chrono::milliseconds(0));

    // The pins of the keys the hub serves and staged: in every Welcome from
    // now on, and told to every live daemon that stores them.
    void announcePins(const QStringList &pins);
    // The daemon URLs of the live members of the hub's cluster, in the order
    // daemons should try them: in every Welcome from now on, and told
    // (hub.members) to every live daemon that takes them. A URL no daemon
    // would accept (not wss://, ws:// to another host, named twice, past the
    // 16th) is left out and logged.
    void announceHubs(const QList<QUrl> &hubs);
    const QList<QUrl> &announcedHubs() const { return m_hubs; }

Q_SIGNALS:
    void daemonConnected(qint64 id, const QString &name);
    void daemonDisconnected(qint64 id, const QString &reason);
    // A control message from an authenticated daemon.
    void controlReceived(qint64 id, const cloop::protocol::ControlMessage &message);

private:
    void onFirstMessage(
        edge::FirstMessageWait *wait, const edge::FirstMessage &message, Purpose purpose);
    void refuse(edge::FirstMessageWait *wait, const Error &error);
    void admitStream(edge::FirstMessageWait *wait, const protocol::Hello &hello);
    void admit(tunnel::TunnelConnection *connection, qint64 id, const QString &name,
        protocol::Welcome welcome, int peerProtocol);
    void retire(tunnel::TunnelConnection *connection, const protocol::ErrorMessage &reason);
    // What a daemon of `peerProtocol` can read of the hub's pins.
    QStringList pinsFor(int peerProtocol) const;

    DaemonDirectory &m_directory;
    Options m_options;
    QString m_noun;
    int m_pending = 0;
    QHash<qint64, tunnel::TunnelConnection *> m_sessions;
    QHash<qint64, int> m_protocols; // of the live sessions
    QStringList m_pins;
    QList<QUrl> m_hubs;
    std::unique_ptr<util::LogThrottle> m_refusalLog;
    StreamDoor m_streamDoor;
    TicketKnown m_relayKnows;
    StreamDoor m_relayDoor;
};

} // namespace cloop::hub
