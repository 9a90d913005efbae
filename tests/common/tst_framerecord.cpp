// Unit tests of the frame record format on layer-2 device channels
// (common/protocol/framerecord.h): the byte layout written out here,
// lengths out of bounds, bounded memory, and chunking that must not matter.

#include "common/protocol/framerecord.h"
#include "streamdecoding.h"

#include <QRandomGenerator>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;
using cloop::device::l2::kMaxFrameBytes;
using cloop::device::l2::VnetHeader;

namespace {

QByteArray hex(const char *text)
{
    return QByteArray::fromHex(QByteArray(text));
}

QByteArray lengthPrefix(quint32 length)
{
    QByteArray out;
    for (int shift = 24; shift >= 0; shift -= 8)
        out.append(static_cast<char>(length >> shift));
    return out;
}

QByteArray frameBytes(qsizetype size, quint32 seed)
{
    QRandomGenerator random(seed);
    QByteArray out(size, Qt::Uninitialized);
    for (char &c : out)
        c = static_cast<char>(random.bounded(256));
    return out;
}

VnetHeader headerFor(int i)
{
    VnetHeader header;
    header.flags = static_cast<quint8>(i % 4);
    header.gsoType = static_cast<quint8>(i % 3 == 0 ? VnetHeader::kGsoTcpV4 : VnetHeader::kGsoNone);
    header.hdrLen = static_cast<quint16>(i * 3);
    header.gsoSize = static_cast<quint16>(1448 + i);
    header.csumStart = static_cast<quint16>(34 + i);
    header.csumOffset = static_cast<quint16>(i % 17);
    return header;
}

QByteArray encodeAll(const QList<FrameRecord> &records)
{
    QByteArray out;
    for (const FrameRecord &record : records)
        appendFrameRecord(out, record.header, record.frame);
    return out;
}

QList<FrameRecord> decodeInChunks(QByteArrayView bytes, qsizetype chunkSize)
{
    return cloop::testing::decodeInChunks<FrameRecordDecoder, FrameRecord>(bytes, chunkSize);
}

QList<FrameRecord> sampleRecords(int count, qsizetype maxFrame)
{
    QList<FrameRecord> records;
    QRandomGenerator random(99);
    for (int i = 0; i < count; ++i) {
        const qsizetype size = 14 + random.bounded(int(maxFrame - 14 + 1));
        records.append(FrameRecord { headerFor(i), frameBytes(size, quint32(i)) });
    }
    return records;
}

Status feedAll(FrameRecordDecoder &decoder, QByteArrayView bytes, qsizetype chunk)
{
    Status status;
    for (qsizetype at = 0; at < bytes.size() && status.ok(); at += chunk)
        status = decoder.feed(bytes.sliced(at, qMin(chunk, bytes.size() - at)));
    return status;
}

} // namespace

class TestFrameRecord final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void encodesLayout();
    void appendsToExisting();
    void roundTrips();
    void acceptsLimits();
    void everySplitPoint();
    void everyPairOfSplitPoints();
    void oneByteAtATimeEqualsWhole();
    void randomChunksEqualWhole();
    void refusesLength_data();
    void refusesLength();
    void staysFailed();
    void keepsRecordsBeforeFault();
    void hugeLengthAllocatesNothing();
    void buffersAtMostOneRecord();
    void nextAndTakeRecordsShareTheQueue();
    void validates();
};

