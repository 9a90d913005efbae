#include "hub/storage/filerunlogstore.h"

#include "common/logging.h"
#include "common/util/bytesize.h"
#include "hub/storage/database.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QtEndian>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace cloop::hub {

using protocol::kLogRecordHeaderSize;
using protocol::LogRecord;
using protocol::LogRecordDecoder;

namespace {

// Reads go in chunks of this size: what a read takes from a file beyond the
// records it returns is at most one index stride, one record and one chunk.
constexpr qint64 kReadChunk = 64 * 1024;

Error storageError(const QString &what)
{
    return Error::make(ErrorCode::StorageError, what);
}

Error fileError(const QFile &file, const char *what)
{
    const QString message = QStringLiteral("cannot %1 %2: %3")
                                .arg(QLatin1String(what), file.fileName(), file.errorString());
    // QFile words a failed system call as the C library does.
    if (file.errorString() == qt_error_string(ENOSPC))
        return Error::make(QString(kStorageFull), message);
    return storageError(message);
}

struct Scan
{
    qint64 end = 0; // the position after the last record handed over
    std::optional<Error> fault;
};

// Reads `file` from `position` up to `limit`, feeding `decoder`, and hands
// each complete record and its position to `visit` until it returns false.
// A malformed record stops the scan with its error; an incomplete one at the
// end is left out.
Scan scanRecords(QFile &file, qint64 position, qint64 limit, LogRecordDecoder &decoder,
    const std::function<bool(const LogRecord &, qint64)> &visit, quint64 &bytesRead)
{
    Scan scan { position, std::nullopt };
    if (!file.seek(position)) {
        scan.fault = fileError(file, "seek in");
        return scan;
    }
    qint64 next = position;
    while (position < limit) {
        const QByteArray chunk = file.read(qMin(kReadChunk, limit - position));
        if (chunk.isEmpty())
            break;
        position += chunk.size();
        bytesRead += quint64(chunk.size());
        const Status fed = decoder.feed(chunk);
        for (const LogRecord &record : decoder.takeRecords()) {
            const qint64 at = next;
            next += kLogRecordHeaderSize + record.payload.size();
            scan.end = next;
            if (!visit(record, at))
                return scan;
        }
        if (!fed) {
            scan.fault = fed.error();
            return scan;
        }
    }
    return scan;
}

} // namespace

FileRunLogStore::FileRunLogStore(QString directory, RunLogLimits limits, ActiveRuns activeRuns)
    : m_directory(std::move(directory))
    , m_limits(limits)
    , m_activeRuns(std::move(activeRuns))
    , m_budgetLog(lcHubDb(), QStringLiteral("notes of run log trims"), 1, std::chrono::minutes(1))
{ }

Result<std::unique_ptr<FileRunLogStore>> FileRunLogStore::open(
    QString directory, RunLogLimits limits, ActiveRuns activeRuns)
{
    if (Status valid = limits.check(); !valid)
        return valid.error();
    if (!QDir().mkpath(directory))
        return storageError(QStringLiteral("cannot create %1").arg(directory));
    std::unique_ptr<FileRunLogStore> store(
        new FileRunLogStore(std::move(directory), limits, std::move(activeRuns)));
    if (Status scanned = store->scan(); !scanned)
        return scanned.error();
    // Limits lowered since the last start apply at once.
    for (auto &[runId, log] : store->m_runs)
        store->enforceCap(runId, log);
    store->enforceBudget();
    return store;
}

QString FileRunLogStore::pathOf(qint64 runId, quint64 first, QLatin1StringView suffix) const
{
    return QStringLiteral("%1/%2.%3.%4").arg(m_directory).arg(runId).arg(first).arg(suffix);
}

RunLogIndex FileRunLogStore::indexOf(qint64 runId, const Segment &segment) const
{
    return RunLogIndex(pathOf(runId, segment.first, QLatin1StringView("idx")));
}

void FileRunLogStore::account(RunLog &log, qint64 delta)
{
    log.diskBytes += delta;
    m_diskBytes += delta;
}

qint64 FileRunLogStore::diskBytesOf(qint64 runId) const
{
    const auto found = m_runs.find(runId);
    return found == m_runs.end() ? 0 : found->second.diskBytes;
}

