// Unit tests of the agent's bounded output buffer (common/runs/outputjournal.h):
// offsets, acknowledgement, dropping into gap records, resuming after a
// reconnect, the memory bound, and a randomized check against a plain model.

#include "common/runs/outputjournal.h"

#include <sys/mman.h>

#include <QList>
#include <QRandomGenerator>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;
using namespace cloop::runs;

namespace {

constexpr qsizetype KiB = 1024;
constexpr qsizetype MiB = 1024 * KiB;

QByteArray pattern(qsizetype size, quint64 seed)
{
    QByteArray out(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        out[i] = static_cast<char>((seed + quint64(i)) * 2654435761u >> 13);
    return out;
}

QList<LogRecord> recordsFrom(const OutputJournal &journal, quint64 offset)
{
    auto records = journal.recordsFrom(offset);
    if (!records)
        qFatal("recordsFrom(%llu): %s", static_cast<unsigned long long>(offset),
            qPrintable(records.error().message));
    return *records;
}

// Sends the records through the wire format, so every test also proves they
// encode and decode as a contiguous stream starting at `offset`.
QList<LogRecord> throughWire(const QList<LogRecord> &records, quint64 offset)
{
    LogRecordDecoder decoder(offset);
    const Status status = decoder.feed(encodeLogRecords(records));
    if (!status)
        qFatal("decode: %s", qPrintable(status.error().message));
    return decoder.takeRecords();
}

// The payloads of the data records, concatenated.
QByteArray dataBytes(const QList<LogRecord> &records)
{
    QByteArray out;
    for (const LogRecord &record : records)
        out += record.payload;
    return out;
}

} // namespace

class TestOutputJournal final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void offsetsContinueAcrossStreams();
    void smallWritesShareRecords();
    void splitsLargeWrites();
    void acknowledgeReleasesMemory();
    void acknowledgeIsIdempotentAndBounded();
    void dropsOldestIntoOneGap();
    void writerOfFiveMiBWithoutAcks();
    void dropCutsRecordKeepingTail();
    void resumesFromMidRecord();
    void resumesInsideGap();
    void resumeBehindAckIsRefused();
    void resumePastEndIsRefused();
    void ackInsideGapShortensIt();
    void zeroRetentionKeepsOnlyGaps();
    void hugeGapSplitsIntoRecords();
    void randomizedAgainstModel_data();
    void randomizedAgainstModel();
};

void TestOutputJournal::offsetsContinueAcrossStreams()
{
    OutputJournal journal;
    journal.append(OutputStream::Stdout, "out1\n");
    journal.append(OutputStream::Stderr, "err1\n");
    journal.append(OutputStream::Stdout, "o2");
    journal.append(OutputStream::Stdout, {});

    const QList<LogRecord> expected {
        LogRecord::data(LogRecordKind::Stdout, 0, "out1\n"),
        LogRecord::data(LogRecordKind::Stderr, 5, "err1\n"),
        LogRecord::data(LogRecordKind::Stdout, 10, "o2"),
    };
    QCOMPARE(recordsFrom(journal, 0), expected);
    QCOMPARE(throughWire(recordsFrom(journal, 0), 0), expected);
    QCOMPARE(journal.endOffset(), quint64(12));
    QCOMPARE(journal.bytesAppended(), quint64(12));
    QCOMPARE(journal.bytesDropped(), quint64(0));
    QCOMPARE(journal.retainedBytes(), 12);
    QCOMPARE(recordsFrom(journal, 12), QList<LogRecord> {});
}

void TestOutputJournal::smallWritesShareRecords()
{
    OutputJournal journal;
    for (int i = 0; i < 1000; ++i)
        journal.append(OutputStream::Stdout, "x");
    const QList<LogRecord> records = recordsFrom(journal, 0);
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.front().payload, QByteArray(1000, 'x'));

    // Shared records still stop at the payload limit.
    OutputJournal many;
    QByteArray all;
    for (int i = 0; i < 3000; ++i) {
        const QByteArray bytes = pattern(50, quint64(i) * 50);
        many.append(OutputStream::Stderr, bytes);
        all += bytes;
    }
    const QList<LogRecord> full = recordsFrom(many, 0);
    QCOMPARE(full.size(), 3);
    QCOMPARE(full[0].payload.size(), kMaxLogPayload);
    QCOMPARE(full[1].offset, quint64(kMaxLogPayload));
    QCOMPARE(full[1].payload.size(), kMaxLogPayload);
    QCOMPARE(full[2].payload.size(), 3000 * 50 - 2 * kMaxLogPayload);
    QCOMPARE(dataBytes(full), all);
}

