// What the file store (a single hub's run logs in its data folder) shows
// besides the behaviour every store owes (tst_runlogstore): its segment
// files, their indexes, and the repairs a crash or an older hub calls for.

#include "hub/storage/filerunlogstore.h"
#include "tests/hub/runlogsamples.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::testing;

class TestFileRunLogStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aLogIsKeptInIndexedSegments();
    void aTornTailIsCutBeforeTheNextAppend();
    void aWrongIndexIsRebuiltNotTrusted();
    void aLogOfAnOlderHubIsAdoptedAndIndexed();

private:
    std::unique_ptr<FileRunLogStore> open(RunLogLimits limits);
    QString dir() const { return m_dir->path() + QLatin1String("/runs"); }

    std::unique_ptr<QTemporaryDir> m_dir;
};

void TestFileRunLogStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestFileRunLogStore::cleanup()
{
    m_dir.reset();
}

std::unique_ptr<FileRunLogStore> TestFileRunLogStore::open(RunLogLimits limits)
{
    auto store = FileRunLogStore::open(dir(), limits, {});
    if (!store) {
        qWarning() << store.error().message;
        return nullptr;
    }
    return std::move(*store);
}

void TestFileRunLogStore::aLogIsKeptInIndexedSegments()
{
    // At the default cap a segment holds 4 MiB: 3 MiB of output is one
    // file, with its index beside it, and every byte of both is counted.
    auto store = open(RunLogLimits {});
    QVERIFY(store);
    for (int batch = 0; batch < 3; ++batch)
        QVERIFY(store->append(9, output(quint64(batch) * 1024 * kKiB, 1024, kKiB)));
    const QFileInfoList segments
        = QDir(dir()).entryInfoList({ QStringLiteral("9.*.log") }, QDir::Files);
    QCOMPARE(segments.size(), 1);
    QVERIFY(segments.first().size() > 3 * 1024 * kKiB);
    QVERIFY(QFile::exists(dir() + QLatin1String("/9.0.idx")));
    qint64 onDisk = 0;
    for (const QFileInfo &file : QDir(dir()).entryInfoList(QDir::Files))
        onDisk += file.size();
    QCOMPARE(onDisk, store->diskBytes());
    QCOMPARE(store->runIds(), QList<qint64> { 9 });
}

void TestFileRunLogStore::aTornTailIsCutBeforeTheNextAppend()
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

void TestFileRunLogStore::aWrongIndexIsRebuiltNotTrusted()
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

void TestFileRunLogStore::aLogOfAnOlderHubIsAdoptedAndIndexed()
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

QTEST_GUILESS_MAIN(TestFileRunLogStore)
#include "tst_filerunlogstore.moc"
