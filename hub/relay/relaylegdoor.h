#pragma once

#include "common/protocol/channelopen.h"
#include "common/result.h"
#include "common/util/logthrottle.h"
#include "hub/relay/relayedstream.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <chrono>
#include <functional>

namespace cloop::tunnel {
class TunnelConnection;
}

namespace cloop::hub {

class RelayThreads;

// Where the legs of the device streams this hub relays come in (protocol
// 32 on): every stream has two one-time tickets, one for its forwarder and
// one for its agent, kept as their SHA-256 only. A ticket is good once, at
// its own daemon's endpoint, for the daemon it names, until its stream
// ends; shown by another daemon, its secret is out and the stream ends.
class RelayLegDoor final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RelayLegDoor)

public:
    static constexpr std::chrono::milliseconds kTicketLifetime { 15'000 };

    explicit RelayLegDoor(RelayThreads &threads,
        std::chrono::milliseconds ticketLifetime = kTicketLifetime, QObject *parent = nullptr);
    ~RelayLegDoor() override;

    // A new stream, waiting for both legs: the legs to tell the forwarder
    // and the agent (no URL: this hub). The stream is the caller's, to end
    // and delete.
    struct Expected
    {
        RelayedStream *stream = nullptr;
        protocol::DirectLeg forwarderLeg;
        protocol::DirectLeg agentLeg;
    };
    Expected expect(RelayedStream::Plan plan);

    // Whether the ticket is one of this door's, waiting.
    bool knows(const QString &ticket) const;
    // A daemon authenticated as `daemonId` came to the endpoint of `side`
    // with `ticket`. Refused (nothing opened) unless the ticket waits for
    // that side and that daemon; else `open` gives its connection, the
    // stream's from now on.
    Status admit(RelayedStream::Side side, qint64 daemonId, const QString &ticket,
        const std::function<tunnel::TunnelConnection *()> &open);

    int waitingCount() const { return static_cast<int>(m_waiting.size()); }

private:
    struct Waiting
    {
        QPointer<RelayedStream> stream;
        RelayedStream::Side side = RelayedStream::Side::Forwarder;
    };

    RelayThreads &m_threads;
    std::chrono::milliseconds m_ticketLifetime;
    QHash<QByteArray, Waiting> m_waiting; // SHA-256 of a ticket
    util::LogThrottle m_refusalLog;
};

} // namespace cloop::hub
