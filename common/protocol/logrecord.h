#pragma once

#include "common/result.h"

#include <optional>

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace cloop::protocol {

// A run's output as it travels on a tunnel channel and as the hub stores it:
// a sequence of records
//
//   u8  kind     (LogRecordKind)
//   u64 offset   big-endian: where this record's first byte sits in the run's
//                combined output stream (stdout and stderr in arrival order)
//   u32 length   big-endian: data: the payload size, 1 .. kMaxLogPayload;
//                gap: how many bytes were lost, >= 1, and no payload follows
//   ... payload  data records only
//
// Records are contiguous: each one starts where the previous one ended, gaps
// included, so a reader always knows exactly which bytes it has and which
// were lost. The first record may start anywhere (a resumed stream).
enum class LogRecordKind : quint8
{
    Stdout = 1,
    Stderr = 2,
    Gap = 3,
};

inline constexpr qsizetype kLogRecordHeaderSize = 13;
inline constexpr qsizetype kMaxLogPayload = 64 * 1024;
inline constexpr quint64 kMaxLogGapLength = 0xffffffffu;

struct LogRecord
{
    LogRecordKind kind = LogRecordKind::Stdout;
    quint64 offset = 0;
    quint32 gapLength = 0; // Gap only
    QByteArray payload; // Stdout and Stderr only

    static LogRecord data(LogRecordKind stream, quint64 offset, QByteArray bytes);
    static LogRecord gap(quint64 offset, quint32 length);

    bool isGap() const { return kind == LogRecordKind::Gap; }
    // Bytes of the output stream the record covers (lost ones for a gap).
    quint64 length() const { return isGap() ? gapLength : quint64(payload.size()); }
    quint64 end() const { return offset + length(); }
    // The part of the record from `from` on; `from` lies in [offset, end()).
    LogRecord tailFrom(quint64 from) const;

    friend bool operator==(const LogRecord &, const LogRecord &) = default;
};

// Appends gap records covering [from, to), each at most kMaxLogGapLength.
void appendGapRecords(QList<LogRecord> &out, quint64 from, quint64 to);

// Whether `record` may be encoded: a known kind, a length within the limits
// above and an end that fits in 64 bits.
Status validateLogRecord(const LogRecord &record);

// Precondition: validateLogRecord(record) holds (asserted in debug builds).
QByteArray encodeLogRecord(const LogRecord &record);
void appendLogRecord(QByteArray &out, const LogRecord &record);
QByteArray encodeLogRecords(const QList<LogRecord> &records);

QString logRecordKindName(LogRecordKind kind);

// Incremental decoder: feed the bytes as they arrive, in chunks of any size,
// and take the complete records. The first malformed header fails the
// decoder for good (every later feed() returns the same error); records
// completed before the fault stay available from takeRecords().
//
// Memory: besides the decoded records, at most one incomplete record
// (header + 64 KiB) is buffered; a header is checked as soon as it is
// complete, so a bad length never makes the decoder wait for its payload.
class LogRecordDecoder
{
public:
    // With `firstOffset`, the first record must start there (a reader that
    // knows where its stored log ends); without, it may start anywhere.
    explicit LogRecordDecoder(std::optional<quint64> firstOffset = std::nullopt);

    Status feed(QByteArrayView chunk);
    QList<LogRecord> takeRecords();
    bool hasRecords() const { return !m_records.isEmpty(); }

    bool failed() const { return m_error.has_value(); }
    // Only valid when failed().
    const Error &error() const { return *m_error; }

    // Bytes of complete records decoded so far (taken or not).
    quint64 consumedBytes() const { return m_consumed; }
    // Bytes of an incomplete record waiting for the rest.
    qsizetype bufferedBytes() const { return m_partial.size(); }
    // Where the next record must start; empty before the first record
    // unless the constructor fixed it.
    std::optional<quint64> nextOffset() const { return m_nextOffset; }

private:
    struct Header
    {
        LogRecordKind kind;
        quint64 offset;
        quint32 length;
        qsizetype payloadSize() const { return kind == LogRecordKind::Gap ? 0 : qsizetype(length); }
    };

    Result<Header> checkHeader(QByteArrayView bytes) const;
    void complete(const Header &header, QByteArrayView payload);
    Status fail(Error error);

    QList<LogRecord> m_records;
    QByteArray m_partial; // an incomplete record: header, then payload
    std::optional<Header> m_partialHeader; // set once m_partial holds a whole checked header
    std::optional<quint64> m_nextOffset;
    std::optional<Error> m_error;
    quint64 m_consumed = 0;
};

} // namespace cloop::protocol
