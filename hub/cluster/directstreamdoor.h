#pragma once

#include "common/protocol/channelframe.h"
#include "common/result.h"
#include "common/util/logthrottle.h"
#include "hub/cluster/peerdirectory.h"
#include "hub/cluster/peerrelayopen.h"

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QPointer>

#include <chrono>
#include <functional>
#include <map>
#include <memory>

class QTimer;

namespace cloop::tunnel {
class Channel;
class ChannelSplice;
class TunnelConnection;
} // namespace cloop::tunnel

namespace cloop::hub {

// The holder's half of a direct leg (PeerRelayOpen's "direct"): a device
// stream another member asked for, whose agent comes here for the bytes
// itself, so that they cross one hub and not two. The forwarder's channel
// waits, at most ticketLifetime, for the agent's connection with the
// one-time ticket; then the agent's opening goes out on that connection
// and the two channels are spliced, with their flow control, as a lone
// hub splices them. The asking member's peer channel carries nothing: it
// is the stream's handle, and either ending ends the other, so the member
// that asked still ends the stream (run over, binding ended) and hears
// when it ended here (forwarder gone, revoked).
//
// A ticket is good once, for the executor it names, until it expires;
// another executor's credential with it ends the leg, since its secret is
// out. Tickets are kept as their SHA-256 only.
class DirectStreamDoor final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DirectStreamDoor)

public:
    static constexpr std::chrono::milliseconds kTicketLifetime { 15'000 };

    explicit DirectStreamDoor(
        std::chrono::milliseconds ticketLifetime = kTicketLifetime, QObject *parent = nullptr);
    // Legs waiting or streaming end with ConnectionLost.
    ~DirectStreamDoor() override;

    // A member asked: `peer` (accepted) is its handle, `forwarder` the
    // forwarder's channel opened for it (opening or open).
    void expect(const PeerMember &from, qint64 forwarderId, const PeerDirectLeg &leg,
        tunnel::Channel *peer, tunnel::Channel *forwarder);
    // An agent authenticated as `executorId` came with `ticket`. Refused
    // (nothing opened) unless the ticket is waiting and names it; else
    // `open` gives the agent's connection, the door's from now on.
    Status admit(qint64 executorId, const QString &ticket,
        const std::function<tunnel::TunnelConnection *()> &open);

    int waitingCount() const { return static_cast<int>(m_waiting.size()); }
    int streamCount() const;
    // Bytes carried from forwarders to agents and back, by legs running and ended.
    quint64 bytesToAgents() const;
    quint64 bytesToForwarders() const;
    // The same for each binding: a direct leg's bytes are relayed here, not
    // by the member that asked for it, and counted here only.
    struct Carried
    {
        qint64 forwarderId = 0;
        quint64 toAgent = 0;
        quint64 toForwarder = 0;
    };
    std::map<qint64, Carried> carriedByBinding() const;

Q_SIGNALS:
    void streamStarted(qint64 forwarderId, qint64 executorId);
    void legEnded(qint64 forwarderId, qint64 executorId, cloop::protocol::CloseCode code,
        const QString &reason);

private:
    struct Leg
    {
        PeerMember from;
        qint64 forwarderId = 0;
        PeerDirectLeg direct;
        QByteArray ticketHash;
        QPointer<tunnel::Channel> peer;
        QPointer<tunnel::Channel> forwarder;
        QPointer<tunnel::Channel> agent;
        QPointer<tunnel::TunnelConnection> connection;
        QPointer<tunnel::ChannelSplice> splice;
        std::unique_ptr<QTimer> expiry;
    };

    void joinIfReady(quint64 id);
    void end(quint64 id, protocol::CloseCode code, const QString &reason);

    std::chrono::milliseconds m_ticketLifetime;
    quint64 m_nextId = 1;
    std::map<quint64, Leg> m_legs;
    QHash<QByteArray, quint64> m_waiting; // SHA-256 of the ticket -> leg
    std::map<qint64, Carried> m_endedByBinding;
    util::LogThrottle m_refusalLog;
};

} // namespace cloop::hub
