#include "hub/storage/runlogstore.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using protocol::LogRecord;
using protocol::LogRecordKind;

namespace {

constexpr qint64 kKiB = 1024;

// The byte a test workload wrote at stream offset `at`: any stored byte
// tells where in the output it came from.
char byteAt(quint64 at)
{
    return static_cast<char>((at * 131 + (at >> 9)) & 0xff);
}

// `count` data records of `size` bytes from `from`, stdout and stderr taking turns.
QList<LogRecord> output(quint64 from, int count, qsizetype size)
{
    QList<LogRecord> records;
    for (int i = 0; i < count; ++i) {
        QByteArray payload(size, Qt::Uninitialized);
        for (qsizetype j = 0; j < size; ++j)
            payload[j] = byteAt(from + quint64(j));
        records.append(
            LogRecord::data(i % 2 ? LogRecordKind::Stderr : LogRecordKind::Stdout, from, payload));
        from += quint64(size);
    }
    return records;
}

bool holdsOutputFrom(const QByteArray &data, quint64 from)
{
    for (qsizetype i = 0; i < data.size(); ++i) {
        if (data.at(i) != byteAt(from + quint64(i)))
            return false;
    }
    return true;
}

// A whole log read page by page from `from`: its data, its gaps as
// [offset, length], and whether every record continued the one before.
struct WholeLog
{
    QByteArray data;
    quint64 dataStart = 0;
    QList<std::pair<quint64, quint64>> gaps;
    quint64 end = 0;
    quint64 trimmedBefore = 0;
    bool contiguous = true;
};

WholeLog readAll(
    const RunLogStore &store, qint64 runId, quint64 from = 0, qsizetype pageBytes = 100 * kKiB)
{
    WholeLog log;
    log.end = from;
    for (;;) {
        auto page = store.read(runId, log.end, pageBytes);
        if (!page) {
            qWarning() << page.error().message;
            log.contiguous = false;
            return log;
        }
        if (page->records.isEmpty())
            return log;
        log.trimmedBefore = page->trimmedBefore;
        for (const LogRecord &record : std::as_const(page->records)) {
            log.contiguous &= record.offset == log.end;
            if (record.isGap()) {
                log.gaps.append({ record.offset, record.length() });
            } else {
                if (log.data.isEmpty())
                    log.dataStart = record.offset;
                log.data.append(record.payload);
            }
            log.end = record.end();
        }
    }
}

} // namespace

// The hub's run logs on disk: capped per run keeping the newest output, held
// to a budget across runs (finished runs first), exact about what they
// dropped, read by seeking, and continued from their true end after any
// trimming and restart.
class TestRunLogStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
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
    void aTornTailIsCutBeforeTheNextAppend();
    void aWrongIndexIsRebuiltNotTrusted();
    void aLogOfAnOlderHubIsAdoptedAndIndexed();

private:
    std::unique_ptr<RunLogStore> open(RunLogLimits limits);
    QString dir() const { return m_dir->path() + QLatin1String("/runs"); }

    std::unique_ptr<QTemporaryDir> m_dir;
    QSet<qint64> m_active;
};

void TestRunLogStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_active.clear();
}

void TestRunLogStore::cleanup()
{
    m_dir.reset();
}

std::unique_ptr<RunLogStore> TestRunLogStore::open(RunLogLimits limits)
{
    auto store = RunLogStore::open(dir(), limits, [this] { return m_active; });
    if (!store) {
        qWarning() << store.error().message;
        return nullptr;
    }
    return std::move(*store);
}

void TestRunLogStore::limitsAreChecked()
{
    QVERIFY(RunLogLimits {}.check());
    QCOMPARE(RunLogLimits {}.perRun, 64 * 1024 * kKiB);
    QVERIFY(!RunLogLimits({ 16 * kKiB, 1024 * kKiB }).check());
    QVERIFY(!RunLogLimits({ 1024 * kKiB, 512 * kKiB }).check());
    QVERIFY(!RunLogStore::open(dir(), RunLogLimits { 16 * kKiB, 1024 * kKiB }, {}));
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

    // … then it takes no more than its cap on disk, files included …
    QVERIFY2(
        store->diskBytesOf(7) <= limits.perRun, qPrintable(QString::number(store->diskBytesOf(7))));
    qint64 onDisk = 0;
    for (const QFileInfo &file : QDir(dir()).entryInfoList(QDir::Files))
        onDisk += file.size();
    QCOMPARE(onDisk, store->diskBytesOf(7));
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
    QCOMPARE(store->diskBytesOf(3), thirdBefore);
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
    QVERIFY(QDir(dir()).removeRecursively());
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
    // oldest output, and disk stays within the budget.
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
    }
}

