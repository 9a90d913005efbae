// Unit tests of the size format of options such as --run-log-cap
// (common/util/bytesize.h): "65536", "512KiB", "64MiB", "4GiB".

#include "common/util/bytesize.h"

#include <QTest>

using namespace cloop::util;

class TestByteSize final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesValid_data();
    void parsesValid();
    void refusesInvalid_data();
    void refusesInvalid();
    void formats_data();
    void formats();
};

void TestByteSize::parsesValid_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("bytes") << QStringLiteral("65536") << qint64(65536);
    QTest::newRow("B") << QStringLiteral("100B") << qint64(100);
    QTest::newRow("KiB") << QStringLiteral("512KiB") << qint64(512) * 1024;
    QTest::newRow("k") << QStringLiteral("512k") << qint64(512) * 1024;
    QTest::newRow("MiB") << QStringLiteral("64MiB") << (qint64(64) << 20);
    QTest::newRow("MB is binary") << QStringLiteral("64MB") << qint64(64) * 1024 * 1024;
    QTest::newRow("space") << QStringLiteral("64 MiB") << qint64(64) * 1024 * 1024;
    QTest::newRow("GiB") << QStringLiteral("4GiB") << qint64(4) * 1024 * 1024 * 1024;
    QTest::newRow("g") << QStringLiteral("4g") << qint64(4) * 1024 * 1024 * 1024;
    QTest::newRow("TiB") << QStringLiteral("2TiB") << (qint64(2) << 40);
    QTest::newRow("zero") << QStringLiteral("0") << qint64(0);
}

void TestByteSize::parsesValid()
{
    QFETCH(QString, text);
    QFETCH(qint64, expected);
    const auto parsed = parseByteSize(text);
    QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
    QCOMPARE(*parsed, expected);
}

void TestByteSize::refusesInvalid_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << QString();
    QTest::newRow("unit only") << QStringLiteral("MiB");
    QTest::newRow("negative") << QStringLiteral("-1");
    QTest::newRow("fraction") << QStringLiteral("1.5GiB");
    QTest::newRow("unknown unit") << QStringLiteral("4PiB");
    QTest::newRow("bits") << QStringLiteral("4Mbit");
    QTest::newRow("overflow by unit") << QStringLiteral("8388608TiB");
    QTest::newRow("overflow") << QStringLiteral("99999999999999999999");
    QTest::newRow("not ASCII digits") << QStringLiteral("٥MiB");
}

void TestByteSize::refusesInvalid()
{
    QFETCH(QString, text);
    const auto parsed = parseByteSize(text);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, QStringLiteral("invalid_size"));
    QVERIFY(parsed.error().message.contains(QLatin1String("64MiB")));
}

void TestByteSize::formats_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("expected");
    QTest::newRow("one") << qint64(1) << QStringLiteral("1 byte");
    QTest::newRow("bytes") << qint64(512) << QStringLiteral("512 bytes");
    QTest::newRow("KiB") << qint64(256) * 1024 << QStringLiteral("256 KiB");
    QTest::newRow("MiB") << (qint64(64) << 20) << QStringLiteral("64 MiB");
    QTest::newRow("fraction") << qint64(1536) * 1024 * 1024 << QStringLiteral("1.5 GiB");
    QTest::newRow("TiB") << (qint64(3) << 40) << QStringLiteral("3 TiB");
}

void TestByteSize::formats()
{
    QFETCH(qint64, bytes);
    QFETCH(QString, expected);
    QCOMPARE(formatByteSize(bytes), expected);
}

QTEST_GUILESS_MAIN(TestByteSize)
#include "tst_bytesize.moc"
