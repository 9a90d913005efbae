#pragma once

#include "common/net/heartbeat.h"
#include "common/protocol/controlmessage.h"
#include "common/tunnel/channelmultiplexer.h"

#include "common/net/messagesocket.h"

#include <QObject>
#include <QPointer>

#include <algorithm>

namespace cloop::tunnel {

struct TunnelTiming
{
    std::chrono::milliseconds heartbeatInterval = net::Heartbeat::kDefaultInterval;
    std::chrono::milliseconds heartbeatTimeout = net::Heartbeat::kDefaultTimeout;
    // While the tunnel carries any channel.
    std::chrono::milliseconds watchfulInterval = net::Heartbeat::kWatchfulInterval;
    std::chrono::milliseconds watchfulTimeout = net::Heartbeat::kWatchfulTimeout;

    net::Heartbeat::Pace idlePace() const { return { heartbeatInterval, heartbeatTimeout }; }
    // A stream's leg carries nothing but one device: watched at least at
    // the default watchful pace, whatever its session's. A stalled daemon
    // loses the stream, which is opened again, not its runs.
    TunnelTiming forLegs() const
    {
        TunnelTiming timing = *this;
        const TunnelTiming defaults;
        timing.watchfulInterval = std::min(watchfulInterval, defaults.watchfulInterval);
        timing.watchfulTimeout = std::min(watchfulTimeout, defaults.watchfulTimeout);
        return timing;
    }
    // Never slower than idle, whatever a test sets.
    net::Heartbeat::Pace watchfulPace() const
    {
        return { std::min(heartbeatInterval, watchfulInterval),
            std::min(heartbeatTimeout, watchfulTimeout) };
    }
};

// One tunnel over one WebSocket, the same object on both ends: JSON control
// messages in text frames, channel frames in binary frames, a heartbeat, and
// exactly one disconnected() however the link ends.
class TunnelConnection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TunnelConnection)

public:
    // Takes ownership of the socket.
    TunnelConnection(net::MessageSocket *socket, ChannelMultiplexer::Side side,
        ChannelMultiplexer::Limits limits = {}, TunnelTiming timing = {},
        QObject *parent = nullptr);
    ~TunnelConnection() override;

    net::MessageSocket *socket() const { return m_socket; }
    ChannelMultiplexer *channels() { return &m_mux; }
    bool isOpen() const { return !m_closed; }

    void startHeartbeat();
    void sendControl(const protocol::ControlMessage &message);
    // Sends a final error message, then closes the WebSocket.
    void closeWithError(const protocol::ErrorMessage &error);
    void close(const QString &reason);
    void abort(const QString &reason);

Q_SIGNALS:
    void controlReceived(const cloop::protocol::ControlMessage &message);
    void disconnected(const QString &reason);

private:
    void onText(const QString &text);
    void onBinary(const QByteArray &bytes);
    void onSocketDisconnected();
    void finish(const QString &reason);

    net::MessageSocket *m_socket;
    ChannelMultiplexer m_mux;
    net::Heartbeat *m_heartbeat;
    QString m_closeReason;
    bool m_closed = false;
    bool m_violated = false;
};

} // namespace cloop::tunnel