void TestOutputJournal::splitsLargeWrites()
{
    OutputJournal journal;
    const QByteArray bytes = pattern(3 * kMaxLogPayload + 10, 1);
    journal.append(OutputStream::Stderr, bytes);
    const QList<LogRecord> records = recordsFrom(journal, 0);
    QCOMPARE(records.size(), 4);
    for (const LogRecord &record : records) {
        QCOMPARE(record.kind, LogRecordKind::Stderr);
        QVERIFY(record.payload.size() <= kMaxLogPayload);
    }
    QCOMPARE(dataBytes(records), bytes);
}

void TestOutputJournal::acknowledgeReleasesMemory()
{
    OutputJournal journal;
    for (int i = 0; i < 8; ++i)
        journal.append(i % 2 ? OutputStream::Stderr : OutputStream::Stdout, pattern(100 * KiB, i));
    QCOMPARE(journal.retainedBytes(), 800 * KiB);

    QVERIFY(journal.acknowledge(400 * KiB).ok());
    // The record holding offset 400 KiB keeps its acknowledged head until it goes.
    QVERIFY(journal.retainedBytes() >= 400 * KiB);
    QVERIFY(journal.retainedBytes() < 400 * KiB + kMaxLogPayload);
    QCOMPARE(journal.unacknowledgedBytes(), quint64(400 * KiB));
    QCOMPARE(recordsFrom(journal, 400 * KiB).front().offset, quint64(400 * KiB));

    QVERIFY(journal.acknowledge(journal.endOffset()).ok());
    QCOMPARE(journal.retainedBytes(), 0);
    QCOMPARE(recordsFrom(journal, journal.endOffset()), QList<LogRecord> {});
    QCOMPARE(journal.bytesDropped(), quint64(0));
}

void TestOutputJournal::acknowledgeIsIdempotentAndBounded()
{
    OutputJournal journal;
    journal.append(OutputStream::Stdout, "0123456789");
    QVERIFY(journal.acknowledge(4).ok());
    QVERIFY(journal.acknowledge(4).ok());
    QVERIFY(journal.acknowledge(2).ok()); // behind: ignored
    QCOMPARE(journal.acknowledgedOffset(), quint64(4));
    QCOMPARE(recordsFrom(journal, 4),
        QList<LogRecord> { LogRecord::data(LogRecordKind::Stdout, 4, "456789") });

    const Status beyond = journal.acknowledge(11);
    QVERIFY(!beyond.ok());
    QCOMPARE(beyond.error().code, QStringLiteral("log_offset_out_of_range"));
    QVERIFY(beyond.error().message.contains(QStringLiteral("past the end")));
    QCOMPARE(journal.acknowledgedOffset(), quint64(4));
    QVERIFY(journal.acknowledge(10).ok());
}

void TestOutputJournal::dropsOldestIntoOneGap()
{
    OutputJournal journal(10);
    journal.append(OutputStream::Stdout, "abcdef");
    journal.append(OutputStream::Stderr, "ghij");
    QCOMPARE(journal.bytesDropped(), quint64(0));
    journal.append(OutputStream::Stdout, "kl"); // drops "ab"
    journal.append(OutputStream::Stdout, "mnop"); // drops "cdef": gaps merge
    const QList<LogRecord> expected {
        LogRecord::gap(0, 6),
        LogRecord::data(LogRecordKind::Stderr, 6, "ghij"),
        LogRecord::data(LogRecordKind::Stdout, 10, "klmnop"),
    };
    QCOMPARE(recordsFrom(journal, 0), expected);
    QCOMPARE(journal.bytesDropped(), quint64(6));
    QCOMPARE(journal.dataStart(), quint64(6));
}