void TestFrameRecord::encodesLayout()
{
    VnetHeader header;
    header.flags = VnetHeader::kNeedsCsum;
    header.gsoType = VnetHeader::kGsoNone;
    header.hdrLen = 0x0102;
    header.gsoSize = 0;
    header.csumStart = 34;
    header.csumOffset = 6;
    const QByteArray frame = hex("ffffffffffff 020000000002 0806");

    //                   length   flags gso hdrLen gsoSize start offset  frame
    const QByteArray expected = hex("00000018 01    00  0201   0000    2200  0600") + frame;
    QCOMPARE(encodeFrameRecord(header, frame), expected);

    FrameRecordDecoder decoder;
    QVERIFY(decoder.feed(expected).ok());
    FrameRecord record;
    QVERIFY(decoder.next(record));
    QCOMPARE(record.header, header);
    QCOMPARE(record.frame, frame);
    QVERIFY(!decoder.next(record));
    QCOMPARE(decoder.consumedBytes(), quint64(expected.size()));
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void TestFrameRecord::appendsToExisting()
{
    const QList<FrameRecord> records = sampleRecords(5, 200);
    QByteArray out("prefix");
    QByteArray separately("prefix");
    for (const FrameRecord &record : records) {
        appendFrameRecord(out, record.header, record.frame);
        separately += encodeFrameRecord(record.header, record.frame);
    }
    QCOMPARE(out, separately);
}

void TestFrameRecord::roundTrips()
{
    const QList<FrameRecord> records = sampleRecords(50, 3000);
    const QByteArray bytes = encodeAll(records);
    FrameRecordDecoder decoder;
    QVERIFY(decoder.feed(bytes).ok());
    QCOMPARE(decoder.takeRecords(), records);
    QCOMPARE(decoder.consumedBytes(), quint64(bytes.size()));
    QVERIFY(!decoder.hasRecords());
}

void TestFrameRecord::acceptsLimits()
{
    const QList<FrameRecord> records {
        FrameRecord { headerFor(1), frameBytes(14, 1) },
        FrameRecord { headerFor(2), frameBytes(kMaxFrameBytes, 2) },
        FrameRecord { headerFor(3), frameBytes(14, 3) },
    };
    const QByteArray bytes = encodeAll(records);
    QCOMPARE(bytes.first(4), lengthPrefix(24));
    QCOMPARE(bytes.sliced(28, 4), lengthPrefix(10 + kMaxFrameBytes));
    for (const qsizetype chunk : { qsizetype(1), qsizetype(7), qsizetype(65536), bytes.size() })
        QCOMPARE(decodeInChunks(bytes, chunk), records);
}

void TestFrameRecord::everySplitPoint()
{
    const QList<FrameRecord> records {
        FrameRecord { headerFor(1), frameBytes(60, 1) },
        FrameRecord { headerFor(2), frameBytes(1514, 2) },
        FrameRecord { headerFor(3), frameBytes(14, 3) },
    };
    const QByteArray bytes = encodeAll(records);
    for (qsizetype split = 0; split <= bytes.size(); ++split) {
        FrameRecordDecoder decoder;
        QVERIFY(decoder.feed(QByteArrayView(bytes).first(split)).ok());
        QList<FrameRecord> decoded = decoder.takeRecords();
        QVERIFY(decoder.feed(QByteArrayView(bytes).sliced(split)).ok());
        decoded += decoder.takeRecords();
        QCOMPARE(decoded, records);
        QCOMPARE(decoder.bufferedBytes(), 0);
        QCOMPARE(decoder.consumedBytes(), quint64(bytes.size()));
    }
}

void TestFrameRecord::everyPairOfSplitPoints()
{
    const QList<FrameRecord> records {
        FrameRecord { headerFor(4), frameBytes(20, 4) },
        FrameRecord { headerFor(5), frameBytes(14, 5) },
        FrameRecord { headerFor(6), frameBytes(33, 6) },
    };
    const QByteArray bytes = encodeAll(records);
    const QByteArrayView view(bytes);
    for (qsizetype first = 0; first <= bytes.size(); ++first) {
        for (qsizetype second = first; second <= bytes.size(); ++second) {
            FrameRecordDecoder decoder;
            QVERIFY(decoder.feed(view.first(first)).ok());
            QVERIFY(decoder.feed(view.sliced(first, second - first)).ok());
            QVERIFY(decoder.feed(view.sliced(second)).ok());
            QList<FrameRecord> decoded;
            FrameRecord record;
            while (decoder.next(record))
                decoded.append(record);
            if (decoded != records)
                QFAIL(qPrintable(QStringLiteral("split at %1 and %2").arg(first).arg(second)));
        }
    }
}

void TestFrameRecord::oneByteAtATimeEqualsWhole()
{
    const QList<FrameRecord> records = sampleRecords(1000, 200);
    const QByteArray bytes = encodeAll(records);
    const QList<FrameRecord> whole = decodeInChunks(bytes, bytes.size());
    QCOMPARE(whole, records);
    QCOMPARE(decodeInChunks(bytes, 1), whole);
}

void TestFrameRecord::randomChunksEqualWhole()
{
    const QList<FrameRecord> records = sampleRecords(100, 9000);
    const QByteArray bytes = encodeAll(records);
    QRandomGenerator random(4242);
    for (int round = 0; round < 30; ++round) {
        FrameRecordDecoder decoder;
        QByteArrayView rest(bytes);
        QList<FrameRecord> decoded;
        while (!rest.isEmpty()) {
            const qsizetype n = qMin(rest.size(), qsizetype(random.bounded(1, 20000)));
            QVERIFY(decoder.feed(rest.first(n)).ok());
            decoded += decoder.takeRecords();
            rest = rest.sliced(n);
        }
        QCOMPARE(decoded, records);
    }
}

void TestFrameRecord::refusesLength_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    const QByteArray good = encodeFrameRecord(headerFor(1), frameBytes(50, 1)); // 64 bytes
    QTest::newRow("length 0") << lengthPrefix(
        0) << "frame record at stream byte 0 declares 0 bytes, fewer than the 24";
    QTest::newRow("vnet header only")
        << lengthPrefix(10) + QByteArray(10, '\0') << "stream byte 0 declares 10 bytes";
    QTest::newRow("one byte short")
        << lengthPrefix(23) + QByteArray(23, 'x')
        << "frame record at stream byte 0 declares 23 bytes, fewer than the 24 of a vnet header "
           "and an Ethernet header";
    QTest::newRow("one byte long")
        << lengthPrefix(10 + kMaxFrameBytes + 1)
        << "frame record at stream byte 0 declares 65564 bytes, more than the 65563-byte limit";
    QTest::newRow("huge") << lengthPrefix(0xffffffffu)
                          << "declares 4294967295 bytes, more than the 65563-byte limit";
    QTest::newRow("second record too short")
        << good + lengthPrefix(3) << "frame record at stream byte 64 declares 3 bytes";
    QTest::newRow("third record too long") << good + good + lengthPrefix(0x10000000)
            + QByteArray(100, 'x') << "frame record at stream byte 128 declares 268435456 bytes";
}

