#include "hub/storage/runlogindex.h"

#include <QFile>
#include <QtEndian>

namespace cloop::hub {

namespace {

Error storageError(const QFile &file, const char *what)
{
    return Error::make(ErrorCode::StorageError,
        QStringLiteral("cannot %1 %2: %3")
            .arg(QLatin1String(what), file.fileName(), file.errorString()));
}

std::optional<RunLogIndex::Entry> readEntry(QFile &file, qint64 index)
{
    char bytes[RunLogIndex::kEntrySize];
    if (!file.seek(index * RunLogIndex::kEntrySize)
        || file.read(bytes, sizeof bytes) != qint64(sizeof bytes))
        return std::nullopt;
    return RunLogIndex::Entry { qFromBigEndian<quint64>(bytes),
        static_cast<qint64>(qFromBigEndian<quint64>(bytes + 8)) };
}

} // namespace

Result<RunLogIndex::Entry> RunLogIndex::seekPoint(quint64 offset, qint64 limit, Entry first) const
{
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly))
        return first; // no index (yet): read the segment from its start
    // The entries that qualify form a prefix: find its last one.
    qint64 low = 0;
    qint64 high = file.size() / kEntrySize; // a torn last entry does not count
    Entry found = first;
    while (low < high) {
        const qint64 middle = low + (high - low) / 2;
        const auto entry = readEntry(file, middle);
        if (!entry)
            return storageError(file, "read");
        if (entry->offset <= offset && entry->position < limit) {
            found = *entry;
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return found;
}

Status RunLogIndex::append(const QList<Entry> &entries)
{
    if (entries.isEmpty())
        return {};
    QByteArray bytes(entries.size() * kEntrySize, Qt::Uninitialized);
    char *at = bytes.data();
    for (const Entry &entry : entries) {
        qToBigEndian(entry.offset, at);
        qToBigEndian(static_cast<quint64>(entry.position), at + 8);
        at += kEntrySize;
    }
    QFile file(m_path);
    if (!file.open(QIODevice::Append))
        return storageError(file, "write");
    // A torn entry a crash left behind would shift every later one.
    if (const qint64 torn = file.size() % kEntrySize; torn != 0 && !file.resize(file.size() - torn))
        return storageError(file, "repair");
    if (file.write(bytes) != bytes.size() || !file.flush())
        return storageError(file, "write");
    return {};
}

Status RunLogIndex::cut(qint64 limit)
{
    QFile file(m_path);
    if (!file.exists())
        return {};
    if (!file.open(QIODevice::ReadWrite))
        return storageError(file, "repair");
    qint64 keep = file.size() / kEntrySize;
    while (keep > 0) {
        const auto entry = readEntry(file, keep - 1);
        if (!entry)
            return storageError(file, "read");
        if (entry->position < limit)
            break;
        --keep;
    }
    if (!file.resize(keep * kEntrySize))
        return storageError(file, "repair");
    return {};
}

} // namespace cloop::hub
