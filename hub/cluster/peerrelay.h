#pragma once

#include "common/protocol/channelframe.h"
#include "common/result.h"
#include "common/util/logthrottle.h"
#include "hub/cluster/peerdirectory.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

#include <functional>

namespace cloop::tunnel {
class Channel;
class ChannelMultiplexer;
class ChannelSplice;
class TunnelConnection;
} // namespace cloop::tunnel

namespace cloop::hub {

class DirectStreamDoor;

// The holder's half of a device stream another member asked for: each
// channel a peer opens on its link (a PeerRelayOpen) becomes a channel to
// the forwarder, opened by the function the hub gives, and the two are
// spliced with their flow control intact, as a hub splices a forwarder's
// channel to an agent's. The holder only moves bytes: whether the asking
// member's run may have the device was decided there.
class PeerRelay final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PeerRelay)

public:
    // Opens `open` (a forwarder's opening) on that forwarder's tunnel here,
    // or says why not (not connected here, revoked, too many channels);
    // the message reaches the asking member as the refusal's reason.
    using OpenAtForwarder = std::function<Result<tunnel::Channel *>(
        qint64 forwarderId, const QJsonObject &open, const PeerMember &from)>;

    explicit PeerRelay(OpenAtForwarder openAtForwarder, QObject *parent = nullptr);
    // Relays still running end with ConnectionLost.
    ~PeerRelay() override;

    // Where a channel asking for a direct leg goes once its forwarder's
    // channel is open; without a door such a channel is refused, and the
    // asking member relays instead.
    void setDirectStreamDoor(DirectStreamDoor *door) { m_door = door; }

    // Serves the channels `from` opens on this connection from now on; the
    // connection stays its owner's.
    void adopt(const PeerMember &from, tunnel::TunnelConnection *connection);
    // The same for any multiplexer (the connection's, or a test's).
    void adopt(const PeerMember &from, tunnel::ChannelMultiplexer *channels);

    int relayCount() const { return static_cast<int>(m_relays.size()); }
    // Bytes carried from the asking members to forwarders, and back, by
    // relays running and ended.
    quint64 bytesToForwarders() const;
    quint64 bytesToPeers() const;
    quint64 refusedCount() const { return m_refused; }

Q_SIGNALS:
    void relayStarted(const cloop::hub::PeerMember &from, qint64 forwarderId);
    void relayEnded(const cloop::hub::PeerMember &from, qint64 forwarderId,
        cloop::protocol::CloseCode code, const QString &reason);
    void relayRefused(const cloop::hub::PeerMember &from, const QString &reason);

private:
    struct Relay
    {
        PeerMember from;
        qint64 forwarderId = 0;
    };

    void onRequested(const PeerMember &from, tunnel::Channel *channel);
    void refuse(const PeerMember &from, tunnel::Channel *channel, const QString &reason);
    void onEnded(tunnel::ChannelSplice *splice, protocol::CloseCode code, const QString &reason);

    OpenAtForwarder m_openAtForwarder;
    DirectStreamDoor *m_door = nullptr;
    QHash<tunnel::ChannelSplice *, Relay> m_relays;
    quint64 m_endedToForwarders = 0;
    quint64 m_endedToPeers = 0;
    quint64 m_refused = 0;
    util::LogThrottle m_refusalLog;
};

} // namespace cloop::hub
