// Unit tests of the human duration format (common/util/duration.h): "90s",
// "30m", "8h", "7d" and combinations such as "1h30m".

#include "common/util/duration.h"

#include <QTest>
#include <QTimeZone>

using namespace cloop::util;
using std::chrono::seconds;

class TestDuration final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesValid_data();
    void parsesValid();
    void refusesInvalid_data();
    void refusesInvalid();
    void formats_data();
    void formats();
    void formatThenParseIsIdentity();
    void momentsAreWrittenInUtcWithTheirZone();
};

void TestDuration::parsesValid_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("expected");

    QTest::newRow("90s") << QStringLiteral("90s") << qint64(90);
    QTest::newRow("30m") << QStringLiteral("30m") << qint64(30 * 60);
    QTest::newRow("8h") << QStringLiteral("8h") << qint64(8 * 3600);
    QTest::newRow("7d") << QStringLiteral("7d") << qint64(7 * 86400);
    QTest::newRow("1h30m") << QStringLiteral("1h30m") << qint64(5400);
    QTest::newRow("1d2h3m4s") << QStringLiteral("1d2h3m4s") << qint64(86400 + 7200 + 180 + 4);
    QTest::newRow("0s") << QStringLiteral("0s") << qint64(0);
    QTest::newRow("leading zeros") << QStringLiteral("007m") << qint64(420);
    QTest::newRow("ten years") << QStringLiteral("3650d") << qint64(3650) * 86400;
}

void TestDuration::parsesValid()
{
    QFETCH(QString, text);
    QFETCH(qint64, expected);
    const auto parsed = parseDuration(text);
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QCOMPARE(parsed->count(), expected);
}

void TestDuration::refusesInvalid_data()
{
    QTest::addColumn<QString>("text");

    QTest::newRow("empty") << QString();
    QTest::newRow("unit only") << QStringLiteral("h");
    QTest::newRow("number only") << QStringLiteral("5");
    QTest::newRow("trailing number") << QStringLiteral("1h30");
    QTest::newRow("unknown unit") << QStringLiteral("5x");
    QTest::newRow("upper-case unit") << QStringLiteral("5H");
    QTest::newRow("negative") << QStringLiteral("-1h");
    QTest::newRow("plus sign") << QStringLiteral("+1h");
    QTest::newRow("space") << QStringLiteral("1h 30m");
    QTest::newRow("leading space") << QStringLiteral(" 1h");
    QTest::newRow("fraction") << QStringLiteral("1.5h");
    QTest::newRow("double unit") << QStringLiteral("1hh");
    QTest::newRow("more than ten years") << QStringLiteral("3651d");
    QTest::newRow("huge number") << QStringLiteral("99999999999999999999999s");
    QTest::newRow("huge sum") << QStringLiteral("3000d3000d");
    QTest::newRow("wraps qint64 if unchecked") << QStringLiteral("9223372036854775808s");
}

void TestDuration::refusesInvalid()
{
    QFETCH(QString, text);
    const auto parsed = parseDuration(text);
    QVERIFY2(!parsed.ok(),
        qPrintable(QStringLiteral("accepted as %1 s").arg(parsed.ok() ? parsed->count() : 0)));
    QCOMPARE(parsed.error().code, QStringLiteral("invalid_duration"));
    // The message quotes the input and shows the accepted form.
    QVERIFY(parsed.error().message.contains(QLatin1Char('"') + text + QLatin1Char('"')));
    QVERIFY(parsed.error().message.contains(QStringLiteral("90s, 30m, 8h, 7d")));
}

void TestDuration::formats_data()
{
    QTest::addColumn<qint64>("secs");
    QTest::addColumn<QString>("expected");

    QTest::newRow("zero") << qint64(0) << QStringLiteral("0s");
    QTest::newRow("seconds") << qint64(59) << QStringLiteral("59s");
    QTest::newRow("90s") << qint64(90) << QStringLiteral("1m30s");
    QTest::newRow("hour and a half") << qint64(5400) << QStringLiteral("1h30m");
    QTest::newRow("8h") << qint64(8 * 3600) << QStringLiteral("8h");
    QTest::newRow("7d") << qint64(7 * 86400) << QStringLiteral("7d");
    QTest::newRow("everything") << qint64(90061) << QStringLiteral("1d1h1m1s");
    QTest::newRow("day and seconds") << qint64(86405) << QStringLiteral("1d5s");
}

void TestDuration::formats()
{
    QFETCH(qint64, secs);
    QFETCH(QString, expected);
    QCOMPARE(formatDuration(seconds(secs)), expected);
}

void TestDuration::formatThenParseIsIdentity()
{
    for (const qint64 secs : { qint64(0), qint64(1), qint64(61), qint64(3599), qint64(3600),
             qint64(86399), qint64(86400 * 30 + 17), qint64(3650) * 86400 }) {
        const QString text = formatDuration(seconds(secs));
        const auto parsed = parseDuration(text);
        QVERIFY2(parsed.ok(), qPrintable(text));
        QCOMPARE(parsed->count(), secs);
    }
}

void TestDuration::momentsAreWrittenInUtcWithTheirZone()
{
    // Whatever zone the time came in, messages say it in UTC and say so.
    const QDateTime berlin(QDate(2026, 12, 6), QTime(15, 5, 42), QTimeZone("Europe/Berlin"));
    QCOMPARE(formatUtcTime(berlin), QStringLiteral("2026-12-06 14:05 UTC"));
    QCOMPARE(formatUtcTime(QDateTime()), QStringLiteral("-"));
}

QTEST_GUILESS_MAIN(TestDuration)
#include "tst_duration.moc"
