#pragma once

#include "common/device/l2/ethernetframe.h"
#include "common/protocol/channelframe.h"
#include "common/protocol/framerecord.h"
#include "common/result.h"
#include "common/tunnel/framerecordbatch.h"

#include <QObject>
#include <QPointer>
#include <QSocketNotifier>

#include <memory>
#include <optional>

namespace cloop::tunnel {

class Channel;

// What gives and takes a segment's Ethernet frames at one end: the
// forwarder's packet socket, the agent's TAP. Each says what a frame needs
// on its way in and out; the pump does the rest the same way at both ends.
class FrameDevice
{
public:
    virtual ~FrameDevice() = default;

    // Polled for reading.
    virtual int frameDescriptor() const = 0;

    struct Outgoing
    {
        enum class Kind
        {
            Frame, // goes up the channel
            Nothing, // nothing more to read now
            Unfit, // read, but not fit to go (counted, skipped)
        };
        Kind kind = Kind::Nothing;
        device::l2::VnetHeader header;
        // The frame is bytes[offset…], so a device hands over what it read
        // without copying it; protocol::validateFrameRecord holds for it.
        QByteArray bytes;
        qsizetype offset = 0;

        QByteArrayView frame() const { return QByteArrayView(bytes).sliced(offset); }
    };
    // The next frame for the channel; an error when the device failed.
    virtual Result<Outgoing> readFrame() = 0;

    enum class Delivery
    {
        Written,
        Dropped, // the device could not take it now (full, down): Ethernet may drop
        Refused, // the device refused this frame; the next may be fine
    };
    // A frame from the channel; an error when the device failed.
    virtual Result<Delivery> writeFrame(const protocol::FrameRecord &record) = 0;

    // How the stream's end reads when the device failed this way.
    virtual QString describeFailure(const Error &error) const = 0;
};

// A segment's frames between a device and a device channel, both ways, as
// frame records. Ethernet may drop, and this does rather than wait: while
// the channel has no room the device is not read (its own queue holds, then
// drops), and a frame the device cannot take now is dropped and counted.
// Memory stays bounded by the channel's queue and one batch.
class FramePump final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FramePump)

public:
    struct Counters
    {
        quint64 framesToChannel = 0;
        quint64 bytesToChannel = 0;
        quint64 droppedToChannel = 0; // the channel was full
        quint64 unfitToChannel = 0; // read, but not fit to go
        quint64 framesFromChannel = 0;
        quint64 bytesFromChannel = 0;
        quint64 droppedFromChannel = 0; // the device could not take them now
        quint64 refusedFromChannel = 0; // the device refused them
        qsizetype largestToChannel = 0;
        qsizetype largestFromChannel = 0;
    };

    // Takes the channel as it is (accepted); the device must outlive the
    // pump. Bytes that arrived before the pump existed are read too.
    FramePump(FrameDevice &device, Channel *channel, QObject *parent = nullptr);
    // A channel still open is closed normally: the peer does not wait on a
    // stream nobody feeds.
    ~FramePump() override;

    Counters counters() const;
    bool hasEnded() const { return m_ended; }
    // The stream ended because a link on its way went (the channel closed
    // with ConnectionLost): the run may still hold the device, and a new
    // stream for it may follow.
    bool endedByLostLink() const { return m_linkLost; }
    // Ends the stream (normal close) and stops reading the device.
    void stop(const QString &reason);

Q_SIGNALS:
    // Once, when the stream is over: the channel closed, the peer broke the
    // frame format, or the device failed. The peer has heard by then;
    // receivers may delete the pump's owner (with deleteLater()).
    void ended(const QString &reason);

private:
    void onDeviceReadable();
    void onChannelReadable();
    // `closeWith`: how the peer is told, when the pump ends the stream.
    void end(const QString &reason, std::optional<protocol::CloseCode> closeWith = std::nullopt);

    FrameDevice &m_device;
    QPointer<Channel> m_channel;
    QSocketNotifier m_readable;
    protocol::FrameRecordDecoder m_decoder;
    FrameRecordBatch m_batch;
    Counters m_counters;
    bool m_ended = false;
    bool m_linkLost = false;
};

} // namespace cloop::tunnel
