#pragma once

#include "common/device/l2/packetsocket.h"
#include "common/tunnel/framepump.h"

#include <QObject>

#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::forward {

// The forwarder's half of a lent segment, through the FramePump the
// agent's TapPort uses too. Every frame on the interface goes up the
// channel as a frame record: a VLAN tag the kernel moved aside put back, a
// checksum left to offload finished, a GRO/TSO frame whole with its vnet
// header for the far kernel to segment. Frames from the channel go out on
// the wire; one the wire cannot take now is dropped and counted, and while
// the channel has no room the socket is not read, so the kernel drops (and
// counts) at its buffer.
class SegmentPort final : public QObject, private tunnel::FrameDevice
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SegmentPort)

public:
    struct Counters
    {
        quint64 framesUp = 0; // interface → channel
        quint64 bytesUp = 0;
        quint64 framesDown = 0; // channel → interface
        quint64 bytesDown = 0;
        quint64 droppedUp = 0; // the channel was full, or a frame could not be made whole
        quint64 droppedDown = 0; // the interface could not take them
        quint64 kernelDrops = 0; // the socket buffer overflowed while the channel was full
        quint64 truncated = 0; // larger than any record
        // The largest frames each way: above the MTU, GRO/TSO frames went whole.
        qsizetype largestUp = 0;
        qsizetype largestDown = 0;
    };

    // Takes the channel as it is (accepted); the port ends when it closes.
    SegmentPort(std::unique_ptr<device::l2::PacketSocket> socket, tunnel::Channel *channel,
        QObject *parent = nullptr);
    ~SegmentPort() override;

    Counters counters() const;
    // Ends the stream (normal close) and stops reading the interface.
    void stop(const QString &reason) { m_pump->stop(reason); }

Q_SIGNALS:
    // Once, when the stream is over: the channel closed, or the device or
    // the peer failed. The port may be deleted then (with deleteLater()).
    void ended(const QString &reason);

private:
    int frameDescriptor() const override { return m_socket->fd(); }
    Result<Outgoing> readFrame() override;
    Result<Delivery> writeFrame(const protocol::FrameRecord &record) override;
    QString describeFailure(const Error &error) const override;
    void logSummary(const QString &reason) const;

    std::unique_ptr<device::l2::PacketSocket> m_socket;
    // Declared after m_socket so it stops watching before the socket closes.
    std::unique_ptr<tunnel::FramePump> m_pump;
};

} // namespace cloop::forward
