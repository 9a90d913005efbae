// The behaviour every run log store owes the hub, asked of each: files in
// the data folder (a single hub) and the database, on SQLite and on a real
// PostgreSQL server the test starts itself (a cluster). What only one of
// them has to show is in tst_filerunlogstore and tst_databaserunlogstore.

#include "hub/storage/runlogindex.h"
#include "tests/hub/runlogbackends.h"
#include "tests/hub/runlogsamples.h"

#include <QDir>
#include <QFileInfo>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::testing;
using protocol::LogRecord;

// Run logs: capped per run keeping the newest output, held to a budget
// across runs (finished runs first), exact about what they dropped, read by
// seeking, and continued from their true end after any trimming, restart
// or resend.
class TestRunLogStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase_data();
    void initTestCase();
    void init();
    void cleanup();

    void limitsAreChecked();
    void aRunsLogIsCappedKeepingTheNewestBytes();
    void readsFromAnOffsetAfterTrimming();
    void theBudgetTrimsTheOldestFinishedRunsFirst();
    void activeRunsAreTrimmedOnlyWhenNoFinishedLogIsLeft();
    void aReadFromAFarOffsetSeeks();
    void theEndSurvivesTrimmingAndRestarts();
    void aResendIsNeverStoredTwice();
    void aResendAfterACrashBeforeTheAckStoresNothingTwice();

private:
    std::unique_ptr<RunLogStore> open(RunLogLimits limits);
    std::unique_ptr<RunLogStore> restart(std::unique_ptr<RunLogStore> &store, RunLogLimits limits);
    // What the run's log really takes where it is kept, counted apart from
    // the store's own figure.
    qint64 heldBytes(qint64 runId) const;

    RunLogBackends m_backends;
    QSet<qint64> m_active;
};

void TestRunLogStore::initTestCase_data()
{
    RunLogBackends::addRows(true);
}

void TestRunLogStore::initTestCase()
{
    m_backends.startServer();
}

void TestRunLogStore::init()
{
    m_active.clear();
    CLOOP_PREPARE_LOG_BACKEND(m_backends);
}

void TestRunLogStore::cleanup()
{
    m_backends.close();
}

std::unique_ptr<RunLogStore> TestRunLogStore::open(RunLogLimits limits)
{
    return m_backends.open(limits, [this] { return m_active; });
}

std::unique_ptr<RunLogStore> TestRunLogStore::restart(
    std::unique_ptr<RunLogStore> &store, RunLogLimits limits)
{
    return m_backends.restart(store, limits, [this] { return m_active; });
}

qint64 TestRunLogStore::heldBytes(qint64 runId) const
{
    if (!m_backends.isDatabase()) {
        qint64 onDisk = 0;
        for (const QFileInfo &file :
            QDir(m_backends.directory())
                .entryInfoList({ QStringLiteral("%1.*").arg(runId) }, QDir::Files))
            onDisk += file.size();
        return onDisk;
    }
    auto rows = m_backends.database()->query(
        QStringLiteral("SELECT COALESCE(SUM(LENGTH(records)), 0), COUNT(*) FROM run_log_chunks "
                       "WHERE run_id = ?"),
        { runId });
    if (!rows || !rows->next())
        return -1;
    return rows->value(0).toLongLong()
        + rows->value(1).toLongLong() * DatabaseRunLogStore::kRowOverhead;
}

void TestRunLogStore::limitsAreChecked()
{
    QVERIFY(RunLogLimits {}.check());
    QCOMPARE(RunLogLimits {}.perRun, 64 * 1024 * kKiB);
    QVERIFY(!RunLogLimits({ 16 * kKiB, 1024 * kKiB }).check());
    QVERIFY(!RunLogLimits({ 1024 * kKiB, 512 * kKiB }).check());
    QVERIFY(RunLogLimits::unbounded().check());
    QVERIFY(!open(RunLogLimits { 16 * kKiB, 1024 * kKiB }));
}

