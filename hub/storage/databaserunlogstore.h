#pragma once

#include "common/util/logthrottle.h"
#include "hub/storage/runlogstore.h"

#include <QByteArray>

#include <functional>
#include <optional>

namespace cloop::hub {

class Database;

// Run logs in the hub's database (schema 9), where every member of a
// cluster reads and continues every run's log: the RunLogStore contract.
//
// A log's records are kept in chunks (run_log_chunks) of at most
// kChunkBytes of record bytes (or one larger record), so a busy run writes a row per 64 KiB, not
// per line: an append first fills the run's last chunk, then starts new
// ones. A read finds the chunk holding its offset through the key (run_id,
// first_offset) and fetches only the chunks its page needs. Logs are
// trimmed by whole chunks. Each chunk counts its record bytes and
// kRowOverhead for its row and key: what the limits are held to.
//
// Every change of a run's log is one transaction that first locks the
// run's row in run_logs: two members appending to one run (its agent
// reconnected to another member) go one after the other, and the second
// skips what the first stored. The bytes of all logs are counted in one
// row (run_log_totals), changed after the run's row in every transaction,
// so no two changes ever wait for each other in a circle.
class DatabaseRunLogStore final : public RunLogStore
{
public:
    static constexpr qsizetype kChunkBytes = 64 * 1024;
    static constexpr qint64 kRowOverhead = 64;

    // Limits lowered since the last start apply at once.
    static Result<std::unique_ptr<DatabaseRunLogStore>> open(
        Database &database, RunLogLimits limits, ActiveRuns activeRuns);

    Status append(qint64 runId, const QList<protocol::LogRecord> &records) override;
    Result<StoredLogPage> read(qint64 runId, quint64 fromOffset, qsizetype maxBytes) const override;
    Result<quint64> endOf(qint64 runId) override;

    const RunLogLimits &limits() const override { return m_limits; }
    qint64 diskBytes() const override;
    qint64 diskBytesOf(qint64 runId) const override;
    // Bytes of chunks fetched from the database so far.
    quint64 bytesRead() const override { return m_bytesRead; }

    // Makes a run without a log have one that begins (and ends) at
    // `offset`, as if the output before it had been trimmed: a log copied
    // from a store that had trimmed it. A run with a log keeps it as it is.
    Status beginAt(qint64 runId, quint64 offset);

private:
    // A run's row in run_logs.
    struct Log
    {
        quint64 start = 0; // the hub dropped everything before
        quint64 end = 0;
        qint64 storedBytes = 0;
    };
    struct Chunk
    {
        quint64 first = 0;
        quint64 end = 0;
        qint64 storedBytes = 0;
    };
    using TooMuch = std::function<bool(const Log &)>;

    DatabaseRunLogStore(Database &database, RunLogLimits limits, ActiveRuns activeRuns);

    // The run's row, made if it has none, locked until the transaction ends.
    Result<Log> lockLog(qint64 runId);
    Status saveLog(qint64 runId, const Log &log);
    Status addToTotal(qint64 delta);
    Result<qint64> total() const;
    Result<std::optional<Chunk>> lastChunk(qint64 runId);
    Status write(qint64 runId, Log &log, const QList<protocol::LogRecord> &records);
    Status extendChunk(qint64 runId, quint64 first, const QByteArray &records, quint64 end);
    Status insertChunk(qint64 runId, quint64 first, const QByteArray &records, quint64 end);
    // Drops the log's oldest chunks, never its last, while `tooMuch`
    // holds; the bytes dropped.
    Result<qint64> dropOldestWhile(qint64 runId, Log &log, const TooMuch &tooMuch);
    Result<qint64> dropAll(qint64 runId, Log &log);
    Status enforceCap(qint64 runId);
    // Trims the run's log for the budget, in a transaction of its own;
    // `remaining` becomes what all logs hold after it.
    Result<qint64> trimForBudget(qint64 runId, bool entirely, qint64 &remaining);
    void enforceBudget();
    // The records of one chunk from `offset` on, into the page.
    Status takeRecords(quint64 first, const QByteArray &records, quint64 &offset, qsizetype &budget,
        StoredLogPage &page) const;

    Database &m_db;
    RunLogLimits m_limits;
    ActiveRuns m_activeRuns;
    mutable quint64 m_bytesRead = 0;
    util::LogThrottle m_budgetLog;
};

} // namespace cloop::hub
