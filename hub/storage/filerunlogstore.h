#pragma once

#include "common/util/logthrottle.h"
#include "hub/storage/runlogindex.h"
#include "hub/storage/runlogstore.h"

#include <QList>
#include <QSet>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace cloop::hub {

// Run logs as files in the hub's data folder (a single hub): the
// RunLogStore contract, with each run's log records in segment files
// <dir>/<run>.<first offset>.log, each with its sparse index
// <dir>/<run>.<first offset>.idx (RunLogIndex).
//
// Logs are trimmed by whole segments (limits.segmentBytes()); a log starts
// where its first segment starts. A log removed entirely leaves an empty
// segment named by where it ended, so the end outlives a restart. Reads
// seek through the index and never read a file from its start to reach an
// offset.
class FileRunLogStore final : public RunLogStore
{
public:
    static Result<std::unique_ptr<FileRunLogStore>> open(
        QString directory, RunLogLimits limits, ActiveRuns activeRuns);

    Status append(qint64 runId, const QList<protocol::LogRecord> &records) override;
    Result<StoredLogPage> read(qint64 runId, quint64 fromOffset, qsizetype maxBytes) const override;
    Result<quint64> endOf(qint64 runId) override;

    const RunLogLimits &limits() const override { return m_limits; }
    qint64 diskBytes() const override { return m_diskBytes; }
    qint64 diskBytesOf(qint64 runId) const override;
    // Bytes read from log files so far.
    quint64 bytesRead() const override { return m_bytesRead; }

    // The runs with a log, even one removed entirely, ascending.
    QList<qint64> runIds() const;

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

    FileRunLogStore(QString directory, RunLogLimits limits, ActiveRuns activeRuns);

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
