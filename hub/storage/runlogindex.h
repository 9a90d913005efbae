#pragma once

#include "common/result.h"

#include <QList>
#include <QString>

namespace cloop::hub {

// The sparse index of one run log segment, a file beside it:
//
//   u64 offset    big-endian: the stream offset a record starts at
//   u64 position  big-endian: where that record starts in the segment file
//
// Entries ascend in both. The segment's first record is the implicit entry
// {the segment's first offset, 0}; after it there is an entry at least every
// kStride bytes of the segment, so a read from any offset starts at most one
// stride and one record before it. Entries are appended only after the
// records they point at are written: a crash leaves the index short, never
// pointing past the data.
class RunLogIndex
{
public:
    struct Entry
    {
        quint64 offset = 0;
        qint64 position = 0;

        friend bool operator==(const Entry &, const Entry &) = default;
    };

    static constexpr qint64 kStride = 16 * 1024;
    static constexpr qint64 kEntrySize = 16;

    explicit RunLogIndex(QString path)
        : m_path(std::move(path))
    { }

    const QString &path() const { return m_path; }

    // Where to start reading for `offset`: the last entry at or before it
    // among those pointing below `limit` (the segment's size), or `first`.
    // A binary search over the file: it reads a few entries, never all.
    Result<Entry> seekPoint(quint64 offset, qint64 limit, Entry first) const;
    Status append(const QList<Entry> &entries);
    // Forgets the entries at or past `limit` (the segment was cut there).
    Status cut(qint64 limit);

private:
    QString m_path;
};

} // namespace cloop::hub
