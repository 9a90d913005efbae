#include "common/tunnel/framerecordbatch.h"

#include "common/protocol/framerecord.h"
#include "common/tunnel/channelmultiplexer.h"

#include <algorithm>

namespace cloop::tunnel {

FrameRecordBatch::FrameRecordBatch()
{
    m_records.reserve(std::max(protocol::kMaxDataPayload, protocol::kMaxFrameRecordBytes));
}

bool FrameRecordBatch::hasRoomFor(qsizetype frameBytes) const
{
    const qsizetype record
        = protocol::kFrameRecordLengthBytes + device::l2::VnetHeader::kSize + frameBytes;
    return isEmpty() || m_records.size() + record <= protocol::kMaxDataPayload;
}

void FrameRecordBatch::append(const device::l2::VnetHeader &header, QByteArrayView frame)
{
    protocol::appendFrameRecord(m_records, header, frame);
    ++m_frames;
    m_bytes += static_cast<quint64>(frame.size());
}

bool FrameRecordBatch::flush(Channel &channel)
{
    const bool taken = m_frames == 0 || channel.write(m_records);
    if (taken) {
        m_sentFrames += m_frames;
        m_sentBytes += m_bytes;
    } else {
        m_droppedFrames += m_frames;
    }
    // resize(0) rather than clear(): the reserved capacity stays.
    m_records.resize(0);
    m_frames = 0;
    m_bytes = 0;
    return taken;
}

} // namespace cloop::tunnel
