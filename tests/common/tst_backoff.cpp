// Unit tests of the reconnect backoff (common/net/backoff.h): capped
// exponential growth with equal jitter, checked with an injected random source.

#include "common/net/backoff.h"

#include <QTest>

#include <algorithm>

using namespace cloop::net;
using std::chrono::milliseconds;

namespace {

// The ceiling d of the n-th delay (n counted from 0): min(cap, initial * 2^n).
qint64 ceilingOf(qint64 initial, qint64 cap, int n)
{
    qint64 d = initial;
    for (int i = 0; i < n && d < cap; ++i)
        d *= 2;
    return std::min(d, cap);
}

} // namespace

class TestBackoff final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void delaysWithinEqualJitterBounds_data();
    void delaysWithinEqualJitterBounds();
    void growsUntilCapAndResets_data();
    void growsUntilCapAndResets();
    void extremesOfRandomAreTheBounds();
    void outOfRangeRandomIsClamped();
    void defaultRandomStaysInBounds();
    void degenerateArguments();
    void aSpreadDrawsTheNextDelayOnlyFromItsWindow();
    void aSpreadIsCappedAndForgottenOnReset();
};

void TestBackoff::delaysWithinEqualJitterBounds_data()
{
    QTest::addColumn<qint64>("initial");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<double>("random");

    const struct
    {
        qint64 initial;
        qint64 cap;
    } configs[] = {
        { 500, 30'000 },
        { 100, 1'000 },
        { 300, 1'000 },
        { 1'000, 1'000 },
        { 1, 10 },
        { 250, 3'600'000 },
    };
    for (const auto &c : configs) {
        for (const double r : { 0.0, 0.999 }) {
            QTest::addRow("initial %lld cap %lld random %.3f", c.initial, c.cap, r)
                << c.initial << c.cap << r;
        }
    }
}

void TestBackoff::delaysWithinEqualJitterBounds()
{
    QFETCH(qint64, initial);
    QFETCH(qint64, cap);
    QFETCH(double, random);

    Backoff backoff(milliseconds(initial), milliseconds(cap), [random] { return random; });
    for (int n = 0; n < 100; ++n) {
        QCOMPARE(backoff.attempts(), n);
        const qint64 d = ceilingOf(initial, cap, n);
        const qint64 delay = backoff.next().count();
        // Then every delay lies in [d/2, d] and never above the cap.
        QVERIFY2(delay >= d / 2 && delay <= d,
            qPrintable(QStringLiteral("attempt %1: delay %2 outside [%3, %4]")
                           .arg(n)
                           .arg(delay)
                           .arg(d / 2)
                           .arg(d)));
        QVERIFY(delay <= cap);
    }
}

void TestBackoff::growsUntilCapAndResets_data()
{
    QTest::addColumn<double>("random");
    QTest::newRow("random 0.0") << 0.0;
    QTest::newRow("random 0.999") << 0.999;
}

void TestBackoff::growsUntilCapAndResets()
{
    QFETCH(double, random);
    Backoff backoff(milliseconds(500), milliseconds(30'000), [random] { return random; });

    // Given a fixed random number, delays strictly grow until the cap is hit
    // and then stay there.
    QList<qint64> delays;
    for (int n = 0; n < 12; ++n)
        delays.append(backoff.next().count());
    int reachedCapAt = -1;
    for (int n = 0; n < delays.size(); ++n) {
        if (ceilingOf(500, 30'000, n) == 30'000) {
            reachedCapAt = n;
            break;
        }
        QVERIFY2(n == 0 || delays[n] > delays[n - 1],
            qPrintable(QStringLiteral("delay %1 (%2) did not grow").arg(n).arg(delays[n])));
    }
    QCOMPARE(reachedCapAt, 6); // 500 * 2^6 = 32000 > 30000
    for (int n = reachedCapAt + 1; n < delays.size(); ++n)
        QCOMPARE(delays[n], delays[reachedCapAt]);

    // When reset, the next delay is the first one again.
    backoff.reset();
    QCOMPARE(backoff.attempts(), 0);
    QCOMPARE(backoff.next().count(), delays[0]);
    QCOMPARE(backoff.next().count(), delays[1]);
    QCOMPARE(backoff.attempts(), 2);
}

void TestBackoff::extremesOfRandomAreTheBounds()
{
    // random 0 gives the lower bound exactly; random near 1 ends near the ceiling.
    Backoff low(milliseconds(500), milliseconds(30'000), [] { return 0.0; });
    Backoff high(milliseconds(500), milliseconds(30'000), [] { return 0.999; });
    const qint64 expectedLow[] = { 250, 500, 1000, 2000, 4000, 8000, 15000, 15000 };
    for (const qint64 expected : expectedLow)
        QCOMPARE(low.next().count(), expected);
    const qint64 expectedCeiling[] = { 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000 };
    for (const qint64 ceiling : expectedCeiling) {
        const qint64 delay = high.next().count();
        QVERIFY(delay <= ceiling);
        QVERIFY(delay >= ceiling - ceiling / 100); // within 1% of the top
    }
}

void TestBackoff::outOfRangeRandomIsClamped()
{
    // A random source that breaks its contract still cannot push delays out.
    const double values[] = { -5.0, 7.0, 1.0 };
    int i = 0;
    Backoff backoff(milliseconds(100), milliseconds(1'000), [&] { return values[i++ % 3]; });
    for (int n = 0; n < 30; ++n) {
        const qint64 d = ceilingOf(100, 1'000, n);
        const qint64 delay = backoff.next().count();
        QVERIFY(delay >= d / 2);
        QVERIFY(delay <= d);
    }
}

void TestBackoff::defaultRandomStaysInBounds()
{
    Backoff backoff(milliseconds(500), milliseconds(30'000));
    QCOMPARE(backoff.initial(), milliseconds(500));
    QCOMPARE(backoff.cap(), milliseconds(30'000));
    // Reset every 25 draws so the early, small ceilings are sampled as often
    // as the capped ones.
    for (int draw = 0; draw < 1000; ++draw) {
        if (draw % 25 == 0)
            backoff.reset();
        const int n = backoff.attempts();
        const qint64 d = ceilingOf(500, 30'000, n);
        const qint64 delay = backoff.next().count();
        QVERIFY2(delay >= d / 2 && delay <= d,
            qPrintable(QStringLiteral("draw %1: %2 outside [%3, %4]")
                           .arg(draw)
                           .arg(delay)
                           .arg(d / 2)
                           .arg(d)));
    }
}

void TestBackoff::degenerateArguments()
{
    // A zero initial delay becomes 1 ms and a cap below it is raised to it,
    // so the loop can never spin with 0 ms nor wait below the initial delay.
    Backoff zero(milliseconds(0), milliseconds(0), [] { return 0.999; });
    QCOMPARE(zero.initial(), milliseconds(1));
    QCOMPARE(zero.cap(), milliseconds(1));
    Backoff inverted(milliseconds(2'000), milliseconds(100), [] { return 0.0; });
    QCOMPARE(inverted.cap(), milliseconds(2'000));
    QCOMPARE(inverted.next(), milliseconds(1'000));
    QCOMPARE(inverted.next(), milliseconds(1'000));
}

void TestBackoff::aSpreadDrawsTheNextDelayOnlyFromItsWindow()
{
    // Given a backoff that has grown, and randoms the test chooses
    const double values[] = { 0.0, 0.5, 0.999, 0.0, 0.25 };
    int i = 0;
    Backoff backoff(milliseconds(500), milliseconds(30'000), [&] { return values[i++]; });
    QCOMPARE(backoff.next().count(), 250); // 0.0 of [250, 500]
    // When told to spread the next return over 20 s
    backoff.spreadNextOver(milliseconds(20'000));
    // the next delay is drawn from [0, 20 s], not from [500, 1000]
    QCOMPARE(backoff.next().count(), 10'000); // 0.5 of 20 s
    // and only that one: the growth goes on where it was.
    QCOMPARE(backoff.attempts(), 1);
    const qint64 afterSpread = backoff.next().count(); // 0.999 of [500, 1000]
    QVERIFY(afterSpread >= 990 && afterSpread <= 1000);
    // A window of nothing still waits the least the loop ever waits.
    backoff.spreadNextOver(milliseconds(0));
    QCOMPARE(backoff.next().count(), 1);
    backoff.spreadNextOver(milliseconds(-5));
    QCOMPARE(backoff.next().count(), 1); // 0.25 of nothing
}

void TestBackoff::aSpreadIsCappedAndForgottenOnReset()
{
    Backoff backoff(milliseconds(500), milliseconds(30'000), [] { return 0.999; });
    // A window beyond the cap is the cap: no hub keeps a daemon away longer.
    backoff.spreadNextOver(milliseconds(24 * 3600 * 1000));
    const qint64 capped = backoff.next().count();
    QVERIFY(capped >= 29'900 && capped <= 30'000);
    // A session welcomed meanwhile forgets a spread it was told before.
    backoff.spreadNextOver(milliseconds(20'000));
    backoff.reset();
    const qint64 first = backoff.next().count();
    QVERIFY(first >= 495 && first <= 500);
}

QTEST_GUILESS_MAIN(TestBackoff)
#include "tst_backoff.moc"
