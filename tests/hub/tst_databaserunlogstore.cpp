// What the database store (run logs a cluster's members share) shows
// besides the behaviour every store owes (tst_runlogstore): its rows hold
// chunks of records, reads touch only the rows a page needs, two members
// continue one log, one after the other, never storing a byte twice, and a
// single hub's log files move in as they are. On SQLite always, and on a
// real PostgreSQL server the test starts (skipped without one, unless
// CLOOP_REQUIRE_POSTGRES=1).

#include "hub/storage/runlogcopy.h"
#include "support/verifyresult.h"
#include "tests/hub/runlogbackends.h"
#include "tests/hub/runlogsamples.h"

#include <QFile>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

namespace {

qint64 valueOf(Database &db, const QString &sql, const QVariantList &binds = {})
{
    auto rows = db.query(sql, binds);
    if (!rows) {
        qWarning() << rows.error().message;
        return -1;
    }
    return rows->next() ? rows->value(0).toLongLong() : 0;
}

} // namespace

class TestDatabaseRunLogStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase_data();
    void initTestCase();
    void init();
    void cleanup();

    void aRunPrintingLineByLineFillsChunks();
    void aReadFromAFarOffsetTouchesABoundedNumberOfRows();
    void whatIsCountedIsWhatIsHeld();
    void lowerLimitsApplyWhenTheStoreOpens();
    void aChangeThatIsNotCommittedStoresNothing();
    void anotherMemberContinuesTheLogAndReadsItWhole();
    void aSecondWriterWaitsAndSkipsWhatTheFirstStored();
    void aSingleHubsLogFilesMoveInAsTheyAre();

private:
    std::unique_ptr<RunLogStore> open(RunLogLimits limits = {});
    Database &db() const { return *m_backends.database(); }

    RunLogBackends m_backends;
    QSet<qint64> m_active;
};

void TestDatabaseRunLogStore::initTestCase_data()
{
    RunLogBackends::addRows(false);
}

void TestDatabaseRunLogStore::initTestCase()
{
    m_backends.startServer();
}

void TestDatabaseRunLogStore::init()
{
    m_active.clear();
    CLOOP_PREPARE_LOG_BACKEND(m_backends);
}

void TestDatabaseRunLogStore::cleanup()
{
    m_backends.close();
}

std::unique_ptr<RunLogStore> TestDatabaseRunLogStore::open(RunLogLimits limits)
{
    return m_backends.open(limits, [this] { return m_active; });
}

void TestDatabaseRunLogStore::aRunPrintingLineByLineFillsChunks()
{
    // Given a run whose output arrives a 40-byte line at a time …
    auto store = open();
    QVERIFY(store);
    constexpr int kLines = 3000;
    for (int line = 0; line < kLines; ++line)
        QVERIFY(store->append(1, output(quint64(line) * 40, 1, 40)));
    // … its log takes a row per 64 KiB of records, not a row per line …
    const qint64 recordBytes = kLines * (40 + protocol::kLogRecordHeaderSize);
    const qint64 rows = valueOf(db(), u"SELECT COUNT(*) FROM run_log_chunks WHERE run_id = 1"_s);
    QCOMPARE(rows,
        (recordBytes + DatabaseRunLogStore::kChunkBytes - 1) / DatabaseRunLogStore::kChunkBytes);
    QVERIFY(valueOf(db(), u"SELECT MAX(LENGTH(records)) FROM run_log_chunks"_s)
        <= DatabaseRunLogStore::kChunkBytes);
    // … and reads back whole. A run writing big batches packs its records
    // into chunks just the same, a record never split between two.
    QVERIFY(store->append(2, output(0, 40, 5000)));
    QCOMPARE(valueOf(db(), u"SELECT COUNT(*) FROM run_log_chunks WHERE run_id = 2"_s), 4);
    for (const qint64 run : { 1, 2 }) {
        const WholeLog log = readAll(*store, run);
        QVERIFY(log.contiguous);
        QVERIFY(log.gaps.isEmpty());
        QCOMPARE(log.data.size(), run == 1 ? kLines * 40 : 40 * 5000);
        QVERIFY(holdsOutputFrom(log.data, 0));
    }
}

