#include "common/protocol/logrecord.h"

#include <limits>
#include <utility>

#include <QtEndian>

namespace cloop::protocol {

namespace {

Error malformed(const QString &what)
{
    return Error::make(QStringLiteral("malformed_log_record"), what);
}

bool knownKind(quint8 kind)
{
    return kind >= static_cast<quint8>(LogRecordKind::Stdout)
        && kind <= static_cast<quint8>(LogRecordKind::Gap);
}

// The checks shared by the encoder's precondition and the decoder.
std::optional<Error> checkShape(LogRecordKind kind, quint64 offset, quint64 length)
{
    if (!knownKind(static_cast<quint8>(kind)))
        return malformed(
            QStringLiteral("unknown log record kind %1").arg(static_cast<quint8>(kind)));
    if (kind == LogRecordKind::Gap) {
        if (length == 0)
            return malformed(QStringLiteral("gap record at offset %1 loses no bytes").arg(offset));
        if (length > kMaxLogGapLength)
            return malformed(QStringLiteral("gap record of %1 bytes exceeds %2")
                                 .arg(length)
                                 .arg(kMaxLogGapLength));
    } else {
        if (length == 0)
            return malformed(QStringLiteral("empty %1 record at offset %2")
                                 .arg(logRecordKindName(kind))
                                 .arg(offset));
        if (length > quint64(kMaxLogPayload))
            return malformed(QStringLiteral("%1 record of %2 bytes exceeds the %3-byte limit")
                                 .arg(logRecordKindName(kind))
                                 .arg(length)
                                 .arg(kMaxLogPayload));
    }
    if (length > std::numeric_limits<quint64>::max() - offset)
        return malformed(QStringLiteral("%1 record at offset %2 of %3 bytes ends past 2^64")
                             .arg(logRecordKindName(kind))
                             .arg(offset)
                             .arg(length));
    return std::nullopt;
}

} // namespace

LogRecord LogRecord::data(LogRecordKind stream, quint64 offset, QByteArray bytes)
{
    Q_ASSERT(stream != LogRecordKind::Gap);
    LogRecord record;
    record.kind = stream;
    record.offset = offset;
    record.payload = std::move(bytes);
    return record;
}

LogRecord LogRecord::gap(quint64 offset, quint32 length)
{
    LogRecord record;
    record.kind = LogRecordKind::Gap;
    record.offset = offset;
    record.gapLength = length;
    return record;
}

LogRecord LogRecord::tailFrom(quint64 from) const
{
    Q_ASSERT(from >= offset && from < end());
    const quint64 skip = from - offset;
    if (isGap())
        return gap(from, static_cast<quint32>(gapLength - skip));
    return data(kind, from, payload.sliced(static_cast<qsizetype>(skip)));
}

void appendGapRecords(QList<LogRecord> &out, quint64 from, quint64 to)
{
    while (from < to) {
        const quint64 length = qMin(to - from, kMaxLogGapLength);
        out.append(LogRecord::gap(from, static_cast<quint32>(length)));
        from += length;
    }
}

Status validateLogRecord(const LogRecord &record)
{
    if (record.isGap() && !record.payload.isEmpty())
        return malformed(QStringLiteral("gap record carries a payload"));
    if (!record.isGap() && record.gapLength != 0)
        return malformed(QStringLiteral("data record carries a gap length"));
    if (auto error = checkShape(record.kind, record.offset, record.length()))
        return *error;
    return {};
}

void appendLogRecord(QByteArray &out, const LogRecord &record)
{
    Q_ASSERT(validateLogRecord(record).ok());
    char header[kLogRecordHeaderSize];
    header[0] = static_cast<char>(record.kind);
    qToBigEndian(record.offset, header + 1);
    qToBigEndian(static_cast<quint32>(record.length()), header + 9);
    out.append(header, kLogRecordHeaderSize);
    if (!record.isGap())
        out.append(record.payload);
}

QByteArray encodeLogRecord(const LogRecord &record)
{
    QByteArray out;
    out.reserve(kLogRecordHeaderSize + record.payload.size());
    appendLogRecord(out, record);
    return out;
}

QByteArray encodeLogRecords(const QList<LogRecord> &records)
{
    qsizetype size = 0;
    for (const LogRecord &record : records)
        size += kLogRecordHeaderSize + record.payload.size();
    QByteArray out;
    out.reserve(size);
    for (const LogRecord &record : records)
        appendLogRecord(out, record);
    return out;
}

QString logRecordKindName(LogRecordKind kind)
{
    switch (kind) {
    case LogRecordKind::Stdout:
        return QStringLiteral("stdout");
    case LogRecordKind::Stderr:
        return QStringLiteral("stderr");
    case LogRecordKind::Gap:
        return QStringLiteral("gap");
    }
    return QStringLiteral("unknown");
}

LogRecordDecoder::LogRecordDecoder(std::optional<quint64> firstOffset)
    : m_nextOffset(firstOffset)
{ }

Result<LogRecordDecoder::Header> LogRecordDecoder::checkHeader(QByteArrayView bytes) const
{
    Q_ASSERT(bytes.size() == kLogRecordHeaderSize);
    const auto kindByte = static_cast<quint8>(bytes[0]);
    if (!knownKind(kindByte))
        return malformed(QStringLiteral("unknown log record kind %1 at stream byte %2")
                             .arg(kindByte)
                             .arg(m_consumed));
    const Header header { static_cast<LogRecordKind>(kindByte),
        qFromBigEndian<quint64>(bytes.data() + 1), qFromBigEndian<quint32>(bytes.data() + 9) };
    if (auto error = checkShape(header.kind, header.offset, header.length))
        return *error;
    if (m_nextOffset && header.offset != *m_nextOffset)
        return malformed(QStringLiteral("%1 record at offset %2 does not continue the log, "
                                        "which ends at offset %3")
                             .arg(logRecordKindName(header.kind))
                             .arg(header.offset)
                             .arg(*m_nextOffset));
    return header;
}

void LogRecordDecoder::complete(const Header &header, QByteArrayView payload)
{
    if (header.kind == LogRecordKind::Gap)
        m_records.append(LogRecord::gap(header.offset, header.length));
    else
        m_records.append(LogRecord::data(header.kind, header.offset, payload.toByteArray()));
    m_nextOffset = header.offset + header.length;
    m_consumed += quint64(kLogRecordHeaderSize + payload.size());
}

Status LogRecordDecoder::fail(Error error)
{
    m_partial.clear();
    m_partialHeader.reset();
    m_error = std::move(error);
    return *m_error;
}

Status LogRecordDecoder::feed(QByteArrayView chunk)
{
    if (m_error)
        return *m_error;
    while (!chunk.isEmpty()) {
        // Fast path: whole records straight out of the chunk, no copy.
        if (m_partial.isEmpty() && chunk.size() >= kLogRecordHeaderSize) {
            auto header = checkHeader(chunk.first(kLogRecordHeaderSize));
            if (!header)
                return fail(header.error());
            const qsizetype total = kLogRecordHeaderSize + header->payloadSize();
            if (chunk.size() >= total) {
                complete(*header, chunk.sliced(kLogRecordHeaderSize, header->payloadSize()));
                chunk = chunk.sliced(total);
                continue;
            }
        }
        // Slow path: gather an incomplete record, header first.
        if (!m_partialHeader) {
            const qsizetype take = qMin(kLogRecordHeaderSize - m_partial.size(), chunk.size());
            m_partial.append(chunk.first(take));
            chunk = chunk.sliced(take);
            if (m_partial.size() < kLogRecordHeaderSize)
                break;
            auto header = checkHeader(m_partial);
            if (!header)
                return fail(header.error());
            m_partialHeader = *header;
            m_partial.reserve(kLogRecordHeaderSize + header->payloadSize());
        }
        const qsizetype total = kLogRecordHeaderSize + m_partialHeader->payloadSize();
        const qsizetype take = qMin(total - m_partial.size(), chunk.size());
        m_partial.append(chunk.first(take));
        chunk = chunk.sliced(take);
        if (m_partial.size() == total) {
            complete(*m_partialHeader, QByteArrayView(m_partial).sliced(kLogRecordHeaderSize));
            m_partial.clear();
            m_partialHeader.reset();
        }
    }
    return {};
}

QList<LogRecord> LogRecordDecoder::takeRecords()
{
    return std::exchange(m_records, {});
}

} // namespace cloop::protocol
