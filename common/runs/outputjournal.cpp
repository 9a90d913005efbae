#include "common/runs/outputjournal.h"

#include <algorithm>

namespace cloop::runs {

using protocol::kMaxLogPayload;
using protocol::LogRecord;
using protocol::LogRecordKind;

namespace {

LogRecordKind recordKind(OutputStream stream)
{
    return stream == OutputStream::Stderr ? LogRecordKind::Stderr : LogRecordKind::Stdout;
}

Error outOfRange(const QString &what)
{
    return Error::make(QStringLiteral("log_offset_out_of_range"), what);
}

} // namespace

OutputJournal::OutputJournal(qsizetype retainBytes)
    : m_retainBytes(qMax<qsizetype>(0, retainBytes))
{ }

void OutputJournal::append(OutputStream stream, QByteArrayView bytes)
{
    if (bytes.isEmpty())
        return;
    if (bytes.size() >= m_retainBytes) {
        // Everything held now and the head of this write would be dropped at
        // once: skip them without copying.
        const auto skipped = quint64(bytes.size() - m_retainBytes);
        m_dropped += (m_endOffset - m_dataStart) + skipped;
        releaseFront(m_endOffset);
        m_endOffset += skipped;
        m_dataStart = m_endOffset;
        bytes = bytes.sliced(qsizetype(skipped));
    }
    store(stream, bytes);
    enforceLimit();
}

void OutputJournal::store(OutputStream stream, QByteArrayView bytes)
{
    // Fill the last record first when it is of the same stream, so small
    // writes do not cost a record each.
    if (!m_chunks.empty() && m_chunks.back().stream == stream
        && m_chunks.back().payload.size() < kMaxLogPayload && !bytes.isEmpty()) {
        Chunk &last = m_chunks.back();
        const qsizetype take = qMin(kMaxLogPayload - last.payload.size(), bytes.size());
        last.payload.append(bytes.first(take));
        bytes = bytes.sliced(take);
        m_heldBytes += take;
        m_endOffset += quint64(take);
    }
    while (!bytes.isEmpty()) {
        const qsizetype take = qMin(kMaxLogPayload, bytes.size());
        m_chunks.push_back(Chunk { stream, m_endOffset, bytes.first(take).toByteArray() });
        bytes = bytes.sliced(take);
        m_heldBytes += take;
        m_endOffset += quint64(take);
    }
}

// Drops the retained data before `upTo` (<= endOffset); data start moves there.
void OutputJournal::releaseFront(quint64 upTo)
{
    while (!m_chunks.empty() && m_chunks.front().offset < upTo) {
        Chunk &front = m_chunks.front();
        if (front.end() <= upTo) {
            m_heldBytes -= front.payload.size();
            m_chunks.pop_front();
        } else {
            const auto cut = qsizetype(upTo - front.offset);
            front.head += cut;
            front.offset = upTo;
        }
    }
    m_dataStart = qMax(m_dataStart, upTo);
}

void OutputJournal::enforceLimit()
{
    const quint64 live = m_endOffset - m_dataStart;
    if (live <= quint64(m_retainBytes))
        return;
    const quint64 newStart = m_endOffset - quint64(m_retainBytes);
    m_dropped += newStart - m_dataStart;
    releaseFront(newStart);
}

Status OutputJournal::acknowledge(quint64 offset)
{
    if (offset > m_endOffset)
        return outOfRange(QStringLiteral("acknowledged offset %1 is past the end of the output, %2")
                              .arg(offset)
                              .arg(m_endOffset));
    if (offset <= m_acknowledged)
        return {};
    m_acknowledged = offset;
    if (offset > m_dataStart)
        releaseFront(offset);
    return {};
}

Result<QList<LogRecord>> OutputJournal::recordsFrom(quint64 offset) const
{
    if (offset < m_acknowledged)
        return outOfRange(QStringLiteral("offset %1 was acknowledged and released already "
                                         "(output is held from %2)")
                              .arg(offset)
                              .arg(m_acknowledged));
    if (offset > m_endOffset)
        return outOfRange(QStringLiteral("offset %1 is past the end of the output, %2")
                              .arg(offset)
                              .arg(m_endOffset));
    QList<LogRecord> records;
    // The dropped range, in gap records of at most kMaxLogGapLength bytes.
    protocol::appendGapRecords(records, offset, m_dataStart);
    offset = qMax(offset, m_dataStart);
    // First chunk that ends after `offset`.
    auto it = std::upper_bound(m_chunks.begin(), m_chunks.end(), offset,
        [](quint64 value, const Chunk &chunk) { return value < chunk.end(); });
    records.reserve(records.size() + qsizetype(m_chunks.end() - it));
    for (; it != m_chunks.end(); ++it) {
        const auto skip = qsizetype(offset > it->offset ? offset - it->offset : 0);
        const qsizetype from = it->head + skip;
        // Whole payloads are shared, not copied.
        records.append(LogRecord::data(recordKind(it->stream), it->offset + quint64(skip),
            from == 0 ? it->payload : it->payload.sliced(from)));
    }
    return records;
}

} // namespace cloop::runs