QList<qint64> FileRunLogStore::runIds() const
{
    QList<qint64> ids;
    ids.reserve(qsizetype(m_runs.size()));
    for (const auto &[runId, log] : m_runs) {
        if (!log.segments.empty())
            ids.append(runId);
    }
    return ids;
}

Status FileRunLogStore::scan()
{
    static const QRegularExpression segmentName(
        QStringLiteral("\\A(\\d+)\\.(\\d+)\\.(log|idx)\\z"));
    static const QRegularExpression olderName(QStringLiteral("\\A(\\d+)\\.log\\z"));
    const QFileInfoList files
        = QDir(m_directory)
              .entryInfoList(
                  { QStringLiteral("*.log"), QStringLiteral("*.idx") }, QDir::Files, QDir::Name);
    QList<std::pair<qint64, QString>> older;
    QList<QFileInfo> indexes;
    for (const QFileInfo &file : files) {
        if (const auto match = olderName.match(file.fileName()); match.hasMatch()) {
            older.append({ match.captured(1).toLongLong(), file.filePath() });
            continue;
        }
        const auto match = segmentName.match(file.fileName());
        if (!match.hasMatch())
            continue;
        if (match.captured(3) == QLatin1String("idx")) {
            indexes.append(file);
            continue;
        }
        RunLog &log = m_runs[match.captured(1).toLongLong()];
        log.segments.push_back(Segment { match.captured(2).toULongLong(), file.size(), 0 });
        account(log, file.size());
    }
    for (auto &[runId, log] : m_runs) {
        std::sort(log.segments.begin(), log.segments.end(),
            [](const Segment &a, const Segment &b) { return a.first < b.first; });
    }
    for (const QFileInfo &file : std::as_const(indexes)) {
        const auto match = segmentName.match(file.fileName());
        const auto run = m_runs.find(match.captured(1).toLongLong());
        Segment *segment = nullptr;
        if (run != m_runs.end()) {
            for (Segment &candidate : run->second.segments) {
                if (candidate.first == match.captured(2).toULongLong())
                    segment = &candidate;
            }
        }
        if (!segment) {
            QFile::remove(file.filePath()); // its segment went while the hub was down
            continue;
        }
        segment->indexSize = file.size();
        account(run->second, file.size());
    }
    for (const auto &[runId, path] : std::as_const(older)) {
        if (Status adopted = adoptOlderLog(runId, path); !adopted)
            return adopted.error();
    }
    return {};
}

// A log written by a hub from before segments: one file from the run's first
// record. It becomes the run's only segment and is indexed once, reading it
// through; from then on it is trimmed like any other.
Status FileRunLogStore::adoptOlderLog(qint64 runId, const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fileError(file, "read");
    const QByteArray head = file.read(kLogRecordHeaderSize);
    file.close();
    LogRecordDecoder probe;
    if (head.size() < kLogRecordHeaderSize || !probe.feed(head) || m_runs.count(runId) > 0) {
        // Empty, unreadable, or already superseded by segments: nothing to keep.
        qCWarning(lcHubDb).noquote()
            << QStringLiteral("run %1: removing an older log file it cannot use,").arg(runId)
            << path;
        QFile::remove(path);
        return {};
    }
    const auto first = qFromBigEndian<quint64>(head.constData() + 1);
    RunLog &log = m_runs[runId];
    const Segment segment { first, QFileInfo(path).size(), 0 };
    QFile::remove(pathOf(runId, first, QLatin1StringView("idx")));
    if (!QFile::rename(path, pathOf(runId, first, QLatin1StringView("log"))))
        return storageError(QStringLiteral("cannot rename %1").arg(path));
    log.segments.push_back(segment);
    account(log, segment.size);
    qCInfo(lcHubDb).noquote() << QStringLiteral(
        "run %1: indexing its log from an older hub, once (%2)")
                                     .arg(runId)
                                     .arg(util::formatByteSize(segment.size));
    return readTail(runId, log, RunLogIndex::Entry { first, 0 });
}