void TestOutputJournal::writerOfFiveMiBWithoutAcks()
{
    // Given the default 1 MiB retention and a hub that acknowledges nothing,
    // when a workload writes 5 MiB in writes of odd sizes on both streams,
    const qsizetype retain = OutputJournal::kDefaultRetainBytes;
    OutputJournal journal;
    QByteArray all;
    qsizetype peak = 0;
    QRandomGenerator random(5);
    while (all.size() < 5 * MiB) {
        const QByteArray bytes = pattern(
            qMin(5 * MiB - all.size(), qsizetype(random.bounded(1, 100 * KiB))), all.size());
        journal.append(random.bounded(3) ? OutputStream::Stdout : OutputStream::Stderr, bytes);
        all += bytes;
        peak = qMax(peak, journal.retainedBytes());
    }

    // then exactly one gap covers what was dropped, the last 1 MiB is kept,
    // and memory never went past the bound.
    QCOMPARE(journal.bytesAppended(), quint64(5 * MiB));
    QCOMPARE(journal.bytesDropped(), quint64(4 * MiB));
    QVERIFY2(peak < retain + kMaxLogPayload, qPrintable(QString::number(peak)));
    QVERIFY(journal.retainedBytes() >= retain);

    const QList<LogRecord> records = throughWire(recordsFrom(journal, 0), 0);
    QVERIFY(records.front().isGap());
    QCOMPARE(records.front().offset, quint64(0));
    QCOMPARE(quint64(records.front().gapLength), journal.bytesDropped());
    quint64 at = records.front().end();
    for (qsizetype i = 1; i < records.size(); ++i) {
        QVERIFY(!records[i].isGap());
        QCOMPARE(records[i].offset, at);
        QCOMPARE(records[i].payload, all.mid(qsizetype(at), records[i].payload.size()));
        at = records[i].end();
    }
    QCOMPARE(at, journal.endOffset());
    QCOMPARE(journal.endOffset() - records.front().end(), quint64(retain));
}

void TestOutputJournal::dropCutsRecordKeepingTail()
{
    OutputJournal journal(100);
    journal.append(OutputStream::Stderr, pattern(80, 0));
    journal.append(OutputStream::Stdout, pattern(50, 80));
    // 30 bytes of the stderr record went; its tail stays with its own offset.
    const QList<LogRecord> records = recordsFrom(journal, 0);
    const QList<LogRecord> expected {
        LogRecord::gap(0, 30),
        LogRecord::data(LogRecordKind::Stderr, 30, pattern(50, 30)),
        LogRecord::data(LogRecordKind::Stdout, 80, pattern(50, 80)),
    };
    QCOMPARE(records, expected);
}

void TestOutputJournal::resumesFromMidRecord()
{
    OutputJournal journal;
    journal.append(OutputStream::Stdout, "hello ");
    journal.append(OutputStream::Stderr, "world");
    journal.append(OutputStream::Stdout, "!");
    // The hub stored up to offset 8 ("hello wo") before the link dropped.
    const QList<LogRecord> expected {
        LogRecord::data(LogRecordKind::Stderr, 8, "rld"),
        LogRecord::data(LogRecordKind::Stdout, 11, "!"),
    };
    QCOMPARE(throughWire(recordsFrom(journal, 8), 8), expected);
    QCOMPARE(recordsFrom(journal, 6).front(), LogRecord::data(LogRecordKind::Stderr, 6, "world"));
}

void TestOutputJournal::resumesInsideGap()
{
    OutputJournal journal(20);
    journal.append(OutputStream::Stdout, pattern(50, 0)); // 0..30 dropped
    journal.append(OutputStream::Stderr, pattern(5, 50)); // 30..35 dropped
    QCOMPARE(journal.bytesDropped(), quint64(35));
    const QList<LogRecord> expected {
        LogRecord::gap(12, 23),
        LogRecord::data(LogRecordKind::Stdout, 35, pattern(15, 35)),
        LogRecord::data(LogRecordKind::Stderr, 50, pattern(5, 50)),
    };
    QCOMPARE(throughWire(recordsFrom(journal, 12), 12), expected);
    // Right at the end of the gap: no gap record at all.
    QCOMPARE(recordsFrom(journal, 35).front().kind, LogRecordKind::Stdout);
}

