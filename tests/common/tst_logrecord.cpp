// Unit tests of the run output record format (common/protocol/logrecord.h):
// byte layouts written out here, every malformed header, continuity of
// offsets, and chunking that must not matter.

#include "common/protocol/logrecord.h"
#include "streamdecoding.h"

#include <QRandomGenerator>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;

Q_DECLARE_METATYPE(cloop::protocol::LogRecord)

namespace {

QByteArray hex(const char *text)
{
    // fromHex skips the spaces, so layouts can be written field by field.
    return QByteArray::fromHex(QByteArray(text));
}

QByteArray header(quint8 kind, quint64 offset, quint32 length)
{
    QByteArray out;
    out.append(static_cast<char>(kind));
    for (int shift = 56; shift >= 0; shift -= 8)
        out.append(static_cast<char>(offset >> shift));
    for (int shift = 24; shift >= 0; shift -= 8)
        out.append(static_cast<char>(length >> shift));
    return out;
}

// A valid contiguous log: stdout, stderr, a gap, more output, full records.
QList<LogRecord> sampleLog(quint64 start)
{
    QList<LogRecord> records;
    quint64 at = start;
    auto add = [&](LogRecord record) {
        at = record.end();
        records.append(std::move(record));
    };
    add(LogRecord::data(LogRecordKind::Stdout, at, QByteArrayLiteral("hello\n")));
    add(LogRecord::data(LogRecordKind::Stderr, at, QByteArrayLiteral("oops\n")));
    add(LogRecord::gap(at, 12345));
    add(LogRecord::data(LogRecordKind::Stdout, at, QByteArray(kMaxLogPayload, 'a')));
    add(LogRecord::data(LogRecordKind::Stderr, at, QByteArray(1, '\0')));
    add(LogRecord::gap(at, 1));
    add(LogRecord::data(LogRecordKind::Stdout, at, QByteArray(1000, 'z')));
    return records;
}

QList<LogRecord> decodeAll(QByteArrayView bytes, qsizetype chunkSize)
{
    return cloop::testing::decodeInChunks<LogRecordDecoder, LogRecord>(bytes, chunkSize);
}

} // namespace

class TestLogRecord final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void encodesLayout_data();
    void encodesLayout();
    void roundTripsLog();
    void oneByteAtATimeEqualsWhole();
    void randomChunksEqualWhole();
    void acceptsLimits();
    void refusesMalformed_data();
    void refusesMalformed();
    void staysFailed();
    void keepsRecordsBeforeFault();
    void refusesDiscontinuity_data();
    void refusesDiscontinuity();
    void firstRecordMayStartAnywhere();
    void firstOffsetCanBeRequired();
    void validatesBeforeEncoding();
    void checksHeaderBeforePayloadArrives();
    void names();
};

void TestLogRecord::encodesLayout_data()
{
    QTest::addColumn<LogRecord>("record");
    QTest::addColumn<QByteArray>("bytes");

    //                      kind offset           length   payload
    QTest::newRow("stdout") << LogRecord::data(LogRecordKind::Stdout, 0, QByteArrayLiteral("hi"))
                            << hex("01 0000000000000000 00000002 6869");
    QTest::newRow("stderr, big offset")
        << LogRecord::data(LogRecordKind::Stderr, 0x0102030405060708ull, QByteArrayLiteral("\xff"))
        << hex("02 0102030405060708 00000001 ff");
    QTest::newRow("gap") << LogRecord::gap(0x10, 0xa0b0c0d0) << hex("03 0000000000000010 a0b0c0d0");
    QTest::newRow("largest gap") << LogRecord::gap(0, 0xffffffffu)
                                 << hex("03 0000000000000000 ffffffff");
}

void TestLogRecord::encodesLayout()
{
    QFETCH(LogRecord, record);
    QFETCH(QByteArray, bytes);

    QCOMPARE(encodeLogRecord(record), bytes);
    LogRecordDecoder decoder;
    QVERIFY(decoder.feed(bytes).ok());
    const QList<LogRecord> decoded = decoder.takeRecords();
    QCOMPARE(decoded.size(), 1);
    QCOMPARE(decoded.front(), record);
    QCOMPARE(decoder.consumedBytes(), quint64(bytes.size()));
    QCOMPARE(decoder.nextOffset(), std::optional<quint64>(record.end()));
}

void TestLogRecord::roundTripsLog()
{
    const QList<LogRecord> log = sampleLog(1000);
    const QByteArray bytes = encodeLogRecords(log);
    QByteArray oneByOne;
    for (const LogRecord &record : log)
        oneByOne += encodeLogRecord(record);
    QCOMPARE(bytes, oneByOne);
    QCOMPARE(decodeAll(bytes, bytes.size()), log);
}

void TestLogRecord::oneByteAtATimeEqualsWhole()
{
    const QByteArray bytes = encodeLogRecords(sampleLog(7));
    QCOMPARE(decodeAll(bytes, 1), decodeAll(bytes, bytes.size()));
    QCOMPARE(decodeAll(bytes, 1), sampleLog(7));
}

