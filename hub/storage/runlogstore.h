#pragma once

#include "common/protocol/logrecord.h"
#include "common/result.h"
#include "common/util/logthrottle.h"
#include "hub/storage/runlogindex.h"

#include <QList>
#include <QSet>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace cloop::hub {

// How much disk the hub's run logs may take (`cloop hub serve
// --run-log-cap`, `--run-log-budget`).
struct RunLogLimits
{
    static constexpr qint64 kMiB = 1024 * 1024;
    static constexpr qint64 kDefaultPerRun = 64 * kMiB;
    static constexpr qint64 kDefaultTotal = 4096 * kMiB;
    static constexpr qint64 kSmallestPerRun = kMiB / 4;

    // One run's log on disk, record headers and index included.
    qint64 perRun = kDefaultPerRun;
    // All runs' logs together.
    qint64 total = kDefaultTotal;

    Status check() const;
    // Logs are kept in segments of about this size, and trimmed by whole
    // segments: a log at its cap holds at least perRun - segmentBytes() -
    // one record.
    qint64 segmentBytes() const;
};

// One answer to a read: the records as stored, contiguous from the offset
// asked for; the admin API answers them as an api::RunLogPage.
struct StoredLogPage
{
    QList<protocol::LogRecord> records;
    // The hub itself dropped the output before this offset (the run's cap or
    // the budget): gaps ending at or before it are the hub's, later ones the
    // agent's.
    quint64 trimmedBefore = 0;
};

// Each run's output on disk, as the agent sent it: log records (stdout,
// stderr and gap records with their stream offsets) in segment files
// <dir>/<run>.<first offset>.log, each with its sparse index
// <dir>/<run>.<first offset>.idx (RunLogIndex).
//
// Bounded: a run's log takes at most limits.perRun; past it its oldest
// segments go, so the newest output stays. All logs take at most
// limits.total; past it the oldest finished runs' logs are trimmed first
// (oldest segments first, then the rest), and only when no finished log is
// left do active runs lose their oldest segments. A log always keeps the
// segment it is written to, so the budget can be passed by at most one
// segment per active run.
//
// Exact about what it dropped: a log starts where its first segment starts,
// and reads report everything before that as dropped. A log removed
// entirely leaves an empty segment named by where it ended, so a reader
// still learns how much there was, and the agent's resend (run.ack) still
// continues from the true end.
//
// Reads seek (the index), return bounded pages and never read a file from
// its start to reach an offset. Not thread-safe: the hub's event loop.
class RunLogStore
{
public:
    // The runs whose logs may still grow (queued, dispatched, running).
    using ActiveRuns = std::function<QSet<qint64>()>;

    static Result<std::unique_ptr<RunLogStore>> open(
        QString directory, RunLogLimits limits, ActiveRuns activeRuns);

    // Stores what continues the run's log: bytes stored already are skipped
    // and a hole before the records becomes a gap, so a resend after a crash
    // between storing and acknowledging never stores anything twice.
    Status append(qint64 runId, const QList<protocol::LogRecord> &records);
    // The records covering [fromOffset, …), about maxBytes of them at most.
    Result<StoredLogPage> read(qint64 runId, quint64 fromOffset, qsizetype maxBytes) const;
    // Where the run's stored log ends (0 without one): the agent resends from
    // there. Trimming never moves it back.
    Result<quint64> endOf(qint64 runId);

    const RunLogLimits &limits() const { return m_limits; }
    qint64 diskBytes() const { return m_diskBytes; }
    qint64 diskBytesOf(qint64 runId) const;
    // Bytes read from log files so far (a figure for tests and metrics).
    quint64 bytesRead() const { return m_bytesRead; }

private:
    struct Segment
    {
        quint64 first = 0; // the stream offset of its first record: its name
        qint64 size = 0; // of the .log file
        qint64 indexSize = 0;
    };
    struct RunLog
    {
        std::vector<Segment> segments; // ascending; records go to the last
        qint64 diskBytes = 0;
        // Learnt from the last segment before this process first writes to it.
        bool tailKnown = false;
        quint64 end = 0;
        qint64 lastIndexed = 0; // the last segment's last index entry
        quint64 start() const { return segments.empty() ? 0 : segments.front().first; }
    };

    RunLogStore(QString directory, RunLogLimits limits, ActiveRuns activeRuns);

    QString pathOf(qint64 runId, quint64 first, QLatin1StringView suffix) const;
    RunLogIndex indexOf(qint64 runId, const Segment &segment) const;
    Status scan();
    Status adoptOlderLog(qint64 runId, const QString &path);
    Status readTail(qint64 runId, RunLog &log, RunLogIndex::Entry from);
    Status loadTail(qint64 runId, RunLog &log);
    Status write(qint64 runId, RunLog &log, const QList<protocol::LogRecord> &records);
    Status flush(
        qint64 runId, RunLog &log, QByteArray &pending, QList<RunLogIndex::Entry> &entries);
    Status startSegment(qint64 runId, RunLog &log, quint64 first);
    Status dropOldestSegment(qint64 runId, RunLog &log);
    Status dropAll(qint64 runId, RunLog &log);
    // Drops the log's oldest segments, never its last, while `tooMuch` holds.
    Status dropOldestWhile(qint64 runId, RunLog &log, const std::function<bool()> &tooMuch);
    void account(RunLog &log, qint64 delta);
    void enforceCap(qint64 runId, RunLog &log);
    void enforceBudget();
    Status readSegment(qint64 runId, const Segment &segment, quint64 &offset, qsizetype &budget,
        QList<protocol::LogRecord> &out) const;

    QString m_directory;
    RunLogLimits m_limits;
    ActiveRuns m_activeRuns;
    std::map<qint64, RunLog> m_runs; // by run id: oldest first
    qint64 m_diskBytes = 0;
    mutable quint64 m_bytesRead = 0;
    util::LogThrottle m_budgetLog;
};

} // namespace cloop::hub
