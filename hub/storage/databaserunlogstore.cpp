#include "hub/storage/databaserunlogstore.h"

#include "common/logging.h"
#include "common/util/bytesize.h"
#include "hub/storage/database.h"

#include <algorithm>
#include <limits>

using namespace Qt::StringLiterals;

namespace cloop::hub {

using protocol::kLogRecordHeaderSize;
using protocol::LogRecord;
using protocol::LogRecordDecoder;

namespace {

// Offsets are BIGINT columns.
constexpr quint64 kLargestOffset = quint64(std::numeric_limits<qint64>::max());
// Chunks looked at per statement when trimming, and fetched at most per
// statement when reading.
constexpr qsizetype kTrimBatch = 32;
constexpr qint64 kReadBatch = 16;
// Runs looked at per statement when the budget is passed.
constexpr qint64 kBudgetBatch = 100;

qint64 recordBytes(const LogRecord &record)
{
    return kLogRecordHeaderSize + record.payload.size();
}

quint64 offsetOf(const QVariant &value)
{
    return quint64(value.toLongLong());
}

// Callers name the run where they say what failed; trimming at open names
// it here.
Error logError(const QString &what, const Error &cause)
{
    return Error::make(cause.code, u"%1: %2"_s.arg(what, cause.message));
}

QString runNames(const QList<qint64> &ids)
{
    QStringList out;
    for (const qint64 id : ids)
        out.append(QString::number(id));
    return out.isEmpty() ? u"none"_s : out.join(u", "_s);
}

} // namespace

DatabaseRunLogStore::DatabaseRunLogStore(
    Database &database, RunLogLimits limits, ActiveRuns activeRuns)
    : m_db(database)
    , m_limits(limits)
    , m_activeRuns(std::move(activeRuns))
    , m_budgetLog(lcHubDb(), u"notes of run log trims"_s, 1, std::chrono::minutes(1))
{ }

Result<std::unique_ptr<DatabaseRunLogStore>> DatabaseRunLogStore::open(
    Database &database, RunLogLimits limits, ActiveRuns activeRuns)
{
    if (Status valid = limits.check(); !valid)
        return valid.error();
    std::unique_ptr<DatabaseRunLogStore> store(
        new DatabaseRunLogStore(database, limits, std::move(activeRuns)));
    auto over
        = database.queryAll(u"SELECT run_id FROM run_logs WHERE stored_bytes > ? ORDER BY run_id"_s,
            { limits.perRun }, [](const Rows &row) { return row.value(0).toLongLong(); });
    if (!over)
        return Error::make(over.error().code,
            u"cannot read the run logs in the database: %1"_s.arg(over.error().message));
    for (const qint64 runId : std::as_const(*over)) {
        if (Status capped = store->enforceCap(runId); !capped)
            return capped.error();
    }
    store->enforceBudget();
    return store;
}

Result<DatabaseRunLogStore::Log> DatabaseRunLogStore::lockLog(qint64 runId)
{
    // One statement both engines take: it makes the row or, finding it,
    // writes it unchanged, which locks it (PostgreSQL) until the end of the
    // transaction, and reads it as the last writer committed it. SQLite
    // holds the whole database from the transaction's start.
    auto rows = m_db.query(
        u"INSERT INTO run_logs (run_id, start_offset, end_offset, stored_bytes) VALUES (?, 0, 0, "
        "0) ON CONFLICT (run_id) DO UPDATE SET end_offset = run_logs.end_offset "
        "RETURNING start_offset, end_offset, stored_bytes"_s,
        { runId });
    if (!rows)
        return rows.error();
    if (!rows->next())
        return Error::make(ErrorCode::StorageError, u"the log's row did not come back"_s);
    return Log { offsetOf(rows->value(0)), offsetOf(rows->value(1)), rows->value(2).toLongLong() };
}

Status DatabaseRunLogStore::saveLog(qint64 runId, const Log &log)
{
    auto saved = m_db.query(u"UPDATE run_logs SET start_offset = ?, end_offset = ?, stored_bytes "
                            "= ? WHERE run_id = ?"_s,
        { qint64(log.start), qint64(log.end), log.storedBytes, runId });
    if (!saved)
        return saved.error();
    return {};
}

Status DatabaseRunLogStore::addToTotal(qint64 delta)
{
    if (delta == 0)
        return {};
    auto added = m_db.query(
        u"INSERT INTO run_log_totals (name, stored_bytes) VALUES ('all', ?) ON CONFLICT (name) "
        "DO UPDATE SET stored_bytes = run_log_totals.stored_bytes + excluded.stored_bytes"_s,
        { delta });
    if (!added)
        return added.error();
    return {};
}

Result<qint64> DatabaseRunLogStore::total() const
{
    auto rows = m_db.query(u"SELECT stored_bytes FROM run_log_totals WHERE name = 'all'"_s);
    if (!rows)
        return rows.error();
    return rows->next() ? rows->value(0).toLongLong() : qint64(0);
}

qint64 DatabaseRunLogStore::diskBytes() const
{
    auto all = total();
    if (!all) {
        qCWarning(lcHubDb).noquote() << "cannot tell what run logs take:" << all.error().message;
        return -1;
    }
    return *all;
}

qint64 DatabaseRunLogStore::diskBytesOf(qint64 runId) const
{
    auto rows = m_db.query(u"SELECT stored_bytes FROM run_logs WHERE run_id = ?"_s, { runId });
    if (!rows) {
        qCWarning(lcHubDb).noquote()
            << u"run %1: cannot tell what its log takes:"_s.arg(runId) << rows.error().message;
        return -1;
    }
    return rows->next() ? rows->value(0).toLongLong() : qint64(0);
}

Result<quint64> DatabaseRunLogStore::endOf(qint64 runId)
{
    auto rows = m_db.query(u"SELECT end_offset FROM run_logs WHERE run_id = ?"_s, { runId });
    if (!rows)
        return logError(u"cannot read where the run's log ends"_s, rows.error());
    return rows->next() ? offsetOf(rows->value(0)) : quint64(0);
}

Status DatabaseRunLogStore::beginAt(qint64 runId, quint64 offset)
{
    if (offset > kLargestOffset)
        return Error::make(ErrorCode::StorageError,
            u"a log beginning at offset %1 is past what the database stores"_s.arg(offset));
    auto made = m_db.query(u"INSERT INTO run_logs (run_id, start_offset, end_offset, "
                           "stored_bytes) VALUES (?, ?, ?, 0) ON CONFLICT (run_id) DO NOTHING"_s,
        { runId, qint64(offset), qint64(offset) });
    if (!made)
        return logError(u"cannot begin the run's log"_s, made.error());
    return {};
}

Status DatabaseRunLogStore::append(qint64 runId, const QList<LogRecord> &records)
{
    if (records.isEmpty())
        return {};
    for (const LogRecord &record : records) {
        if (record.end() > kLargestOffset)
            return Error::make(ErrorCode::StorageError,
                u"output at offset %1 is past what the database stores (2^63 bytes)"_s.arg(
                    record.offset));
    }
    {
        Database::Transaction transaction(m_db);
        if (Status begun = transaction.begin(); !begun)
            return logError(u"cannot store the run's log"_s, begun.error());
        auto log = lockLog(runId);
        if (!log)
            return logError(u"cannot store the run's log"_s, log.error());
        const qint64 before = log->storedBytes;
        // Another member may have stored some of these already: its
        // transaction ended before the lock was granted.
        if (const QList<LogRecord> fresh = continuationOf(log->end, records); !fresh.isEmpty()) {
            Status changed = write(runId, *log, fresh);
            if (changed) {
                auto capped = dropOldestWhile(
                    runId, *log, [this](const Log &l) { return l.storedBytes > m_limits.perRun; });
                if (!capped)
                    changed = capped.error();
            }
            if (changed)
                changed = saveLog(runId, *log);
            if (changed)
                changed = addToTotal(log->storedBytes - before);
            if (!changed)
                return logError(u"cannot store the run's log"_s, changed.error());
        }
        // Committed even with nothing new: inside a caller's transaction
        // (a copy) a part that ends uncommitted would fail the whole.
        if (Status committed = transaction.commit(); !committed)
            return logError(u"cannot store the run's log"_s, committed.error());
    }
    enforceBudget();
    return {};
}

Result<std::optional<DatabaseRunLogStore::Chunk>> DatabaseRunLogStore::lastChunk(qint64 runId)
{
    auto rows = m_db.query(u"SELECT first_offset, end_offset, stored_bytes FROM run_log_chunks "
                           "WHERE run_id = ? ORDER BY first_offset DESC LIMIT 1"_s,
        { runId });
    if (!rows)
        return rows.error();
    if (!rows->next())
        return std::optional<Chunk>();
    return std::optional<Chunk>(
        Chunk { offsetOf(rows->value(0)), offsetOf(rows->value(1)), rows->value(2).toLongLong() });
}

Status DatabaseRunLogStore::write(qint64 runId, Log &log, const QList<LogRecord> &records)
{
    auto tail = lastChunk(runId);
    if (!tail)
        return tail.error();
    qsizetype next = 0;
    // The last chunk takes what fits first: a run printing a line at a time
    // still fills its chunks.
    if (*tail && (*tail)->end == log.end) {
        const qint64 room = kChunkBytes - ((*tail)->storedBytes - kRowOverhead);
        QByteArray more;
        while (next < records.size() && more.size() + recordBytes(records.at(next)) <= room)
            protocol::appendLogRecord(more, records.at(next++));
        if (!more.isEmpty()) {
            const quint64 end = records.at(next - 1).end();
            if (Status extended = extendChunk(runId, (*tail)->first, more, end); !extended)
                return extended;
            log.storedBytes += more.size();
            log.end = end;
        }
    }
    QByteArray pending;
    quint64 first = 0;
    for (; next < records.size(); ++next) {
        const LogRecord &record = records.at(next);
        if (!pending.isEmpty() && pending.size() + recordBytes(record) > kChunkBytes) {
            if (Status inserted = insertChunk(runId, first, pending, log.end); !inserted)
                return inserted;
            log.storedBytes += pending.size() + kRowOverhead;
            pending.clear();
        }
        if (pending.isEmpty())
            first = record.offset;
        protocol::appendLogRecord(pending, record);
        log.end = record.end();
    }
    if (!pending.isEmpty()) {
        if (Status inserted = insertChunk(runId, first, pending, log.end); !inserted)
            return inserted;
        log.storedBytes += pending.size() + kRowOverhead;
    }
    return {};
}

Status DatabaseRunLogStore::extendChunk(
    qint64 runId, quint64 first, const QByteArray &records, quint64 end)
{
    auto extended
        = m_db.query(u"UPDATE run_log_chunks SET records = %1, end_offset = ?, "
                     "stored_bytes = stored_bytes + ? WHERE run_id = ? AND "
                     "first_offset = ?"_s.arg(m_db.concatenatedBytes(u"records"_s, u"?"_s)),
            { records, qint64(end), qint64(records.size()), runId, qint64(first) });
    if (!extended)
        return extended.error();
    return {};
}

Status DatabaseRunLogStore::insertChunk(
    qint64 runId, quint64 first, const QByteArray &records, quint64 end)
{
    auto inserted = m_db.query(u"INSERT INTO run_log_chunks (run_id, first_offset, end_offset, "
                               "stored_bytes, records) VALUES (?, ?, ?, ?, ?)"_s,
        { runId, qint64(first), qint64(end), qint64(records.size()) + kRowOverhead, records });
    if (!inserted)
        return inserted.error();
    return {};
}

Result<qint64> DatabaseRunLogStore::dropOldestWhile(qint64 runId, Log &log, const TooMuch &tooMuch)
{
    qint64 dropped = 0;
    while (tooMuch(log)) {
        // One more than may go: the last chunk of the log never does.
        auto oldest = m_db.queryAll(u"SELECT first_offset, end_offset, stored_bytes FROM "
                                    "run_log_chunks WHERE run_id = ? ORDER BY first_offset "
                                    "LIMIT ?"_s,
            { runId, qint64(kTrimBatch + 1) }, [](const Rows &row) {
                return Chunk { offsetOf(row.value(0)), offsetOf(row.value(1)),
                    row.value(2).toLongLong() };
            });
        if (!oldest)
            return oldest.error();
        const qsizetype candidates = std::min(kTrimBatch, oldest->size() - 1);
        qsizetype going = 0;
        quint64 start = log.start;
        for (; going < candidates && tooMuch(log); ++going) {
            const Chunk &chunk = oldest->at(going);
            log.storedBytes -= chunk.storedBytes;
            dropped += chunk.storedBytes;
            start = chunk.end;
        }
        if (going == 0)
            break;
        auto removed
            = m_db.query(u"DELETE FROM run_log_chunks WHERE run_id = ? AND first_offset < ?"_s,
                { runId, qint64(start) });
        if (!removed)
            return removed.error();
        log.start = start;
    }
    return dropped;
}

// Everything goes; the row stays, so the log still says how long it was.
Result<qint64> DatabaseRunLogStore::dropAll(qint64 runId, Log &log)
{
    auto removed = m_db.query(u"DELETE FROM run_log_chunks WHERE run_id = ?"_s, { runId });
    if (!removed)
        return removed.error();
    const qint64 dropped = log.storedBytes;
    log.storedBytes = 0;
    log.start = log.end;
    return dropped;
}

Status DatabaseRunLogStore::enforceCap(qint64 runId)
{
    Database::Transaction transaction(m_db);
    if (Status begun = transaction.begin(); !begun)
        return logError(u"cannot trim the log of run %1"_s.arg(runId), begun.error());
    auto log = lockLog(runId);
    if (!log)
        return logError(u"cannot trim the log of run %1"_s.arg(runId), log.error());
    auto dropped = dropOldestWhile(
        runId, *log, [this](const Log &l) { return l.storedBytes > m_limits.perRun; });
    Status changed = dropped ? saveLog(runId, *log) : Status(dropped.error());
    if (changed)
        changed = addToTotal(-*dropped);
    if (changed)
        changed = transaction.commit();
    if (!changed)
        return logError(u"cannot trim the log of run %1"_s.arg(runId), changed.error());
    return {};
}

Result<qint64> DatabaseRunLogStore::trimForBudget(qint64 runId, bool entirely, qint64 &remaining)
{
    Database::Transaction transaction(m_db);
    if (Status begun = transaction.begin(); !begun)
        return begun.error();
    auto log = lockLog(runId);
    if (!log)
        return log.error();
    // Read under the run's lock: what other members trimmed or added
    // meanwhile counts.
    auto all = total();
    if (!all)
        return all.error();
    const qint64 held = log->storedBytes;
    const auto over = [&](const Log &l) { return *all - (held - l.storedBytes) > m_limits.total; };
    auto dropped = dropOldestWhile(runId, *log, over);
    if (!dropped)
        return dropped.error();
    if (entirely && over(*log) && log->storedBytes > 0) {
        auto rest = dropAll(runId, *log);
        if (!rest)
            return rest.error();
    }
    const qint64 gone = held - log->storedBytes;
    if (gone > 0) {
        if (Status saved = saveLog(runId, *log); !saved)
            return saved.error();
        if (Status counted = addToTotal(-gone); !counted)
            return counted.error();
    }
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    remaining = *all - gone;
    return gone;
}

void DatabaseRunLogStore::enforceBudget()
{
    auto all = total();
    if (!all) {
        qCWarning(lcHubDb).noquote()
            << "cannot hold run logs to their budget:" << all.error().message;
        return;
    }
    if (*all <= m_limits.total)
        return;
    qint64 remaining = *all;
    const auto overBudget = [&] { return remaining > m_limits.total; };
    const QSet<qint64> active = m_activeRuns ? m_activeRuns() : QSet<qint64>();
    QList<qint64> finished;
    QList<qint64> running;
    QList<qint64> activeHeld;
    const auto trim = [&](qint64 runId, bool entirely) {
        auto trimmed = trimForBudget(runId, entirely, remaining);
        if (!trimmed) {
            qCWarning(lcHubDb).noquote()
                << u"run %1: cannot trim its log:"_s.arg(runId) << trimmed.error().message;
            return false;
        }
        if (*trimmed > 0)
            (entirely ? finished : running).append(runId);
        return true;
    };
    // Finished runs first, oldest first, each from its oldest chunk on and
    // to its end if need be; then the active ones, which keep the chunk
    // they write to.
    qint64 after = std::numeric_limits<qint64>::min();
    for (bool more = true; more && overBudget();) {
        auto held = m_db.queryAll(u"SELECT run_id FROM run_logs WHERE stored_bytes > 0 AND "
                                  "run_id > ? ORDER BY run_id LIMIT ?"_s,
            { after, kBudgetBatch }, [](const Rows &row) { return row.value(0).toLongLong(); });
        if (!held) {
            qCWarning(lcHubDb).noquote()
                << "cannot hold run logs to their budget:" << held.error().message;
            return;
        }
        more = held->size() == kBudgetBatch;
        for (const qint64 runId : std::as_const(*held)) {
            after = runId;
            if (active.contains(runId))
                activeHeld.append(runId);
            else if (overBudget() && !trim(runId, true))
                return;
        }
    }
    for (const qint64 runId : std::as_const(activeHeld)) {
        if (!overBudget() || !trim(runId, false))
            break;
    }
    // A workload printing forever at the budget trims at every chunk.
    if (!m_budgetLog.admit())
        return;
    qCInfo(lcHubDb).noquote() << u"run logs reached their budget of %1: dropped %2 of finished "
                                 "runs %3 and of active runs %4"_s.arg(
                                     util::formatByteSize(m_limits.total),
                                     util::formatByteSize(*all - remaining), runNames(finished),
                                     runNames(running));
}

Result<StoredLogPage> DatabaseRunLogStore::read(
    qint64 runId, quint64 fromOffset, qsizetype maxBytes) const
{
    StoredLogPage page;
    auto rows = m_db.query(
        u"SELECT start_offset, end_offset FROM run_logs WHERE run_id = ?"_s, { runId });
    if (!rows)
        return logError(u"cannot read the run's log"_s, rows.error());
    if (!rows->next())
        return page;
    const quint64 start = offsetOf(rows->value(0));
    const quint64 end = offsetOf(rows->value(1));
    page.trimmedBefore = start;
    quint64 offset = fromOffset;
    if (offset < start) {
        protocol::appendGapRecords(page.records, offset, start);
        offset = start;
    }
    qsizetype budget = maxBytes;
    struct Fetched
    {
        quint64 first;
        QByteArray records;
    };
    const auto readChunk = [](const Rows &row) {
        return Fetched { offsetOf(row.value(0)), row.value(1).toByteArray() };
    };
    std::optional<quint64> after;
    while (budget > 0 && offset < end) {
        // A page of N bytes takes at most about 2N / kChunkBytes + 1 chunks:
        // a chunk is closed only when the next record does not fit, so two
        // neighbours hold more than kChunkBytes together.
        const qint64 want = std::clamp<qint64>(budget / kChunkBytes + 1, 1, kReadBatch);
        // First from the chunk holding the offset: the last one starting at
        // or before it, found by the key.
        auto chunks = after ? m_db.queryAll(u"SELECT first_offset, records FROM run_log_chunks "
                                            "WHERE run_id = ? AND first_offset > ? ORDER BY "
                                            "first_offset LIMIT ?"_s,
                          { runId, qint64(*after), want }, readChunk)
                            : m_db.queryAll(u"SELECT first_offset, records FROM run_log_chunks "
                                            "WHERE run_id = ? AND first_offset >= COALESCE(("
                                            "SELECT first_offset FROM run_log_chunks WHERE "
                                            "run_id = ? AND first_offset <= ? ORDER BY "
                                            "first_offset DESC LIMIT 1), ?) ORDER BY "
                                            "first_offset LIMIT ?"_s,
                                { runId, runId, qint64(offset), qint64(offset), want }, readChunk);
        if (!chunks)
            return logError(u"cannot read the run's log"_s, chunks.error());
        for (const Fetched &chunk : std::as_const(*chunks)) {
            after = chunk.first;
            m_bytesRead += quint64(chunk.records.size());
            if (Status taken = takeRecords(chunk.first, chunk.records, offset, budget, page);
                !taken)
                return taken.error();
            if (budget <= 0)
                break;
        }
        if (chunks->size() < want)
            break;
    }
    return page;
}

Status DatabaseRunLogStore::takeRecords(quint64 first, const QByteArray &records, quint64 &offset,
    qsizetype &budget, StoredLogPage &page) const
{
    LogRecordDecoder decoder(first);
    Status fed = decoder.feed(records);
    if (fed && decoder.bufferedBytes() > 0)
        fed = Error::make(ErrorCode::StorageError, u"it ends inside a record"_s);
    if (!fed)
        return Error::make(ErrorCode::StorageError,
            u"the run's log is damaged in its chunk at offset %1: %2"_s.arg(first).arg(
                fed.error().message));
    for (const LogRecord &record : decoder.takeRecords()) {
        if (record.end() <= offset)
            continue; // before the reader, in the chunk holding its offset
        if (record.offset > offset) {
            // Trimmed since the page began (by another member too): the hub
            // dropped what lies between.
            protocol::appendGapRecords(page.records, offset, record.offset);
            page.trimmedBefore = record.offset;
            offset = record.offset;
        }
        const LogRecord part = record.offset < offset ? record.tailFrom(offset) : record;
        page.records.append(part);
        offset = part.end();
        budget -= kLogRecordHeaderSize + part.payload.size();
        if (budget <= 0)
            break;
    }
    return {};
}

} // namespace cloop::hub