void TestLogRecord::randomChunksEqualWhole()
{
    const QByteArray bytes = encodeLogRecords(sampleLog(0));
    QRandomGenerator random(4242);
    for (int round = 0; round < 50; ++round) {
        LogRecordDecoder decoder;
        QByteArrayView rest(bytes);
        while (!rest.isEmpty()) {
            const qsizetype n = qMin(rest.size(), qsizetype(random.bounded(1, 20000)));
            QVERIFY(decoder.feed(rest.first(n)).ok());
            rest = rest.sliced(n);
        }
        QCOMPARE(decoder.takeRecords(), sampleLog(0));
        QCOMPARE(decoder.consumedBytes(), quint64(bytes.size()));
    }
}

void TestLogRecord::acceptsLimits()
{
    // The highest offset whose record still ends within 64 bits.
    const quint64 top = std::numeric_limits<quint64>::max();
    const QList<LogRecord> log {
        LogRecord::data(
            LogRecordKind::Stdout, top - 1 - kMaxLogPayload, QByteArray(kMaxLogPayload, 'x')),
        LogRecord::gap(top - 1, 1),
    };
    QCOMPARE(decodeAll(encodeLogRecords(log), 3), log);
    QCOMPARE(log.back().end(), top);
}

void TestLogRecord::refusesMalformed_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    const quint64 top = std::numeric_limits<quint64>::max();
    QTest::newRow("kind 0") << header(0, 0, 1) + "x"
                            << "unknown log record kind 0";
    QTest::newRow("kind 4") << header(4, 0, 1) + "x"
                            << "unknown log record kind 4";
    QTest::newRow("kind 255") << header(255, 0, 1) << "unknown log record kind 255";
    QTest::newRow("empty stdout") << header(1, 5, 0) << "empty stdout record at offset 5";
    QTest::newRow("empty stderr") << header(2, 5, 0) << "empty stderr record at offset 5";
    QTest::newRow("stdout too long")
        << header(1, 0, kMaxLogPayload + 1) << "stdout record of 65537 bytes exceeds";
    QTest::newRow("stderr huge") << header(2, 0, 0xffffffffu)
                                 << "stderr record of 4294967295 bytes exceeds";
    QTest::newRow("gap of 0") << header(3, 9, 0) << "gap record at offset 9 loses no bytes";
    QTest::newRow("data past 2^64") << header(1, top, 1) + "x"
                                    << "ends past 2^64";
    QTest::newRow("gap past 2^64") << header(3, top - 1, 2) << "ends past 2^64";
    QTest::newRow("second record bad")
        << encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 0, "ab")) + header(7, 2, 1)
        << "unknown log record kind 7 at stream byte 15";
}

void TestLogRecord::refusesMalformed()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);

    for (const qsizetype chunk : { qsizetype(1), bytes.size() }) {
        LogRecordDecoder decoder;
        Status status;
        for (qsizetype at = 0; at < bytes.size() && status.ok(); at += chunk)
            status = decoder.feed(QByteArrayView(bytes).sliced(at, qMin(chunk, bytes.size() - at)));
        QVERIFY(!status.ok());
        QVERIFY(decoder.failed());
        QCOMPARE(status.error().code, QStringLiteral("malformed_log_record"));
        QVERIFY2(status.error().message.contains(message), qPrintable(status.error().message));
        QCOMPARE(decoder.error().message, status.error().message);
    }
}

void TestLogRecord::staysFailed()
{
    LogRecordDecoder decoder;
    QVERIFY(!decoder.feed(header(9, 0, 1)).ok());
    const QString message = decoder.error().message;
    // A perfectly good record afterwards changes nothing.
    const Status again = decoder.feed(encodeLogRecord(LogRecord::gap(0, 3)));
    QVERIFY(!again.ok());
    QCOMPARE(again.error().message, message);
    QVERIFY(!decoder.hasRecords());
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void TestLogRecord::keepsRecordsBeforeFault()
{
    const LogRecord good = LogRecord::data(LogRecordKind::Stderr, 40, "abc");
    LogRecordDecoder decoder;
    QVERIFY(!decoder.feed(encodeLogRecord(good) + header(1, 43, 0)).ok());
    QCOMPARE(decoder.takeRecords(), QList<LogRecord> { good });
    QCOMPARE(decoder.consumedBytes(), quint64(kLogRecordHeaderSize + 3));
}

void TestLogRecord::refusesDiscontinuity_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    const QByteArray first = encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 100, "12345"));
    const QByteArray gap = encodeLogRecord(LogRecord::gap(105, 10));
    QTest::newRow("data overlaps")
        << first + encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 104, "x"))
        << "stdout record at offset 104 does not continue the log, which ends at offset 105";
    QTest::newRow("data leaves a hole")
        << first + encodeLogRecord(LogRecord::data(LogRecordKind::Stderr, 106, "x"))
        << "stderr record at offset 106 does not continue the log, which ends at offset 105";
    QTest::newRow("gap overlaps") << first + encodeLogRecord(LogRecord::gap(100, 1))
                                  << "gap record at offset 100 does not continue";
    QTest::newRow("after gap, too early")
        << first + gap + encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 105, "x"))
        << "stdout record at offset 105 does not continue the log, which ends at offset 115";
    QTest::newRow("after gap, too late")
        << first + gap + encodeLogRecord(LogRecord::gap(116, 1)) << "which ends at offset 115";
    QTest::newRow("offset goes back to 0")
        << first + encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 0, "x"))
        << "offset 0 does not continue";
}