// Reads the last segment from `from` to its end: learns where the log ends,
// adds the index entries it lacks, and cuts off a torn or malformed tail (a
// crash in the middle of a write) so that appends continue a sound log.
Status FileRunLogStore::readTail(qint64 runId, RunLog &log, RunLogIndex::Entry from)
{
    Segment &segment = log.segments.back();
    QFile file(pathOf(runId, segment.first, QLatin1StringView("log")));
    if (!file.open(QIODevice::ReadWrite))
        return fileError(file, "open");
    LogRecordDecoder decoder(from.offset);
    QList<RunLogIndex::Entry> missing;
    qint64 lastIndexed = from.position;
    quint64 end = from.offset;
    const Scan scan = scanRecords(
        file, from.position, file.size(), decoder,
        [&](const LogRecord &record, qint64 at) {
            if (at - lastIndexed >= RunLogIndex::kStride) {
                missing.append({ record.offset, at });
                lastIndexed = at;
            }
            end = record.end();
            return true;
        },
        m_bytesRead);
    if (scan.fault && scan.end == from.position && from.position > 0) {
        // The index points at no record: rebuild it from the segment's start
        // rather than cut sound records.
        qCWarning(lcHubDb).noquote()
            << QStringLiteral("run %1: the index of %2 is wrong; rebuilding it")
                   .arg(runId)
                   .arg(file.fileName());
        file.close();
        QFile::remove(indexOf(runId, segment).path());
        account(log, -segment.indexSize);
        segment.indexSize = 0;
        return readTail(runId, log, RunLogIndex::Entry { segment.first, 0 });
    }
    if (scan.end < file.size()) {
        qCWarning(lcHubDb).noquote()
            << QStringLiteral("run %1: its log ended in %2; cutting %3 bytes from %4")
                   .arg(runId)
                   .arg(scan.fault ? scan.fault->message : QStringLiteral("an incomplete record"))
                   .arg(file.size() - scan.end)
                   .arg(file.fileName());
        if (!file.resize(scan.end))
            return fileError(file, "cut");
        if (Status cut = indexOf(runId, segment).cut(scan.end); !cut)
            return cut;
    }
    file.close();
    RunLogIndex index = indexOf(runId, segment);
    if (Status added = index.append(missing); !added)
        return added;
    const qint64 indexSize = QFileInfo(index.path()).size();
    account(log, (scan.end - segment.size) + (indexSize - segment.indexSize));
    segment.size = scan.end;
    segment.indexSize = indexSize;
    log.end = end;
    log.lastIndexed = lastIndexed;
    log.tailKnown = true;
    return {};
}

Status FileRunLogStore::loadTail(qint64 runId, RunLog &log)
{
    if (log.tailKnown)
        return {};
    if (log.segments.empty()) {
        log.tailKnown = true;
        return {};
    }
    const Segment &last = log.segments.back();
    auto from = indexOf(runId, last)
                    .seekPoint(std::numeric_limits<quint64>::max(), last.size, { last.first, 0 });
    if (!from)
        return from.error();
    return readTail(runId, log, *from);
}

Result<quint64> FileRunLogStore::endOf(qint64 runId)
{
    const auto found = m_runs.find(runId);
    if (found == m_runs.end())
        return quint64(0);
    if (Status loaded = loadTail(runId, found->second); !loaded)
        return loaded.error();
    return found->second.end;
}

Status FileRunLogStore::append(qint64 runId, const QList<LogRecord> &records)
{
    RunLog &log = m_runs[runId];
    if (Status loaded = loadTail(runId, log); !loaded)
        return loaded;
    const QList<LogRecord> fresh = continuationOf(log.end, records);
    if (fresh.isEmpty())
        return {};
    const Status written = write(runId, log, fresh);
    enforceCap(runId, log);
    enforceBudget();
    return written;
}

Status FileRunLogStore::write(qint64 runId, RunLog &log, const QList<LogRecord> &records)
{
    QByteArray pending;
    QList<RunLogIndex::Entry> entries;
    Status written;
    for (const LogRecord &record : records) {
        const bool full = !log.segments.empty()
            && log.segments.back().size + pending.size() >= m_limits.segmentBytes();
        if (log.segments.empty() || full) {
            written = flush(runId, log, pending, entries);
            if (written)
                written = startSegment(runId, log, record.offset);
            if (!written)
                break;
        }
        const qint64 at = log.segments.back().size + pending.size();
        if (at - log.lastIndexed >= RunLogIndex::kStride) {
            entries.append({ record.offset, at });
            log.lastIndexed = at;
        }
        protocol::appendLogRecord(pending, record);
        log.end = record.end();
    }
    if (written)
        written = flush(runId, log, pending, entries);
    // What is on disk now is learnt again before the next write.
    if (!written)
        log.tailKnown = false;
    return written;
}