void TestRunLogStore::aRunsLogIsCappedKeepingTheNewestBytes()
{
    // Given a cap of 256 KiB, when a run writes 2 MiB in 4 KiB records …
    const RunLogLimits limits { 256 * kKiB, 64 * 1024 * kKiB };
    auto store = open(limits);
    QVERIFY(store);
    const quint64 total = 2048 * kKiB;
    for (int batch = 0; batch < 16; ++batch)
        QVERIFY(store->append(7, output(quint64(batch) * 128 * kKiB, 32, 4 * kKiB)));

    // … then it takes no more than its cap, what holds it included …
    QVERIFY2(
        store->diskBytesOf(7) <= limits.perRun, qPrintable(QString::number(store->diskBytesOf(7))));
    QCOMPARE(heldBytes(7), store->diskBytesOf(7));
    QCOMPARE(store->diskBytes(), store->diskBytesOf(7));
    // … it holds the newest output, up to the end, byte for byte …
    const WholeLog log = readAll(*store, 7);
    QVERIFY(log.contiguous);
    QCOMPARE(log.end, total);
    QVERIFY(holdsOutputFrom(log.data, log.dataStart));
    QCOMPARE(log.dataStart + quint64(log.data.size()), total);
    QVERIFY2(log.data.size() >= limits.perRun - limits.segmentBytes() - 2 * (4 * kKiB + 13),
        qPrintable(QString::number(log.data.size())));
    // … and says exactly how much it dropped: everything before what it holds.
    QCOMPARE(log.gaps.size(), 1);
    QCOMPARE(log.gaps.first().first, quint64(0));
    QCOMPARE(log.gaps.first().second, total - quint64(log.data.size()));
    QCOMPARE(log.trimmedBefore, log.dataStart);
    QCOMPARE(*store->endOf(7), total);
}