void TestLogRecord::refusesDiscontinuity()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);

    for (const qsizetype chunk : { qsizetype(1), qsizetype(7), bytes.size() }) {
        LogRecordDecoder decoder;
        Status status;
        for (qsizetype at = 0; at < bytes.size() && status.ok(); at += chunk)
            status = decoder.feed(QByteArrayView(bytes).sliced(at, qMin(chunk, bytes.size() - at)));
        QVERIFY(!status.ok());
        QVERIFY2(status.error().message.contains(message), qPrintable(status.error().message));
        QVERIFY(decoder.takeRecords().size() >= 1);
    }
}

void TestLogRecord::firstRecordMayStartAnywhere()
{
    for (const quint64 start : { quint64(0), quint64(1), quint64(5) << 40 }) {
        const QList<LogRecord> log = sampleLog(start);
        QCOMPARE(decodeAll(encodeLogRecords(log), 5), log);
    }
    // A resumed stream may also begin with a gap.
    const QList<LogRecord> log { LogRecord::gap(77, 23),
        LogRecord::data(LogRecordKind::Stderr, 100, "after") };
    QCOMPARE(decodeAll(encodeLogRecords(log), 2), log);
}

void TestLogRecord::firstOffsetCanBeRequired()
{
    const QByteArray bytes = encodeLogRecord(LogRecord::data(LogRecordKind::Stdout, 50, "x"));
    LogRecordDecoder exact(50);
    QVERIFY(exact.feed(bytes).ok());
    QCOMPARE(exact.takeRecords().size(), 1);

    LogRecordDecoder other(49);
    const Status status = other.feed(bytes);
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("which ends at offset 49")));
}

void TestLogRecord::validatesBeforeEncoding()
{
    QVERIFY(validateLogRecord(LogRecord::gap(1, 2)).ok());
    QVERIFY(validateLogRecord(LogRecord::data(LogRecordKind::Stdout, 0, "x")).ok());
    QVERIFY(!validateLogRecord(LogRecord::data(LogRecordKind::Stdout, 0, {})).ok());
    QVERIFY(!validateLogRecord(LogRecord::gap(1, 0)).ok());
    QVERIFY(!validateLogRecord(
        LogRecord::data(LogRecordKind::Stderr, 0, QByteArray(kMaxLogPayload + 1, 'x')))
                 .ok());
    LogRecord gapWithPayload = LogRecord::gap(0, 1);
    gapWithPayload.payload = "x";
    QVERIFY(!validateLogRecord(gapWithPayload).ok());
    LogRecord dataWithGapLength = LogRecord::data(LogRecordKind::Stdout, 0, "x");
    dataWithGapLength.gapLength = 4;
    QVERIFY(!validateLogRecord(dataWithGapLength).ok());
    LogRecord unknown = LogRecord::gap(0, 1);
    unknown.kind = static_cast<LogRecordKind>(9);
    QVERIFY(!validateLogRecord(unknown).ok());
}

void TestLogRecord::checksHeaderBeforePayloadArrives()
{
    // Given a header that announces a payload, the decoder waits for it and
    // buffers no more than the record; a bad header fails at once.
    LogRecordDecoder decoder;
    QVERIFY(decoder.feed(header(1, 0, kMaxLogPayload)).ok());
    QCOMPARE(decoder.bufferedBytes(), kLogRecordHeaderSize);
    QVERIFY(decoder.feed(QByteArray(kMaxLogPayload - 1, 'p')).ok());
    QVERIFY(!decoder.hasRecords());
    QVERIFY(decoder.feed(QByteArray(1, 'p') + header(1, kMaxLogPayload, 1)).ok());
    QCOMPARE(decoder.takeRecords().size(), 1);
    QCOMPARE(decoder.bufferedBytes(), kLogRecordHeaderSize);

    LogRecordDecoder bad;
    QVERIFY(!bad.feed(header(1, 0, kMaxLogPayload + 1)).ok());
}

void TestLogRecord::names()
{
    QCOMPARE(logRecordKindName(LogRecordKind::Stdout), QStringLiteral("stdout"));
    QCOMPARE(logRecordKindName(LogRecordKind::Stderr), QStringLiteral("stderr"));
    QCOMPARE(logRecordKindName(LogRecordKind::Gap), QStringLiteral("gap"));
    QCOMPARE(logRecordKindName(static_cast<LogRecordKind>(0)), QStringLiteral("unknown"));
}

QTEST_GUILESS_MAIN(TestLogRecord)
#include "tst_logrecord.moc"