void TestDatabaseRunLogStore::aReadFromAFarOffsetTouchesABoundedNumberOfRows()
{
    // Given a log of 3 MiB in 1 KiB records, some fifty chunks …
    auto store = open();
    QVERIFY(store);
    for (int batch = 0; batch < 3; ++batch)
        QVERIFY(store->append(9, output(quint64(batch) * 1024 * kKiB, 1024, kKiB)));
    QVERIFY(valueOf(db(), u"SELECT COUNT(*) FROM run_log_chunks WHERE run_id = 9"_s) > 40);
    int statements = 0;
    db().setStatementObserver([&statements](std::chrono::nanoseconds) { ++statements; });
    const quint64 chunk = DatabaseRunLogStore::kChunkBytes + protocol::kMaxLogPayload
        + protocol::kLogRecordHeaderSize;
    // … a small page near its end takes the log's row and at most the two
    // chunks around the offset, in three statements at most …
    for (const quint64 from : { quint64(3 * 1024 * kKiB - 5000), quint64(1536 * kKiB + 7) }) {
        statements = 0;
        const quint64 before = store->bytesRead();
        auto page = store->read(9, from, 4 * kKiB);
        CLOOP_VERIFY_OK(page);
        QCOMPARE(page->records.first().offset, from);
        QVERIFY(holdsOutputFrom(page->records.first().payload, from));
        QVERIFY2(statements <= 3, qPrintable(QString::number(statements)));
        QVERIFY2(store->bytesRead() - before <= 2 * chunk,
            qPrintable(QString::number(store->bytesRead() - before)));
    }
    // … and a page of 256 KiB the chunks it needs and one or two more.
    statements = 0;
    const quint64 before = store->bytesRead();
    auto page = store->read(9, 1024 * kKiB + 100, 256 * kKiB);
    CLOOP_VERIFY_OK(page);
    qsizetype bytes = 0;
    for (const protocol::LogRecord &record : std::as_const(page->records))
        bytes += protocol::kLogRecordHeaderSize + record.payload.size();
    QVERIFY(bytes >= 256 * kKiB);
    QVERIFY2(statements <= 3, qPrintable(QString::number(statements)));
    QVERIFY2(store->bytesRead() - before <= 256 * kKiB + 2 * chunk,
        qPrintable(QString::number(store->bytesRead() - before)));
    db().setStatementObserver({});
}

void TestDatabaseRunLogStore::whatIsCountedIsWhatIsHeld()
{
    // Given logs capped, trimmed for the budget and one removed entirely …
    auto store = open(RunLogLimits { 256 * kKiB, 512 * kKiB });
    QVERIFY(store);
    QVERIFY(store->append(1, output(0, 60, 4 * kKiB)));
    QVERIFY(store->append(2, output(0, 3000, 100)));
    m_active = { 3 };
    for (int batch = 0; batch < 4; ++batch)
        QVERIFY(store->append(3, output(quint64(batch) * 96 * kKiB, 24, 4 * kKiB)));
    QVERIFY(store->diskBytes() <= 512 * kKiB);
    // … each log's row counts what its chunks hold, their bytes and a row's
    // overhead each, and begins where its first chunk does …
    QCOMPARE(valueOf(db(),
                 u"SELECT COUNT(*) FROM run_logs r WHERE stored_bytes <> (SELECT "
                 "COALESCE(SUM(LENGTH(records)), 0) + COUNT(*) * ? FROM run_log_chunks "
                 "c WHERE c.run_id = r.run_id)"_s,
                 { DatabaseRunLogStore::kRowOverhead }),
        0);
    QCOMPARE(valueOf(db(),
                 u"SELECT COUNT(*) FROM run_logs r WHERE start_offset <> COALESCE(("
                 "SELECT MIN(first_offset) FROM run_log_chunks c WHERE c.run_id = "
                 "r.run_id), end_offset)"_s),
        0);
    // … chunks follow each other without a hole …
    QCOMPARE(valueOf(db(),
                 u"SELECT COUNT(*) FROM run_log_chunks a WHERE a.end_offset < (SELECT "
                 "end_offset FROM run_logs r WHERE r.run_id = a.run_id) AND NOT EXISTS "
                 "(SELECT 1 FROM run_log_chunks b WHERE b.run_id = a.run_id AND "
                 "b.first_offset = a.end_offset)"_s),
        0);
    // … and the total is every log's.
    QCOMPARE(store->diskBytes(), valueOf(db(), u"SELECT SUM(stored_bytes) FROM run_logs"_s));
    QCOMPARE(
        store->diskBytes(), store->diskBytesOf(1) + store->diskBytesOf(2) + store->diskBytesOf(3));
}