// Writes the records gathered for the last segment, then their index
// entries.
Status FileRunLogStore::flush(
    qint64 runId, RunLog &log, QByteArray &pending, QList<RunLogIndex::Entry> &entries)
{
    if (pending.isEmpty())
        return {};
    Segment &segment = log.segments.back();
    QFile file(pathOf(runId, segment.first, QLatin1StringView("log")));
    // Unbuffered: the records are one write already, and a failed write
    // says why (a full disk) rather than "Unknown error" from a flush.
    const bool opened = file.open(QIODevice::Append | QIODevice::Unbuffered);
    qint64 wrote = opened ? 0 : -1;
    // A write the disk could take only part of returns short without an
    // error; the next one says why.
    while (opened && wrote < pending.size()) {
        const qint64 more = file.write(pending.constData() + wrote, pending.size() - wrote);
        if (more <= 0)
            break;
        wrote += more;
    }
    if (wrote != pending.size()) {
        const Error failed = fileError(file, "write");
        // What part of the records went out is cut again at once, so the
        // log ends in a whole record and a retry appends to it as if the
        // write had never been tried; should that fail too, the next write
        // learns the tail again.
        if (opened && !file.resize(segment.size))
            log.tailKnown = false;
        return failed;
    }
    account(log, wrote);
    segment.size += wrote;
    pending.clear();
    if (Status indexed = indexOf(runId, segment).append(entries); !indexed)
        return indexed;
    const qint64 added = entries.size() * RunLogIndex::kEntrySize;
    account(log, added);
    segment.indexSize += added;
    entries.clear();
    return {};
}

Status FileRunLogStore::startSegment(qint64 runId, RunLog &log, quint64 first)
{
    QFile file(pathOf(runId, first, QLatin1StringView("log")));
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return fileError(file, "create");
    QFile::remove(pathOf(runId, first, QLatin1StringView("idx")));
    log.segments.push_back(Segment { first, 0, 0 });
    log.lastIndexed = 0;
    return {};
}

Status FileRunLogStore::dropOldestSegment(qint64 runId, RunLog &log)
{
    Q_ASSERT(log.segments.size() > 1);
    const Segment oldest = log.segments.front();
    const QString path = pathOf(runId, oldest.first, QLatin1StringView("log"));
    if (!QFile::remove(path) && QFile::exists(path))
        return storageError(QStringLiteral("cannot remove %1").arg(path));
    QFile::remove(pathOf(runId, oldest.first, QLatin1StringView("idx")));
    log.segments.erase(log.segments.begin());
    account(log, -(oldest.size + oldest.indexSize));
    return {};
}

// Everything goes; an empty segment named by the end stays, so the log
// still says how long it was.
Status FileRunLogStore::dropAll(qint64 runId, RunLog &log)
{
    if (Status loaded = loadTail(runId, log); !loaded)
        return loaded;
    if (log.segments.back().first != log.end) {
        if (Status started = startSegment(runId, log, log.end); !started)
            return started;
    }
    while (log.segments.size() > 1) {
        if (Status dropped = dropOldestSegment(runId, log); !dropped)
            return dropped;
    }
    return {};
}

Status FileRunLogStore::dropOldestWhile(
    qint64 runId, RunLog &log, const std::function<bool()> &tooMuch)
{
    while (tooMuch() && log.segments.size() > 1) {
        if (Status dropped = dropOldestSegment(runId, log); !dropped)
            return dropped;
    }
    return {};
}

void FileRunLogStore::enforceCap(qint64 runId, RunLog &log)
{
    if (Status trimmed
        = dropOldestWhile(runId, log, [&] { return log.diskBytes > m_limits.perRun; });
        !trimmed)
        qCWarning(lcHubDb).noquote()
            << QStringLiteral("run %1: cannot trim its log:").arg(runId) << trimmed.error().message;
}

