// What each forwarder's streams carried, step by step: differences of the
// hub's counters, a window of the last steps, forwarders forgotten once
// their window is quiet. Driven by hand, step by step, on a manual clock.

#include "hub/server/forwardertraffic.h"

#include <QTest>

using namespace cloop;
using namespace cloop::hub;
using Bytes = ForwarderTraffic::Bytes;

class TestForwarderTraffic final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void eachStepHoldsWhatMovedInIt();
    void theWindowKeepsTheNewestStepsOldestFirst();
    void aQuietForwarderIsForgottenOnceItsWindowIsEmpty();
    void aCounterThatWentBackCountsFromZero();
    void trafficBeforeStartIsNotTheFirstStep();

private:
    std::map<qint64, Bytes> m_totals;
    ManualClock m_clock { QDateTime(QDate(2026, 12, 6), QTime(10, 0), Qt::UTC) };
    ForwarderTraffic::Source source()
    {
        return [this] { return m_totals; };
    }
};

void TestForwarderTraffic::eachStepHoldsWhatMovedInIt()
{
    m_totals.clear();
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 4);
    traffic.start();
    QVERIFY(!traffic.lastSampleAt().isValid());
    QCOMPARE(traffic.stepsHeld(), 0);
    QVERIFY(traffic.history(1).empty());

    m_totals[1] = { 1000, 10 };
    m_totals[2] = { 0, 0 };
    m_clock.advance(5);
    traffic.sample();
    m_totals[1] = { 1500, 10 };
    m_clock.advance(5);
    traffic.sample();
    QCOMPARE(traffic.stepsHeld(), 2);
    QCOMPARE(traffic.lastSampleAt(), m_clock.now());
    QCOMPARE(traffic.history(1), (std::vector<Bytes> { { 1000, 10 }, { 500, 0 } }));
    // A forwarder whose streams carried nothing is not held at all.
    QVERIFY(traffic.history(2).empty());
    QCOMPARE(traffic.activeForwarders(), std::vector<qint64> { 1 });
}

void TestForwarderTraffic::theWindowKeepsTheNewestStepsOldestFirst()
{
    m_totals.clear();
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 3);
    traffic.start();
    quint64 total = 0;
    for (quint64 step = 1; step <= 5; ++step) {
        total += step * 100;
        m_totals[7] = { total, step };
        traffic.sample();
    }
    QCOMPARE(traffic.stepsHeld(), 3);
    // Totals of 1..5 steps; the last three differences, oldest first.
    QCOMPARE(traffic.history(7), (std::vector<Bytes> { { 300, 1 }, { 400, 1 }, { 500, 1 } }));

    // A forwarder that starts now has zeros for the steps before it.
    m_totals[8] = { 42, 0 };
    traffic.sample();
    QCOMPARE(traffic.history(8), (std::vector<Bytes> { {}, {}, { 42, 0 } }));
    QCOMPARE(traffic.history(7), (std::vector<Bytes> { { 400, 1 }, { 500, 1 }, {} }));
}

void TestForwarderTraffic::aQuietForwarderIsForgottenOnceItsWindowIsEmpty()
{
    m_totals.clear();
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 3);
    traffic.start();
    m_totals[3] = { 10, 20 };
    traffic.sample();
    traffic.sample();
    traffic.sample();
    QCOMPARE(traffic.history(3), (std::vector<Bytes> { { 10, 20 }, {}, {} }));
    traffic.sample();
    QVERIFY(traffic.history(3).empty());
    QVERIFY(traffic.activeForwarders().empty());
    // When it carries again its window starts empty, with this step only.
    m_totals[3] = { 11, 20 };
    traffic.sample();
    QCOMPARE(traffic.history(3), (std::vector<Bytes> { {}, {}, { 1, 0 } }));
}

void TestForwarderTraffic::aCounterThatWentBackCountsFromZero()
{
    m_totals.clear();
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 2);
    traffic.start();
    m_totals[4] = { 900, 900 };
    traffic.sample();
    m_totals[4] = { 30, 950 };
    traffic.sample();
    QCOMPARE(traffic.history(4), (std::vector<Bytes> { { 900, 900 }, { 30, 50 } }));
}

void TestForwarderTraffic::trafficBeforeStartIsNotTheFirstStep()
{
    m_totals = { { 5, { 1 << 20, 1 << 20 } } };
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 2);
    traffic.start();
    m_totals[5].toAgent += 64;
    traffic.sample();
    QCOMPARE(traffic.history(5), (std::vector<Bytes> { { 64, 0 } }));
}

QTEST_GUILESS_MAIN(TestForwarderTraffic)
#include "tst_forwardertraffic.moc"
