#pragma once

#include "common/device/l2/packetsocket.h"
#include "common/protocol/framerecord.h"
#include "common/tunnel/framerecordbatch.h"

#include <QObject>
#include <QPointer>
#include <QSocketNotifier>

#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::forward {

// The forwarder's half of a lent segment. Every frame on the interface goes
// up the channel as a frame record: a VLAN tag the kernel moved aside put
// back, a checksum left to offload finished, a GRO/TSO frame whole with its
// vnet header for the far kernel to segment. Frames from the channel go
// out on the wire. Ethernet may drop, and this does rather than wait: when
// the channel has no room the socket is not read, so the kernel drops (and
// counts) at its buffer; a frame the wire cannot take now is dropped and
// counted. Memory stays bounded by the channel's queue and one batch.
class SegmentPort final : public QObject
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
    void stop(const QString &reason);

Q_SIGNALS:
    // Once, when the stream is over: the channel closed, or the device or
    // the peer failed. The port may be deleted then.
    void ended(const QString &reason);

private:
    void onInterfaceReadable();
    void onChannelReadable();
    // The device failed: the peer is told why.
    void fail(const QString &reason);
    void end(const QString &reason);

    std::unique_ptr<device::l2::PacketSocket> m_socket;
    QPointer<tunnel::Channel> m_channel;
    std::unique_ptr<QSocketNotifier> m_readable;
    protocol::FrameRecordDecoder m_decoder;
    tunnel::FrameRecordBatch m_batch;
    Counters m_counters;
    bool m_ended = false;
};

} // namespace cloop::forward
