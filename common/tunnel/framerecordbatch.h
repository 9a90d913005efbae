#pragma once

#include "common/device/l2/ethernetframe.h"

#include <QByteArray>
#include <QByteArrayView>

namespace cloop::tunnel {

class Channel;

// Ethernet frames on their way into a device channel, as frame records in
// batches of at most one DATA frame's payload (a single larger record goes
// alone), so a batch crosses the tunnel as one frame and the relay hands it
// on without cutting or copying it. A batch is written all or nothing, so a channel
// without room drops whole records (and the batch says how many) and the
// stream never carries half of one. Both ends of a segment use it: the
// forwarder's packet socket and the agent's TAP.
class FrameRecordBatch
{
public:
    FrameRecordBatch();

    // Whether a frame of this size may join the batch without taking it
    // past one DATA frame; flush first when not. An empty batch takes any.
    bool hasRoomFor(qsizetype frameBytes) const;
    // Precondition: protocol::validateFrameRecord(frame) holds.
    void append(const device::l2::VnetHeader &header, QByteArrayView frame);
    bool isEmpty() const { return m_frames == 0; }

    // Hands the batch to `channel` and starts a new one, whatever the
    // answer; false when the channel refused it (its frames were dropped).
    bool flush(Channel &channel);

    // Since construction: frames (and their bytes, without record headers)
    // the channel took, and frames dropped because it had no room.
    quint64 sentFrames() const { return m_sentFrames; }
    quint64 sentBytes() const { return m_sentBytes; }
    quint64 droppedFrames() const { return m_droppedFrames; }

private:
    QByteArray m_records;
    quint64 m_frames = 0;
    quint64 m_bytes = 0;
    quint64 m_sentFrames = 0;
    quint64 m_sentBytes = 0;
    quint64 m_droppedFrames = 0;
};

} // namespace cloop::tunnel