void TestRunLogStore::readsFromAnOffsetAfterTrimming()
{
    auto store = open(RunLogLimits { 256 * kKiB, 64 * 1024 * kKiB });
    QVERIFY(store);
    QVERIFY(store->append(3, output(0, 300, 3000)));
    const quint64 start = readAll(*store, 3).trimmedBefore;
    QVERIFY(start > 0);

    // From inside what is held: the output exactly from there.
    const quint64 inside = start + 12'345;
    const WholeLog fromInside = readAll(*store, 3, inside, 7 * kKiB);
    QVERIFY(fromInside.contiguous);
    QVERIFY(fromInside.gaps.isEmpty());
    QCOMPARE(fromInside.dataStart, inside);
    QVERIFY(holdsOutputFrom(fromInside.data, inside));
    QCOMPARE(fromInside.end, quint64(900'000));

    // From inside what was dropped: the rest of the drop, then the output.
    auto page = store->read(3, start - 100, 64 * kKiB);
    QVERIFY(page);
    QVERIFY(page->records.size() >= 2);
    QCOMPARE(page->records.first(), LogRecord::gap(start - 100, 100));
    QCOMPARE(page->records.at(1).offset, start);
    QCOMPARE(page->trimmedBefore, start);
    // Past the end: nothing.
    QVERIFY(store->read(3, 900'000, 64 * kKiB)->records.isEmpty());
    QVERIFY(store->read(3, 5'000'000, 64 * kKiB)->records.isEmpty());
    // A run without a log: nothing, and nothing trimmed.
    auto none = store->read(99, 0, 64 * kKiB);
    QVERIFY(none && none->records.isEmpty());
    QCOMPARE(none->trimmedBefore, quint64(0));
    // A page is bounded, whatever it was asked for from.
    auto bounded = store->read(3, start, 10 * kKiB);
    qsizetype payload = 0;
    for (const LogRecord &record : std::as_const(bounded->records))
        payload += record.payload.size();
    QVERIFY(payload >= 10 * kKiB && payload < 10 * kKiB + 3000);
}

void TestRunLogStore::theBudgetTrimsTheOldestFinishedRunsFirst()
{
    // Given a budget of 600 KiB, two finished runs of 200 KiB each and an
    // active run older than both …
    auto store = open(RunLogLimits { 256 * kKiB, 600 * kKiB });
    QVERIFY(store);
    m_active = { 1 };
    QVERIFY(store->append(2, output(0, 50, 4 * kKiB)));
    QVERIFY(store->append(3, output(0, 50, 4 * kKiB)));
    const qint64 thirdBefore = store->diskBytesOf(3);
    // … when the active run, still within its cap, takes the total past it …
    QVERIFY(store->append(1, output(0, 60, 4 * kKiB)));
    // … the oldest finished run loses its oldest output, and only it.
    QVERIFY2(store->diskBytes() <= 600 * kKiB, qPrintable(QString::number(store->diskBytes())));
    QVERIFY(store->diskBytesOf(2) < 200 * kKiB);
    QVERIFY(store->diskBytesOf(2) > 0);
    QCOMPARE(heldBytes(2), store->diskBytesOf(2));
    QCOMPARE(store->diskBytesOf(3), thirdBefore);
    QCOMPARE(
        store->diskBytes(), store->diskBytesOf(1) + store->diskBytesOf(2) + store->diskBytesOf(3));
    QVERIFY(readAll(*store, 1).gaps.isEmpty());
    const WholeLog oldest = readAll(*store, 2);
    QVERIFY(oldest.contiguous);
    QCOMPARE(oldest.gaps.size(), 1);
    QCOMPARE(oldest.gaps.first().second + quint64(oldest.data.size()), quint64(200 * kKiB));
    QVERIFY(holdsOutputFrom(oldest.data, oldest.dataStart));

    // Given a budget of one run's cap and a finished run of 100 KiB, when an
    // active run grows to nearly the cap, the finished run's log goes
    // entirely, and it still says how long it was.
    store.reset();
    QString why;
    QVERIFY2(m_backends.prepare(m_backends.backend(), why), qPrintable(why));
    store = open(RunLogLimits { 256 * kKiB, 256 * kKiB });
    QVERIFY(store);
    m_active = {};
    QVERIFY(store->append(1, output(0, 25, 4 * kKiB)));
    m_active = { 2 };
    QVERIFY(store->append(2, output(0, 40, 4 * kKiB)));
    QVERIFY(store->diskBytesOf(1) > 0);
    QVERIFY(store->append(2, output(160 * kKiB, 20, 4 * kKiB)));
    QVERIFY(store->diskBytes() <= 256 * kKiB);
    QCOMPARE(store->diskBytesOf(1), qint64(0));
    QCOMPARE(heldBytes(1), qint64(0));
    const WholeLog gone = readAll(*store, 1);
    QVERIFY(gone.data.isEmpty());
    QCOMPARE(gone.gaps, (QList<std::pair<quint64, quint64>> { { 0, 100 * kKiB } }));
    QCOMPARE(*store->endOf(1), quint64(100 * kKiB));
    QVERIFY(readAll(*store, 2).gaps.isEmpty());
}

void TestRunLogStore::activeRunsAreTrimmedOnlyWhenNoFinishedLogIsLeft()
{
    // Two active runs at their cap fill more than a budget of 1.5 caps: the
    // finished run's log goes entirely, then the active runs lose their own
    // oldest output, and storage stays within the budget.
    const RunLogLimits limits { 512 * kKiB, 768 * kKiB };
    auto store = open(limits);
    QVERIFY(store);
    QVERIFY(store->append(3, output(0, 10, 4 * kKiB)));
    m_active = { 4, 5 };
    for (int batch = 0; batch < 8; ++batch) {
        QVERIFY(store->append(4, output(quint64(batch) * 128 * kKiB, 32, 4 * kKiB)));
        QVERIFY(store->append(5, output(quint64(batch) * 128 * kKiB, 32, 4 * kKiB)));
        QVERIFY2(
            store->diskBytes() <= limits.total, qPrintable(QString::number(store->diskBytes())));
    }
    QCOMPARE(store->diskBytesOf(3), qint64(0));
    for (const qint64 run : { 4, 5 }) {
        const WholeLog log = readAll(*store, run);
        QVERIFY(log.contiguous);
        QCOMPARE(log.end, quint64(1024 * kKiB));
        QVERIFY(log.data.size() > 128 * kKiB);
        QVERIFY(holdsOutputFrom(log.data, log.dataStart));
        QCOMPARE(log.gaps, (QList<std::pair<quint64, quint64>> { { 0, log.dataStart } }));
        QCOMPARE(heldBytes(run), store->diskBytesOf(run));
    }
}

void TestRunLogStore::aReadFromAFarOffsetSeeks()
{
    // Given a log of 3 MiB in 1 KiB records …
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    for (int batch = 0; batch < 3; ++batch)
        QVERIFY(store->append(9, output(quint64(batch) * 1024 * kKiB, 1024, kKiB)));

    // … a read near its end takes what lies near the offset, and the page:
    // within one index stride and one record of the offset from a file, at
    // most the two chunks around it from the database; nothing before.
    const quint64 record = protocol::kMaxLogPayload + protocol::kLogRecordHeaderSize;
    const quint64 bound = m_backends.isDatabase() ? 2 * (DatabaseRunLogStore::kChunkBytes + record)
                                                  : RunLogIndex::kStride + 2 * record + 4 * kKiB;
    const auto expectSeek = [bound](const RunLogStore &reader) {
        const quint64 before = reader.bytesRead();
        const quint64 from = 3 * 1024 * kKiB - 5000;
        auto page = reader.read(9, from, 4 * kKiB);
        QVERIFY(page);
        QVERIFY(!page->records.isEmpty());
        QCOMPARE(page->records.first().offset, from);
        QVERIFY(holdsOutputFrom(page->records.first().payload, from));
        const quint64 taken = reader.bytesRead() - before;
        QVERIFY2(taken > 0 && taken <= bound,
            qPrintable(QStringLiteral("read %1 bytes for a page at the end").arg(taken)));
    };
    expectSeek(*store);
    // The same from what is stored alone, after a restart.
    auto reopened = restart(store, RunLogLimits {});
    QVERIFY(reopened);
    expectSeek(*reopened);
    QCOMPARE(*reopened->endOf(9), quint64(3 * 1024 * kKiB));
}

void TestRunLogStore::theEndSurvivesTrimmingAndRestarts()
{
    // The agent resends from the end the hub names (run.ack): trimming and
    // a restart must leave it at the end of the output, not of what is held.
    const RunLogLimits limits { 256 * kKiB, 256 * kKiB };
    auto store = open(limits);
    QVERIFY(store);
    QVERIFY(store->append(11, output(0, 200, 4 * kKiB)));
    // Two active runs at their cap pass the budget by far: the finished
    // run's log goes entirely, however the store cuts it in pieces.
    m_active = { 12, 13 };
    QVERIFY(store->append(12, output(0, 200, 4 * kKiB)));
    QVERIFY(store->append(13, output(0, 200, 4 * kKiB)));
    QCOMPARE(store->diskBytesOf(11), qint64(0));

    store = restart(store, limits);
    QVERIFY(store);
    QCOMPARE(*store->endOf(11), quint64(800 * kKiB));
    QCOMPARE(*store->endOf(12), quint64(800 * kKiB));
    QCOMPARE(*store->endOf(13), quint64(800 * kKiB));
    QCOMPARE(*store->endOf(14), quint64(0));
    // Output that continues a trimmed log follows on from its end.
    QVERIFY(store->append(12, output(800 * kKiB, 2, 4 * kKiB)));
    const WholeLog log = readAll(*store, 12);
    QVERIFY(log.contiguous);
    QCOMPARE(log.end, quint64(808 * kKiB));
    QVERIFY(holdsOutputFrom(log.data, log.dataStart));
    // Late output of a run whose log went entirely is kept after the gap.
    QVERIFY(store->append(11, output(800 * kKiB, 1, 4 * kKiB)));
    const WholeLog late = readAll(*store, 11);
    QCOMPARE(late.gaps, (QList<std::pair<quint64, quint64>> { { 0, 800 * kKiB } }));
    QCOMPARE(late.dataStart, quint64(800 * kKiB));
    QCOMPARE(late.data.size(), 4 * kKiB);
}

void TestRunLogStore::aResendIsNeverStoredTwice()
{
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    QVERIFY(store->append(5, output(0, 10, 1000)));
    // The agent resends from 4500 (the hub stopped before it acknowledged):
    // what is stored is skipped, the rest continues.
    QVERIFY(store->append(5, output(4500, 10, 1000)));
    // A hole (the hub lost bytes it had acknowledged) becomes a gap.
    QVERIFY(store->append(5, output(20'000, 1, 1000)));
    const WholeLog log = readAll(*store, 5);
    QVERIFY(log.contiguous);
    QCOMPARE(log.end, quint64(21'000));
    QCOMPARE(log.gaps, (QList<std::pair<quint64, quint64>> { { 14'500, 5'500 } }));
    QCOMPARE(log.data.size(), 15'500);
    QVERIFY(holdsOutputFrom(log.data.first(14'500), 0));
}

void TestRunLogStore::aResendAfterACrashBeforeTheAckStoresNothingTwice()
{
    // Given output the agent saw acknowledged up to 3000, and 7000 more
    // bytes the hub stored but died before acknowledging …
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    QVERIFY(store->append(6, output(0, 3, 1000)));
    QVERIFY(store->append(6, output(3000, 7, 1000)));
    const qint64 held = store->diskBytesOf(6);
    store = restart(store, RunLogLimits {});
    QVERIFY(store);
    // … the hub that comes back names the true end, …
    QCOMPARE(*store->endOf(6), quint64(10'000));
    // … and an agent that resends everything unacknowledged anyway, then
    // more, has each byte stored once: nothing twice, nothing lost.
    QVERIFY(store->append(6, output(3000, 9, 1000)));
    QVERIFY(store->append(6, output(3000, 9, 1000)));
    const WholeLog log = readAll(*store, 6);
    QVERIFY(log.contiguous);
    QVERIFY(log.gaps.isEmpty());
    QCOMPARE(log.end, quint64(12'000));
    QCOMPARE(log.data.size(), 12'000);
    QVERIFY(holdsOutputFrom(log.data, 0));
    QCOMPARE(*store->endOf(6), quint64(12'000));
    QVERIFY(store->diskBytesOf(6) > held);
    QVERIFY2(store->diskBytesOf(6) < held + 2 * 1000 + 1024,
        qPrintable(QString::number(store->diskBytesOf(6))));
    QCOMPARE(heldBytes(6), store->diskBytesOf(6));
}

QTEST_GUILESS_MAIN(TestRunLogStore)
#include "tst_runlogstore.moc"