void TestOutputJournal::resumeBehindAckIsRefused()
{
    OutputJournal journal;
    journal.append(OutputStream::Stdout, pattern(1000, 0));
    QVERIFY(journal.acknowledge(600).ok());
    const auto behind = journal.recordsFrom(599);
    QVERIFY(!behind.ok());
    QCOMPARE(behind.error().code, QStringLiteral("log_offset_out_of_range"));
    QVERIFY2(behind.error().message.contains(QStringLiteral("acknowledged")),
        qPrintable(behind.error().message));
    QVERIFY(journal.recordsFrom(600).ok());
}

void TestOutputJournal::resumePastEndIsRefused()
{
    OutputJournal journal;
    journal.append(OutputStream::Stdout, "abc");
    QVERIFY(!journal.recordsFrom(4).ok());
    QVERIFY(journal.recordsFrom(3).ok());
}

void TestOutputJournal::ackInsideGapShortensIt()
{
    OutputJournal journal(10);
    journal.append(OutputStream::Stdout, pattern(30, 0)); // 0..20 dropped
    QVERIFY(journal.acknowledge(15).ok());
    QCOMPARE(recordsFrom(journal, 15).front(), LogRecord::gap(15, 5));
    QVERIFY(!journal.recordsFrom(14).ok());
    QCOMPARE(journal.bytesDropped(), quint64(20));
    QVERIFY(journal.acknowledge(25).ok());
    QCOMPARE(recordsFrom(journal, 25),
        QList<LogRecord> { LogRecord::data(LogRecordKind::Stdout, 25, pattern(5, 25)) });
}

void TestOutputJournal::zeroRetentionKeepsOnlyGaps()
{
    OutputJournal journal(0);
    journal.append(OutputStream::Stdout, "abc");
    journal.append(OutputStream::Stderr, "de");
    QCOMPARE(journal.retainedBytes(), 0);
    QCOMPARE(recordsFrom(journal, 0), QList<LogRecord> { LogRecord::gap(0, 5) });
    QCOMPARE(recordsFrom(journal, 5), QList<LogRecord> {});
}

void TestOutputJournal::hugeGapSplitsIntoRecords()
{
    // A gap longer than a u32 goes out as several gap records. The write is
    // an untouched anonymous mapping: the journal skips what it would drop
    // without reading it, so this costs no real memory.
    const qsizetype size = qsizetype(5) << 30;
    void *mapping = mmap(
        nullptr, size_t(size), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED)
        QSKIP("cannot map 5 GiB of address space here");
    OutputJournal journal(KiB);
    journal.append(OutputStream::Stdout, QByteArrayView(static_cast<const char *>(mapping), size));
    munmap(mapping, size_t(size));

    const QList<LogRecord> records = throughWire(recordsFrom(journal, 0), 0);
    QCOMPARE(records.size(), 3);
    QCOMPARE(records[0], LogRecord::gap(0, 0xffffffffu));
    QCOMPARE(records[1], LogRecord::gap(0xffffffffu, quint32(size - KiB - 0xffffffffLL)));
    QCOMPARE(records[2],
        LogRecord::data(LogRecordKind::Stdout, quint64(size - KiB), QByteArray(KiB, '\0')));
    QCOMPARE(journal.bytesDropped(), quint64(size - KiB));
}

void TestOutputJournal::randomizedAgainstModel_data()
{
    QTest::addColumn<quint32>("seed");
    for (const quint32 seed : { 1u, 2u, 3u, 17u, 99u, 2024u, 31337u, 424242u })
        QTest::newRow(qPrintable(QStringLiteral("seed %1").arg(seed))) << seed;
}