void TestRunLogStore::aReadFromAFarOffsetSeeks()
{
    // Given a log of 3 MiB in one segment, in 1 KiB records …
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    for (int batch = 0; batch < 3; ++batch)
        QVERIFY(store->append(9, output(quint64(batch) * 1024 * kKiB, 1024, kKiB)));
    const QFileInfoList segments
        = QDir(dir()).entryInfoList({ QStringLiteral("9.*.log") }, QDir::Files);
    QCOMPARE(segments.size(), 1);
    QVERIFY(segments.first().size() > 3 * 1024 * kKiB);

    // … a read near its end takes from the file what lies within one index
    // stride and one record of the offset, and the page: nothing before.
    const auto expectSeek = [](const RunLogStore &reader) {
        const quint64 before = reader.bytesRead();
        const quint64 from = 3 * 1024 * kKiB - 5000;
        auto page = reader.read(9, from, 4 * kKiB);
        QVERIFY(page);
        QVERIFY(!page->records.isEmpty());
        QCOMPARE(page->records.first().offset, from);
        QVERIFY(holdsOutputFrom(page->records.first().payload, from));
        const quint64 taken = reader.bytesRead() - before;
        const quint64 bound = RunLogIndex::kStride
            + 2 * (protocol::kMaxLogPayload + protocol::kLogRecordHeaderSize) + 4 * kKiB;
        QVERIFY2(taken <= bound,
            qPrintable(QStringLiteral("read %1 bytes for a page at the end").arg(taken)));
    };
    expectSeek(*store);
    // The same from the index on disk, after a restart.
    store.reset();
    auto reopened = open(RunLogLimits {});
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
    m_active = { 12 };
    QVERIFY(store->append(12, output(0, 200, 4 * kKiB))); // pushes 11, finished, out entirely
    QCOMPARE(store->diskBytesOf(11), qint64(0));
    store.reset();

    store = open(limits);
    QVERIFY(store);
    QCOMPARE(*store->endOf(11), quint64(800 * kKiB));
    QCOMPARE(*store->endOf(12), quint64(800 * kKiB));
    QCOMPARE(*store->endOf(13), quint64(0));
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

void TestRunLogStore::aTornTailIsCutBeforeTheNextAppend()
{
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    QVERIFY(store->append(6, output(0, 4, 1000)));
    store.reset();
    // A crash in the middle of a write: half a record at the end.
    QFile segment(dir() + QLatin1String("/6.0.log"));
    QVERIFY(segment.open(QIODevice::Append));
    segment.write(protocol::encodeLogRecord(output(4000, 1, 1000).first()).first(500));
    segment.close();

    store = open(RunLogLimits {});
    QVERIFY(store);
    QCOMPARE(*store->endOf(6), quint64(4000));
    QVERIFY(store->append(6, output(4000, 2, 1000)));
    const WholeLog log = readAll(*store, 6);
    QVERIFY(log.contiguous);
    QVERIFY(log.gaps.isEmpty());
    QCOMPARE(log.end, quint64(6000));
    QVERIFY(holdsOutputFrom(log.data, 0));
}

void TestRunLogStore::aWrongIndexIsRebuiltNotTrusted()
{
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    QVERIFY(store->append(8, output(0, 100, 1000)));
    store.reset();
    // An entry that points into the middle of a record.
    QVERIFY(RunLogIndex(dir() + QLatin1String("/8.0.idx")).append({ { 90'000, 70'000 } }));

    store = open(RunLogLimits {});
    QVERIFY(store);
    QCOMPARE(*store->endOf(8), quint64(100'000));
    QVERIFY(store->append(8, output(100'000, 1, 1000)));
    const WholeLog log = readAll(*store, 8);
    QVERIFY(log.contiguous);
    QCOMPARE(log.data.size(), 101'000);
    QVERIFY(holdsOutputFrom(log.data, 0));
}

void TestRunLogStore::aLogOfAnOlderHubIsAdoptedAndIndexed()
{
    // An older hub kept <run>.log, unbounded and without an index.
    QVERIFY(QDir().mkpath(dir()));
    QFile older(dir() + QLatin1String("/21.log"));
    QVERIFY(older.open(QIODevice::WriteOnly));
    for (int batch = 0; batch < 2; ++batch)
        older.write(protocol::encodeLogRecords(output(quint64(batch) * 1024 * kKiB, 1024, kKiB)));
    older.close();

    auto store = open(RunLogLimits {});
    QVERIFY(store);
    QVERIFY(!QFile::exists(dir() + QLatin1String("/21.log")));
    QVERIFY(QFile::exists(dir() + QLatin1String("/21.0.idx")));
    QCOMPARE(*store->endOf(21), quint64(2048 * kKiB));
    const quint64 before = store->bytesRead();
    auto page = store->read(21, 2000 * kKiB, 4 * kKiB);
    QVERIFY(page && !page->records.isEmpty());
    QCOMPARE(page->records.first().offset, quint64(2000 * kKiB));
    QVERIFY(store->bytesRead() - before < 256 * kKiB);
    // From then on it is capped like any other log.
    store.reset();
    store = open(RunLogLimits { 256 * kKiB, 64 * 1024 * kKiB });
    QVERIFY(store);
    QVERIFY(store->append(21, output(2048 * kKiB, 100, 4 * kKiB)));
    QVERIFY(store->diskBytesOf(21) <= 256 * kKiB);
    const WholeLog log = readAll(*store, 21);
    QVERIFY(log.contiguous);
    QCOMPARE(log.end, quint64(2448 * kKiB));
    QVERIFY(holdsOutputFrom(log.data, log.dataStart));
}

QTEST_GUILESS_MAIN(TestRunLogStore)
#include "tst_runlogstore.moc"
