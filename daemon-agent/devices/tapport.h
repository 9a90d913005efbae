#pragma once

#include "common/device/l2/tapdevice.h"
#include "common/tunnel/framepump.h"

#include <QObject>

#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::agent {

// The agent's half of a forwarded segment: a TAP ⇄ a device channel, the
// mirror image of the forwarder's SegmentPort, through the same FramePump.
// Frames the sandbox sends come out of the TAP with their vnet header and
// go up the channel as frame records as they are: a checksum or
// segmentation left to offload stays so, for the forwarder's kernel (or
// NIC) to finish on the wire. Frames from the channel go into the TAP; one
// the TAP cannot take now (its queue is full, or it is down, which it is
// from its creation until the sandbox brings it up after the move) is
// dropped and counted.
class TapPort final : public QObject, private tunnel::FrameDevice
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TapPort)

public:
    struct Counters
    {
        quint64 framesIn = 0; // channel → TAP
        quint64 bytesIn = 0;
        quint64 framesOut = 0; // TAP → channel
        quint64 bytesOut = 0;
        quint64 droppedIn = 0; // the TAP could not take them now: down or full
        quint64 droppedOut = 0; // the channel was full
        // The TAP's kernel refused the frame itself (e.g. a vnet header it
        // will not take); the peer sent something no retry fixes.
        quint64 rejectedIn = 0;
        // What the TAP gave could not be a frame record (no vnet header, or
        // a size outside the record's bounds).
        quint64 invalidOut = 0;
    };

    // Takes the channel as it is (accepted); the port ends when it closes.
    TapPort(std::unique_ptr<device::l2::TapDevice> tap, tunnel::Channel *channel,
        QObject *parent = nullptr);
    // The TAP goes with the port: its descriptor closes and the kernel
    // removes the interface, wherever it was moved. A channel still open is
    // closed normally, so the hub's side does not wait on a stream nobody
    // feeds.
    ~TapPort() override;

    device::l2::TapDevice &tap() { return *m_tap; }
    const device::l2::TapDevice &tap() const { return *m_tap; }
    Counters counters() const;
    bool hasEnded() const { return !m_pump || m_pump->hasEnded(); }
    // The stream ended because a link on its way went; the run may get a
    // new one for the same TAP.
    bool endedByLostLink() const { return m_pump && m_pump->endedByLostLink(); }
    // The TAP, for a stream that follows; the port is spent and only waits
    // to be deleted. Only once the stream has ended.
    std::unique_ptr<device::l2::TapDevice> takeTap();
    // Ends the stream (normal close) and stops reading the TAP.
    void stop(const QString &reason) { m_pump->stop(reason); }

Q_SIGNALS:
    // Once, when the stream is over: the channel closed, the peer broke the
    // frame format, or the TAP is gone (its sandbox's namespace was
    // destroyed; the reason then starts with "device gone"). The port may
    // be deleted then; from a slot of this signal, with deleteLater().
    void ended(const QString &reason);

private:
    int frameDescriptor() const override { return m_tap->fd(); }
    Result<Outgoing> readFrame() override;
    Result<Delivery> writeFrame(const protocol::FrameRecord &record) override;
    QString describeFailure(const Error &error) const override;
    void logSummary(const QString &reason) const;

    std::unique_ptr<device::l2::TapDevice> m_tap;
    // Declared after m_tap so it stops watching before the descriptor closes.
    std::unique_ptr<tunnel::FramePump> m_pump;
    bool m_rejectionLogged = false;
};

} // namespace cloop::agent