void TestDatabaseRunLogStore::lowerLimitsApplyWhenTheStoreOpens()
{
    auto store = open();
    QVERIFY(store);
    QVERIFY(store->append(1, output(0, 256, 4 * kKiB)));
    QVERIFY(store->append(2, output(0, 100, 4 * kKiB)));
    store.reset();
    // A member started with a lower cap and budget trims at once.
    store = open(RunLogLimits { 256 * kKiB, 384 * kKiB });
    QVERIFY(store);
    QVERIFY(store->diskBytesOf(1) <= 256 * kKiB);
    QVERIFY(store->diskBytes() <= 384 * kKiB);
    QCOMPARE(*store->endOf(1), quint64(1024 * kKiB));
    const WholeLog log = readAll(*store, 1);
    QCOMPARE(log.end, quint64(1024 * kKiB));
    QVERIFY(holdsOutputFrom(log.data, log.dataStart));
}

void TestDatabaseRunLogStore::aChangeThatIsNotCommittedStoresNothing()
{
    // A hub that dies inside an append (its transaction never commits)
    // stored nothing of it: the resend stores it all, once.
    auto store = open();
    QVERIFY(store);
    QVERIFY(store->append(5, output(0, 2, 1000)));
    {
        Database::Transaction dying(db());
        QVERIFY(dying.begin());
        QVERIFY(store->append(5, output(2000, 5, 1000)));
        QCOMPARE(*store->endOf(5), quint64(7000));
    }
    QCOMPARE(*store->endOf(5), quint64(2000));
    QVERIFY(store->append(5, output(2000, 5, 1000)));
    const WholeLog log = readAll(*store, 5);
    QVERIFY(log.contiguous);
    QVERIFY(log.gaps.isEmpty());
    QCOMPARE(log.data.size(), 7000);
    QVERIFY(holdsOutputFrom(log.data, 0));
}

