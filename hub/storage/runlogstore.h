#pragma once

#include "common/protocol/logrecord.h"
#include "common/result.h"

#include <QList>
#include <QSet>
#include <QString>

#include <functional>
#include <memory>

namespace cloop::hub {

class Database;

// How much storage the hub's run logs may take (`cloop hub serve
// --run-log-cap`, `--run-log-budget`).
struct RunLogLimits
{
    static constexpr qint64 kMiB = 1024 * 1024;
    static constexpr qint64 kDefaultPerRun = 64 * kMiB;
    static constexpr qint64 kDefaultTotal = 4096 * kMiB;
    static constexpr qint64 kSmallestPerRun = kMiB / 4;

    // One run's log as stored, its store's own bookkeeping included.
    qint64 perRun = kDefaultPerRun;
    // All runs' logs together.
    qint64 total = kDefaultTotal;

    // Limits that never trim anything: for a copy that must keep a log
    // whole whatever it was capped to where it came from.
    static RunLogLimits unbounded();

    Status check() const;
    // Logs are trimmed by whole pieces (a file's segments, a database's
    // chunks) of at most about this size: a log at its cap holds at least
    // perRun - segmentBytes() - one record.
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

// Each run's output as the agent sent it: log records (stdout, stderr and
// gap records with their stream offsets).
//
// Bounded: a run's log takes at most limits().perRun; past it its oldest
// output goes, so the newest stays. All logs take at most limits().total;
// past it the oldest finished runs' logs are trimmed first (oldest output
// first, then the rest), and only when no finished log is left do active
// runs lose their oldest output. A log always keeps the piece it is written
// to, so the budget can be passed by at most one piece per active run.
//
// Exact about what it dropped: a log starts where what it holds starts,
// and reads report everything before that as dropped. A log removed
// entirely still knows where it ended, so a reader learns how much there
// was, and the agent's resend (run.ack) still continues from the true end.
//
// Reads seek and return bounded pages: no log is read from its start to
// reach an offset. Not thread-safe: the hub's event loop.
class RunLogStore
{
    Q_DISABLE_COPY_MOVE(RunLogStore)

public:
    // The runs whose logs may still grow (queued, dispatched, running).
    using ActiveRuns = std::function<QSet<qint64>()>;

    RunLogStore() = default;
    virtual ~RunLogStore() = default;

    // Stores what continues the run's log: bytes stored already are skipped
    // and a hole before the records becomes a gap, so a resend after a crash
    // between storing and acknowledging never stores anything twice.
    virtual Status append(qint64 runId, const QList<protocol::LogRecord> &records) = 0;
    // The records covering [fromOffset, …), about maxBytes of them at most.
    virtual Result<StoredLogPage> read(
        qint64 runId, quint64 fromOffset, qsizetype maxBytes) const = 0;
    // Where the run's stored log ends (0 without one): the agent resends from
    // there. Trimming never moves it back.
    virtual Result<quint64> endOf(qint64 runId) = 0;

    virtual const RunLogLimits &limits() const = 0;
    // What the logs take, as the limits count it: all together, and one
    // run's; -1 when the store cannot tell (its database did not answer).
    virtual qint64 diskBytes() const = 0;
    virtual qint64 diskBytesOf(qint64 runId) const = 0;
    // Bytes of stored records read so far (a figure for tests and metrics).
    virtual quint64 bytesRead() const = 0;
};

// What of `records` continues a log that ends at `end`: bytes stored
// already are skipped, and a hole before a record becomes gap records (the
// bytes were lost before they reached the hub).
QList<protocol::LogRecord> continuationOf(quint64 end, const QList<protocol::LogRecord> &records);

// Where a hub's files keep run logs: <data>/runs.
QString runLogDirectory(const QString &dataDir);

// The run log store of a hub whose records are in `records`: with them in
// PostgreSQL (a cluster) the logs are in the database too, where every
// member reads and continues every run's log; otherwise they are files in
// runLogDirectory(dataDir).
Result<std::unique_ptr<RunLogStore>> openRunLogStore(Database &records, const QString &dataDir,
    RunLogLimits limits, RunLogStore::ActiveRuns activeRuns);

} // namespace cloop::hub
