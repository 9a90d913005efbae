#pragma once

#include "common/protocol/logrecord.h"
#include "common/result.h"

#include <deque>

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace cloop::runs {

enum class OutputStream : quint8
{
    Stdout = 1,
    Stderr = 2,
};

// The agent's bounded, acknowledged buffer of one run's output.
//
// Appended bytes get continuous offsets in the run's combined output stream
// (stdout and stderr in arrival order). The hub acknowledges what it has
// stored; acknowledged bytes are released. Unacknowledged bytes beyond
// retainBytes are dropped, oldest first, and the dropped range is reported
// as a gap record, never as a silent hole.
//
// Layout of what is held, in stream offsets:
//
//   [acknowledgedOffset, dataStart)  dropped: one gap, since drops only ever
//                                    eat the oldest unacknowledged bytes
//   [dataStart, endOffset)           retained data records, contiguous
//
// Memory: retainedBytes() is the payload held. Unacknowledged retained data
// never exceeds retainBytes; the oldest record may still hold the head a
// drop or an acknowledgement cut off (released with the record), so
// retainedBytes() < retainBytes + kMaxLogPayload.
//
// Pure logic, no event loop; not thread-safe.
class OutputJournal
{
public:
    static constexpr qsizetype kDefaultRetainBytes = 1024 * 1024;

    explicit OutputJournal(qsizetype retainBytes = kDefaultRetainBytes);

    void append(OutputStream stream, QByteArrayView bytes);

    // Releases everything before `offset`. Offsets at or behind what was
    // acknowledged already are ignored; an offset past endOffset() is an error.
    Status acknowledge(quint64 offset);

    // The records to (re)send from `offset` to endOffset(): a gap first when
    // `offset` lies in the dropped range, a data record cut to start at
    // `offset` when it lies inside one. Empty at endOffset(). Offsets behind
    // acknowledgedOffset() (released) or past endOffset() are errors.
    Result<QList<protocol::LogRecord>> recordsFrom(quint64 offset) const;

    qsizetype retainBytes() const { return m_retainBytes; }
    qsizetype retainedBytes() const { return m_heldBytes; }
    // Bytes past the acknowledged offset, the dropped ones included.
    quint64 unacknowledgedBytes() const { return m_endOffset - m_acknowledged; }
    quint64 bytesAppended() const { return m_endOffset; }
    quint64 bytesDropped() const { return m_dropped; }
    quint64 endOffset() const { return m_endOffset; }
    quint64 acknowledgedOffset() const { return m_acknowledged; }
    // Where retained data begins; bytes in [acknowledgedOffset(), dataStart())
    // were dropped and not yet acknowledged.
    quint64 dataStart() const { return m_dataStart; }

private:
    struct Chunk
    {
        OutputStream stream;
        quint64 offset; // stream offset of payload[head]
        QByteArray payload; // at most kMaxLogPayload bytes
        qsizetype head = 0; // bytes at the front already dropped or acknowledged

        qsizetype liveSize() const { return payload.size() - head; }
        quint64 end() const { return offset + quint64(liveSize()); }
    };

    void store(OutputStream stream, QByteArrayView bytes);
    void releaseFront(quint64 upTo);
    void enforceLimit();

    std::deque<Chunk> m_chunks;
    qsizetype m_retainBytes;
    qsizetype m_heldBytes = 0;
    quint64 m_acknowledged = 0;
    quint64 m_dataStart = 0;
    quint64 m_endOffset = 0;
    quint64 m_dropped = 0;
};

} // namespace cloop::runs