void TestDatabaseRunLogStore::anotherMemberContinuesTheLogAndReadsItWhole()
{
    // Given a member that stored a run's output to 50 KB …
    auto first = open();
    QVERIFY(first);
    QVERIFY(first->append(7, output(0, 50, 1000)));
    // … when its agent reconnects to another member on the same database,
    auto connection = m_backends.connect();
    CLOOP_VERIFY_OK(connection);
    auto second = m_backends.open(connection->get(), RunLogLimits {}, {});
    QVERIFY(second);
    // that member names the same end, stores the resend once and continues …
    QCOMPARE(*second->endOf(7), quint64(50'000));
    QVERIFY(second->append(7, output(45'000, 20, 1000)));
    // … and either member reads the whole log, every byte once.
    for (const RunLogStore *reader : { first.get(), second.get() }) {
        const WholeLog log = readAll(*reader, 7, 0, 16 * kKiB);
        QVERIFY(log.contiguous);
        QVERIFY(log.gaps.isEmpty());
        QCOMPARE(log.end, quint64(65'000));
        QCOMPARE(log.data.size(), 65'000);
        QVERIFY(holdsOutputFrom(log.data, 0));
    }
    QCOMPARE(*first->endOf(7), quint64(65'000));
    QCOMPARE(first->diskBytes(), second->diskBytes());
    QCOMPARE(first->diskBytesOf(7), second->diskBytesOf(7));
}

void TestDatabaseRunLogStore::aSecondWriterWaitsAndSkipsWhatTheFirstStored()
{
    // Given a log with output committed, and a second member on a thread
    // of its own with its own connection …
    auto store = open();
    QVERIFY(store);
    QVERIFY(store->append(4, output(0, 2, 1000)));
    std::atomic<int> stage = 0; // 1: the second member is ready; 2: it may append
    std::atomic<bool> done = false;
    Status secondStored = Error::make(u"not_run"_s, u"the second member did not append"_s);
    std::thread other([&] {
        auto connection = m_backends.connect();
        auto second = connection ? DatabaseRunLogStore::open(**connection, RunLogLimits {}, {})
                                 : Result<std::unique_ptr<DatabaseRunLogStore>>(connection.error());
        stage = 1;
        while (stage != 2)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        secondStored = second ? (*second)->append(4, output(0, 15, 1000)) : Status(second.error());
        done = true;
    });
    for (int waited = 0; stage != 1 && waited < 30'000; waited += 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // … when the first member is in the middle of storing more (its
    // transaction open, the run's row locked) and the second is given all
    // of it and more, …
    Database::Transaction storing(db());
    const Status begun = storing.begin();
    const Status firstStored = begun ? store->append(4, output(2000, 8, 1000)) : begun;
    stage = 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // … the second waits for the first to commit …
    const bool waited = !done;
    const Status committed = firstStored ? storing.commit() : firstStored;
    other.join();
    CLOOP_VERIFY_OK(firstStored);
    QVERIFY(waited);
    CLOOP_VERIFY_OK(committed);
    CLOOP_VERIFY_OK(secondStored);
    // … and then stores only what followed: every byte once.
    const WholeLog log = readAll(*store, 4);
    QVERIFY(log.contiguous);
    QVERIFY(log.gaps.isEmpty());
    QCOMPARE(log.end, quint64(15'000));
    QCOMPARE(log.data.size(), 15'000);
    QVERIFY(holdsOutputFrom(log.data, 0));
    QCOMPARE(store->diskBytesOf(4),
        valueOf(db(), u"SELECT SUM(LENGTH(records)) + COUNT(*) * ? FROM run_log_chunks"_s,
            { DatabaseRunLogStore::kRowOverhead }));
}

void TestDatabaseRunLogStore::aSingleHubsLogFilesMoveInAsTheyAre()
{
    // Given a single hub's log files: run 1 capped, run 3 whole with a gap
    // of the agent's, …
    {
        auto files = FileRunLogStore::open(
            m_backends.directory(), RunLogLimits { 256 * kKiB, 64 * 1024 * kKiB }, {});
        CLOOP_VERIFY_OK(files);
        QVERIFY((*files)->append(1, output(0, 200, 4 * kKiB)));
        QVERIFY((*files)->append(2, output(0, 10, 4 * kKiB)));
        QVERIFY((*files)->append(3, output(0, 10, 4 * kKiB)));
        QVERIFY((*files)->append(3, output(60 * kKiB, 5, 4 * kKiB)));
    }
    // … and run 2, finished, trimmed away entirely for a budget, …
    {
        auto files = FileRunLogStore::open(
            m_backends.directory(), RunLogLimits { 256 * kKiB, 256 * kKiB }, [] {
                return QSet<qint64> { 1, 3 };
            });
        CLOOP_VERIFY_OK(files);
        QCOMPARE((*files)->diskBytesOf(2), qint64(0));
    }
    // … when they are copied in the copy's transaction …
    {
        Database::Transaction copying(db());
        QVERIFY(copying.begin());
        auto copied = RunLogCopy::copy(m_backends.directory(), db());
        CLOOP_VERIFY_OK(copied);
        QCOMPARE(copied->runs, 3);
        CLOOP_VERIFY_OK(copying.commit());
    }
    // … the database holds each log as the files did: where it was
    // trimmed, where it ends, every record.
    {
        auto files = FileRunLogStore::open(m_backends.directory(), RunLogLimits::unbounded(), {});
        CLOOP_VERIFY_OK(files);
        auto store = open(RunLogLimits::unbounded());
        QVERIFY(store);
        for (const qint64 run : { 1, 2, 3 }) {
            QCOMPARE(*store->endOf(run), *(*files)->endOf(run));
            const WholeLog mine = readAll(**files, run);
            const WholeLog theirs = readAll(*store, run);
            QCOMPARE(theirs.trimmedBefore, mine.trimmedBefore);
            QCOMPARE(theirs.gaps, mine.gaps);
            QCOMPARE(theirs.dataStart, mine.dataStart);
            QCOMPARE(theirs.data, mine.data);
        }
        QVERIFY(readAll(*store, 1).trimmedBefore > 0);
        QCOMPARE(
            readAll(*store, 2).gaps, (QList<std::pair<quint64, quint64>> { { 0, 40 * kKiB } }));
        QCOMPARE(readAll(*store, 3).gaps,
            (QList<std::pair<quint64, quint64>> { { 40 * kKiB, 20 * kKiB } }));
    }

    // A target whose log says otherwise (here: a file changed since) does
    // not compare, and the copy says which log and where.
    QFile segment(m_backends.directory() + u"/3.0.log"_s);
    QVERIFY(segment.open(QIODevice::ReadWrite));
    QVERIFY(segment.seek(protocol::kLogRecordHeaderSize + 10));
    const char flipped = char(byteAt(10) ^ 0x5a);
    QCOMPARE(segment.write(&flipped, 1), qint64(1));
    segment.close();
    Database::Transaction copying(db());
    QVERIFY(copying.begin());
    auto refused = RunLogCopy::copy(m_backends.directory(), db());
    QVERIFY(!refused);
    QVERIFY2(
        refused.error().message.contains(u"the log of run 3 differs in the target at offset 0"_s),
        qPrintable(refused.error().message));
}

QTEST_GUILESS_MAIN(TestDatabaseRunLogStore)
#include "tst_databaserunlogstore.moc"