void TestOutputJournal::randomizedAgainstModel()
{
    QFETCH(quint32, seed);
    QRandomGenerator random(seed);
    const qsizetype retain = random.bounded(3) == 0 ? qsizetype(random.bounded(0, 64))
                                                    : qsizetype(random.bounded(1, 300 * KiB));
    OutputJournal journal(retain);

    // The model: every byte appended, the stream of each byte, the dropped
    // ranges (merged), the acknowledged offset.
    QByteArray reference;
    QByteArray streams;
    QList<QPair<quint64, quint64>> dropped; // [from, to)
    quint64 acked = 0;
    quint64 liveStart = 0; // first byte neither acknowledged nor dropped

    // How many bytes of [from, to) the model dropped.
    auto droppedIn = [&](quint64 from, quint64 to) {
        quint64 count = 0;
        for (const auto &range : dropped) {
            const quint64 a = qMax(range.first, from);
            const quint64 b = qMin(range.second, to);
            if (a < b)
                count += b - a;
        }
        return count;
    };

    for (int step = 0; step < 400; ++step) {
        const quint32 action = random.bounded(10);
        if (action < 6) {
            const qsizetype size = random.bounded(4) == 0 ? qsizetype(random.bounded(0, 200 * KiB))
                                                          : qsizetype(random.bounded(0, 2 * KiB));
            const auto stream = random.bounded(2) ? OutputStream::Stdout : OutputStream::Stderr;
            const QByteArray bytes = pattern(size, random.generate());
            journal.append(stream, bytes);
            reference += bytes;
            streams += QByteArray(size, char(stream));
            const quint64 end = quint64(reference.size());
            if (end - liveStart > quint64(retain)) {
                const quint64 newStart = end - quint64(retain);
                if (!dropped.isEmpty() && dropped.back().second == liveStart)
                    dropped.back().second = newStart;
                else
                    dropped.append({ liveStart, newStart });
                liveStart = newStart;
            }
        } else if (action < 8) {
            const quint64 end = quint64(reference.size());
            const quint64 offset = random.bounded(6) == 0 ? end + 1 + random.bounded(100)
                                                          : acked + random.bounded(end - acked + 1);
            const Status status = journal.acknowledge(offset);
            QCOMPARE(status.ok(), offset <= end);
            if (offset <= end && offset > acked) {
                acked = offset;
                liveStart = qMax(liveStart, acked);
            }
        } else {
            // A resume from a random legal offset, or an illegal one.
            const quint64 end = quint64(reference.size());
            if (acked > 0 && random.bounded(5) == 0) {
                QVERIFY(!journal.recordsFrom(random.bounded(acked)).ok());
                continue;
            }
            const quint64 from = acked + random.bounded(end - acked + 1);
            const QList<LogRecord> records = throughWire(recordsFrom(journal, from), from);
            quint64 at = from;
            quint64 gapBytes = 0;
            for (const LogRecord &record : records) {
                QCOMPARE(record.offset, at);
                // A gap covers only dropped bytes, data only kept ones.
                QCOMPARE(droppedIn(record.offset, record.end()),
                    record.isGap() ? record.length() : quint64(0));
                if (record.isGap()) {
                    gapBytes += record.gapLength;
                } else {
                    QCOMPARE(record.payload, reference.mid(qsizetype(at), record.payload.size()));
                    QCOMPARE(QByteArray(record.payload.size(), char(record.kind)),
                        streams.mid(qsizetype(at), record.payload.size()));
                }
                at = record.end();
            }
            QCOMPARE(at, end);
            QCOMPARE(gapBytes, droppedIn(from, end));
        }

        quint64 totalDropped = 0;
        for (const auto &range : dropped)
            totalDropped += range.second - range.first;
        QCOMPARE(journal.bytesDropped(), totalDropped);
        QCOMPARE(journal.endOffset(), quint64(reference.size()));
        QCOMPARE(journal.acknowledgedOffset(), acked);
        QVERIFY(journal.endOffset() - journal.dataStart() <= quint64(retain));
        QVERIFY2(journal.retainedBytes() < retain + kMaxLogPayload,
            qPrintable(QString::number(journal.retainedBytes())));
    }
}

QTEST_GUILESS_MAIN(TestOutputJournal)
#include "tst_outputjournal.moc"
