#pragma once

#include "common/protocol/channelframe.h"
#include "common/protocol/channelopen.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <functional>

namespace cloop::tunnel {
class Channel;
class TunnelClient;
} // namespace cloop::tunnel

namespace cloop::daemon {

// One device stream's leg (common/protocol/channelopen.h's DirectLeg): the
// daemon's own connection to a hub, dialled with the one-time ticket its hub
// gave. That hub opens the device's stream on it, which goes to the daemon
// as any stream would; the channel the opening came on (the handle) stays
// its twin: either ending ends the other. A leg that cannot be dialled
// (within the bound, or refused for good) closes the handle saying
// kDirectLegUnreachable, and the hub carries the stream on the tunnels.
class StreamLegDial final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StreamLegDial)

public:
    // A client for the leg, not yet started (see makeLegClient), or nullptr
    // when this daemon cannot dial it.
    using Dialer
        = std::function<tunnel::TunnelClient *(const protocol::DirectLeg &leg, QObject *parent)>;
    // Whether a stream's opening is the one the handle announced: anything
    // else the hub opens on the leg is refused.
    using Expected = std::function<bool(const QJsonObject &metadata)>;
    // Bounds the dial, from the first byte to the stream's channel. Within
    // it, attempts that fail are repeated with a short backoff: the daemon
    // may come before the hub has read its word of the ticket.
    static constexpr std::chrono::milliseconds kDialBound { 5'000 };
    // How long a stream closed normally may take to send what it queued and
    // hear the hub's close before its leg is closed under it.
    static constexpr std::chrono::milliseconds kCloseGrace { 2'000 };

    // `description` names the stream in log lines and reasons: "run 5's
    // fwd-lab (binding 7)".
    StreamLegDial(tunnel::Channel *handle, protocol::DirectLeg leg, QString description,
        Expected expected, const Dialer &dialer, std::chrono::milliseconds bound = kDialBound,
        QObject *parent = nullptr);
    ~StreamLegDial() override;

    // Takes the handle and dials.
    void start();

Q_SIGNALS:
    // The stream's channel arrived: take it (accept or refuse it) now.
    void arrived(cloop::tunnel::Channel *stream);
    // The leg could not be dialled, here or by the other daemon; the
    // handle is closed and the hub carries the stream itself on a new
    // channel.
    void failed(const QString &reason);
    // The leg is over, either way; this object goes away by itself.
    void ended();

private:
    void onStreamRequested(tunnel::Channel *stream);
    void fail(const QString &reason);
    // The hub gave up on legs for this stream (the other daemon's failed).
    void giveUp(const QString &reason);
    // Either way, the hub carries the stream on the tunnels now.
    void concludeFailed(const QString &reason);
    void end(protocol::CloseCode code, const QString &reason);
    // The dial stops for good; the leg goes once its stream has closed.
    void finish();
    void leave();
    // The hub URL the leg's client dials, for log lines.
    QString destination() const;

    QPointer<tunnel::Channel> m_handle;
    QPointer<tunnel::Channel> m_stream;
    protocol::DirectLeg m_leg;
    QString m_description;
    Expected m_expected;
    tunnel::TunnelClient *m_client = nullptr;
    QTimer m_bound;
    QString m_lastFailure;
    bool m_over = false;
};

} // namespace cloop::daemon
