#pragma once

// A test workload's output as run log records, and a whole log read back
// page by page: what every run log store test writes and checks.

#include "hub/storage/runlogstore.h"

#include <QDebug>

namespace cloop::testing {

inline constexpr qint64 kKiB = 1024;

// The byte a test workload wrote at stream offset `at`: any stored byte
// tells where in the output it came from.
inline char byteAt(quint64 at)
{
    return static_cast<char>((at * 131 + (at >> 9)) & 0xff);
}

// `count` data records of `size` bytes from `from`, stdout and stderr taking turns.
inline QList<protocol::LogRecord> output(quint64 from, int count, qsizetype size)
{
    QList<protocol::LogRecord> records;
    for (int i = 0; i < count; ++i) {
        QByteArray payload(size, Qt::Uninitialized);
        for (qsizetype j = 0; j < size; ++j)
            payload[j] = byteAt(from + quint64(j));
        records.append(protocol::LogRecord::data(
            i % 2 ? protocol::LogRecordKind::Stderr : protocol::LogRecordKind::Stdout, from,
            payload));
        from += quint64(size);
    }
    return records;
}

inline bool holdsOutputFrom(const QByteArray &data, quint64 from)
{
    for (qsizetype i = 0; i < data.size(); ++i) {
        if (data.at(i) != byteAt(from + quint64(i)))
            return false;
    }
    return true;
}

// A whole log read page by page from `from`: its data, its gaps as
// [offset, length], and whether every record continued the one before.
struct WholeLog
{
    QByteArray data;
    quint64 dataStart = 0;
    QList<std::pair<quint64, quint64>> gaps;
    quint64 end = 0;
    quint64 trimmedBefore = 0;
    bool contiguous = true;
};

inline WholeLog readAll(
    const hub::RunLogStore &store, qint64 runId, quint64 from = 0, qsizetype pageBytes = 100 * kKiB)
{
    WholeLog log;
    log.end = from;
    for (;;) {
        auto page = store.read(runId, log.end, pageBytes);
        if (!page) {
            qWarning() << page.error().message;
            log.contiguous = false;
            return log;
        }
        if (page->records.isEmpty())
            return log;
        log.trimmedBefore = page->trimmedBefore;
        for (const protocol::LogRecord &record : std::as_const(page->records)) {
            log.contiguous &= record.offset == log.end;
            if (record.isGap()) {
                log.gaps.append({ record.offset, record.length() });
            } else {
                if (log.data.isEmpty())
                    log.dataStart = record.offset;
                log.data.append(record.payload);
            }
            log.end = record.end();
        }
    }
}

} // namespace cloop::testing