void TestFrameRecord::refusesLength()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);

    for (const qsizetype chunk : { qsizetype(1), qsizetype(3), bytes.size() }) {
        FrameRecordDecoder decoder;
        const Status status = feedAll(decoder, bytes, chunk);
        QVERIFY(!status.ok());
        QVERIFY(decoder.failed());
        QCOMPARE(status.error().code, QStringLiteral("malformed_frame_record"));
        QVERIFY2(status.error().message.contains(message), qPrintable(status.error().message));
        QCOMPARE(decoder.error().message, status.error().message);
        QCOMPARE(decoder.bufferedBytes(), 0);
    }
}

void TestFrameRecord::staysFailed()
{
    FrameRecordDecoder decoder;
    QVERIFY(!decoder.feed(lengthPrefix(5)).ok());
    const QString message = decoder.error().message;
    const Status again = decoder.feed(encodeFrameRecord(headerFor(0), frameBytes(60, 0)));
    QVERIFY(!again.ok());
    QCOMPARE(again.error().message, message);
    QVERIFY(!decoder.hasRecords());
    QCOMPARE(decoder.consumedBytes(), quint64(0));
}

void TestFrameRecord::keepsRecordsBeforeFault()
{
    const FrameRecord good { headerFor(7), frameBytes(100, 7) };
    FrameRecordDecoder decoder;
    QVERIFY(!decoder.feed(encodeFrameRecord(good.header, good.frame) + lengthPrefix(1)).ok());
    QCOMPARE(decoder.takeRecords(), QList<FrameRecord> { good });
    QCOMPARE(decoder.consumedBytes(), quint64(4 + 10 + 100));
}

