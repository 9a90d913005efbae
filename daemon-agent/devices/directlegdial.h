#pragma once

#include "common/protocol/channelframe.h"
#include "common/protocol/channelopen.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <functional>

namespace cloop::tunnel {
class Channel;
class TunnelClient;
} // namespace cloop::tunnel

namespace cloop::agent {

// One device's direct leg (common/protocol/channelopen.h's DirectLeg): the
// agent's own connection to the hub member holding the forwarder, dialled
// with the one-time ticket its hub gave. That member opens the device's
// stream on it, which goes to the attacher as any device channel would;
// the channel the hub opened on the agent's tunnel (the handle) stays its
// twin: either ending ends the other. A leg that cannot be dialled (within
// kDialBound, or refused for good) closes
// the handle saying kDirectLegUnreachable, and the hub carries the stream
// itself.
class DirectLegDial final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DirectLegDial)

public:
    // A client for the leg, not yet started: the agent's credential, its
    // trust, and the hello that carries the ticket.
    using Dialer
        = std::function<tunnel::TunnelClient *(const protocol::DirectLeg &leg, QObject *parent)>;
    // Bounds the dial, from the first byte to the stream's channel. Within
    // it, attempts that fail are repeated with a short backoff: the agent
    // may come before the holder has read its member's word of the ticket.
    static constexpr std::chrono::milliseconds kDialBound { 5'000 };

    DirectLegDial(tunnel::Channel *handle, protocol::AgentDeviceOpen open, const Dialer &dialer,
        std::chrono::milliseconds bound = kDialBound, QObject *parent = nullptr);
    ~DirectLegDial() override;

    void start();

Q_SIGNALS:
    // The stream's channel arrived: attach it (accept or refuse it now).
    void arrived(cloop::tunnel::Channel *stream, const cloop::protocol::AgentDeviceOpen &open);
    // The leg could not be dialled; the handle was closed and the hub
    // carries the stream itself on a new channel.
    void failed(const QString &reason);
    // The leg is over, either way; this object goes away by itself.
    void ended();

private:
    void onStreamRequested(tunnel::Channel *stream);
    void fail(const QString &reason);
    void end(protocol::CloseCode code, const QString &reason);

    QPointer<tunnel::Channel> m_handle;
    QPointer<tunnel::Channel> m_stream;
    protocol::AgentDeviceOpen m_open;
    tunnel::TunnelClient *m_client = nullptr;
    QTimer m_bound;
    QString m_lastFailure;
    bool m_over = false;
};

} // namespace cloop::agent