void FileRunLogStore::enforceBudget()
{
    const auto overBudget = [this] { return m_diskBytes > m_limits.total; };
    if (!overBudget())
        return;
    const qint64 before = m_diskBytes;
    const QSet<qint64> active = m_activeRuns ? m_activeRuns() : QSet<qint64>();
    QList<qint64> finished;
    QList<qint64> running;
    const auto trim = [&](qint64 runId, RunLog &log, bool entirely) {
        Status trimmed = dropOldestWhile(runId, log, overBudget);
        if (trimmed && entirely && overBudget() && log.diskBytes > 0)
            trimmed = dropAll(runId, log);
        if (!trimmed)
            qCWarning(lcHubDb).noquote()
                << QStringLiteral("run %1: cannot trim its log:").arg(runId)
                << trimmed.error().message;
    };
    // Finished runs first, oldest first, each from its oldest segment on and
    // to its end if need be; then the active ones, which keep the segment
    // they write to.
    for (auto &[runId, log] : m_runs) {
        if (!overBudget())
            break;
        if (active.contains(runId) || log.diskBytes == 0)
            continue;
        finished.append(runId);
        trim(runId, log, true);
    }
    for (auto &[runId, log] : m_runs) {
        if (!overBudget())
            break;
        if (!active.contains(runId) || log.segments.size() < 2)
            continue;
        running.append(runId);
        trim(runId, log, false);
    }
    const auto names = [](const QList<qint64> &ids) {
        QStringList out;
        for (const qint64 id : ids)
            out.append(QString::number(id));
        return out.isEmpty() ? QStringLiteral("none") : out.join(QStringLiteral(", "));
    };
    // A workload printing forever at the budget trims at every segment.
    if (!m_budgetLog.admit())
        return;
    qCInfo(lcHubDb).noquote() << QStringLiteral(
        "run logs reached their budget of %1: dropped %2 of finished runs %3 "
        "and of active runs %4")
                                     .arg(util::formatByteSize(m_limits.total),
                                         util::formatByteSize(before - m_diskBytes),
                                         names(finished), names(running));
}

Result<StoredLogPage> FileRunLogStore::read(
    qint64 runId, quint64 fromOffset, qsizetype maxBytes) const
{
    StoredLogPage page;
    const auto found = m_runs.find(runId);
    if (found == m_runs.end() || found->second.segments.empty())
        return page;
    const RunLog &log = found->second;
    page.trimmedBefore = log.start();
    quint64 offset = fromOffset;
    if (offset < log.start()) {
        protocol::appendGapRecords(page.records, offset, log.start());
        offset = log.start();
    }
    // From the segment holding `offset`: the last one starting at or before it.
    auto segment = std::upper_bound(log.segments.begin(), log.segments.end(), offset,
        [](quint64 value, const Segment &s) { return value < s.first; });
    if (segment != log.segments.begin())
        --segment;
    qsizetype budget = maxBytes;
    for (; segment != log.segments.end() && budget > 0; ++segment) {
        if (Status read = readSegment(runId, *segment, offset, budget, page.records); !read)
            return read.error();
    }
    return page;
}

Status FileRunLogStore::readSegment(qint64 runId, const Segment &segment, quint64 &offset,
    qsizetype &budget, QList<LogRecord> &out) const
{
    if (segment.size == 0)
        return {};
    auto from = indexOf(runId, segment).seekPoint(offset, segment.size, { segment.first, 0 });
    if (!from)
        return from.error();
    QFile file(pathOf(runId, segment.first, QLatin1StringView("log")));
    if (!file.open(QIODevice::ReadOnly))
        return fileError(file, "read");
    LogRecordDecoder decoder(from->offset);
    const Scan scan = scanRecords(
        file, from->position, segment.size, decoder,
        [&](const LogRecord &record, qint64) {
            if (record.end() <= offset)
                return true; // before the reader, after the seek point
            const LogRecord part = record.offset < offset ? record.tailFrom(offset) : record;
            out.append(part);
            offset = part.end();
            budget -= kLogRecordHeaderSize + part.payload.size();
            return budget > 0;
        },
        m_bytesRead);
    if (scan.fault)
        return *scan.fault;
    return {};
}

} // namespace cloop::hub