void TestFrameRecord::hugeLengthAllocatesNothing()
{
    // The length is judged on its own 4 bytes, before anything is reserved
    // and before any payload is waited for.
    FrameRecordDecoder decoder;
    QVERIFY(decoder.feed(hex("ff")).ok());
    QVERIFY(decoder.feed(hex("ff ff")).ok());
    const Status status = decoder.feed(hex("ff"));
    QVERIFY(!status.ok());
    QCOMPARE(decoder.reservedBytes(), 0);
    QCOMPARE(decoder.bufferedBytes(), 0);

    FrameRecordDecoder whole;
    QVERIFY(!whole.feed(lengthPrefix(0x7fffffff) + QByteArray(1000, 'x')).ok());
    QCOMPARE(whole.reservedBytes(), 0);
}

void TestFrameRecord::buffersAtMostOneRecord()
{
    // The largest valid record, trickled in: space for exactly its frame,
    // reserved once its header is complete.
    const QByteArray bytes = encodeFrameRecord(headerFor(0), frameBytes(kMaxFrameBytes, 0));
    FrameRecordDecoder decoder;
    QVERIFY(decoder.feed(QByteArrayView(bytes).first(13)).ok());
    QCOMPARE(decoder.bufferedBytes(), 13);
    QCOMPARE(decoder.reservedBytes(), 0);
    QVERIFY(decoder.feed(QByteArrayView(bytes).sliced(13, 1)).ok());
    QVERIFY(decoder.reservedBytes() >= kMaxFrameBytes);
    QVERIFY(decoder.reservedBytes() < kMaxFrameBytes + 1024);
    qsizetype at = 14;
    while (at < bytes.size() - 1) {
        const qsizetype n = qMin(qsizetype(4096), bytes.size() - 1 - at);
        QVERIFY(decoder.feed(QByteArrayView(bytes).sliced(at, n)).ok());
        at += n;
        QCOMPARE(decoder.bufferedBytes(), at);
        QVERIFY(decoder.reservedBytes() < kMaxFrameBytes + 1024);
    }
    QVERIFY(!decoder.hasRecords());
    QVERIFY(decoder.feed(QByteArrayView(bytes).sliced(at)).ok());
    QCOMPARE(decoder.bufferedBytes(), 0);
    QCOMPARE(decoder.takeRecords().size(), 1);
}

void TestFrameRecord::nextAndTakeRecordsShareTheQueue()
{
    const QList<FrameRecord> records = sampleRecords(6, 100);
    FrameRecordDecoder decoder;
    QVERIFY(decoder.feed(encodeAll(records.first(4))).ok());
    FrameRecord record;
    QVERIFY(decoder.next(record));
    QCOMPARE(record, records[0]);
    QVERIFY(decoder.next(record));
    QCOMPARE(record, records[1]);
    QVERIFY(decoder.hasRecords());
    QVERIFY(decoder.feed(encodeAll(records.sliced(4))).ok());
    QCOMPARE(decoder.takeRecords(), records.sliced(2));
    QVERIFY(!decoder.hasRecords());
    QVERIFY(!decoder.next(record));
    QVERIFY(decoder.takeRecords().isEmpty());

    QVERIFY(decoder.feed(encodeAll(records.first(1))).ok());
    QVERIFY(decoder.next(record));
    QCOMPARE(record, records[0]);
    QVERIFY(!decoder.hasRecords());
}

void TestFrameRecord::validates()
{
    QVERIFY(validateFrameRecord(QByteArray(14, 'x')).ok());
    QVERIFY(validateFrameRecord(QByteArray(kMaxFrameBytes, 'x')).ok());
    const Status small = validateFrameRecord(QByteArray(13, 'x'));
    QVERIFY(!small.ok());
    QVERIFY2(small.error().message.contains(QStringLiteral("13-byte frame")),
        qPrintable(small.error().message));
    const Status large = validateFrameRecord(QByteArray(kMaxFrameBytes + 1, 'x'));
    QVERIFY(!large.ok());
    QVERIFY2(large.error().message.contains(QStringLiteral("65554-byte frame exceeds")),
        qPrintable(large.error().message));
}

QTEST_GUILESS_MAIN(TestFrameRecord)
#include "tst_framerecord.moc"
