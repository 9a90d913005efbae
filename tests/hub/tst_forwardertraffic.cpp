// What each forwarder's streams carried, step by step: differences of the
// hub's counters, a window of the last steps, forwarders forgotten once
// their window is quiet. Driven by hand, step by step, on a manual clock.

#include "hub/server/forwarderframes.h"
#include "hub/server/forwardertraffic.h"

#include <QTest>

#include <set>

using namespace cloop;
using namespace cloop::hub;
using Counts = ForwarderTraffic::Counts;

class TestForwarderTraffic final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void eachStepHoldsWhatMovedInIt();
    void theWindowKeepsTheNewestStepsOldestFirst();
    void aQuietForwarderIsForgottenOnceItsWindowIsEmpty();
    void aCounterThatWentBackCountsFromZero();
    void trafficBeforeStartIsNotTheFirstStep();
    void framesAndDropsAreStepsOfTheirOwn();
    void eachReportAddsWhatItsStreamGrewBy();

private:
    // Bytes as the hub relayed them; forwarders in m_framesCounted report frames too.
    std::map<qint64, Counts> m_totals;
    std::set<qint64> m_framesCounted;
    ManualClock m_clock { QDateTime(QDate(2026, 12, 6), QTime(10, 0), Qt::UTC) };
    ForwarderTraffic::Source source()
    {
        return [this] {
            std::map<qint64, ForwarderTraffic::Totals> totals;
            for (const auto &[forwarder, counts] : m_totals)
                totals[forwarder] = { counts, m_framesCounted.count(forwarder) != 0 };
            return totals;
        };
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
    QCOMPARE(traffic.history(1), (std::vector<Counts> { { 1000, 10 }, { 500, 0 } }));
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
    QCOMPARE(traffic.history(7), (std::vector<Counts> { { 300, 1 }, { 400, 1 }, { 500, 1 } }));

    // A forwarder that starts now has zeros for the steps before it.
    m_totals[8] = { 42, 0 };
    traffic.sample();
    QCOMPARE(traffic.history(8), (std::vector<Counts> { {}, {}, { 42, 0 } }));
    QCOMPARE(traffic.history(7), (std::vector<Counts> { { 400, 1 }, { 500, 1 }, {} }));
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
    QCOMPARE(traffic.history(3), (std::vector<Counts> { { 10, 20 }, {}, {} }));
    traffic.sample();
    QVERIFY(traffic.history(3).empty());
    QVERIFY(traffic.activeForwarders().empty());
    // When it carries again its window starts empty, with this step only.
    m_totals[3] = { 11, 20 };
    traffic.sample();
    QCOMPARE(traffic.history(3), (std::vector<Counts> { {}, {}, { 1, 0 } }));
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
    QCOMPARE(traffic.history(4), (std::vector<Counts> { { 900, 900 }, { 30, 50 } }));
}

void TestForwarderTraffic::trafficBeforeStartIsNotTheFirstStep()
{
    m_totals = { { 5, { 1 << 20, 1 << 20 } } };
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 2);
    traffic.start();
    m_totals[5].toAgent += 64;
    traffic.sample();
    QCOMPARE(traffic.history(5), (std::vector<Counts> { { 64, 0 } }));
}

void TestForwarderTraffic::framesAndDropsAreStepsOfTheirOwn()
{
    m_totals.clear();
    m_framesCounted = { 6 };
    ForwarderTraffic traffic(source(), m_clock, std::chrono::seconds(5), 2);
    traffic.start();
    m_totals[6] = { 0, 0, 10, 0, 0, 0 };
    m_totals[9] = { 100, 0 };
    traffic.sample();
    // Drops alone are something that moved: the step is kept.
    m_totals[6] = { 0, 0, 10, 0, 3, 1 };
    traffic.sample();
    QCOMPARE(
        traffic.history(6), (std::vector<Counts> { { 0, 0, 10, 0, 0, 0 }, { 0, 0, 0, 0, 3, 1 } }));
    QVERIFY(traffic.countsFrames(6));
    // A forwarder that says no frames (USB, or older) has bytes only.
    QVERIFY(!traffic.countsFrames(9));
    m_framesCounted.clear();
}

void TestForwarderTraffic::eachReportAddsWhatItsStreamGrewBy()
{
    using protocol::DeviceCounters;
    ForwarderFrames frames;
    frames.record(3, DeviceCounters { 41, 7, 100, 10, 1, 0 });
    frames.record(3, DeviceCounters { 41, 7, 150, 10, 1, 2 });
    // Another run's stream of the same binding counts from its own zero.
    frames.record(3, DeviceCounters { 42, 7, 30, 0, 0, 0 });
    // A report said again adds nothing.
    frames.record(3, DeviceCounters { 42, 7, 30, 0, 0, 0 });
    QCOMPARE(frames.totals().at(3), (ForwarderFrames::Totals { 180, 10, 1, 2 }));
    QCOMPARE(frames.totals().at(3).unit, DeviceCounters::Unit::Frames);
    // A USB forwarder's counts are URBs.
    frames.record(6, DeviceCounters { 43, 9, 12, 12, 0, 0, DeviceCounters::Unit::Urbs });
    QCOMPARE(frames.totals().at(6).unit, DeviceCounters::Unit::Urbs);
    // A stream opened again (its counts went back) adds all it says.
    frames.record(3, DeviceCounters { 41, 7, 5, 0, 0, 0 });
    QCOMPARE(frames.totals().at(3).framesToRun, 185u);
    // The oldest streams are forgotten past the limit; memory stays bounded.
    for (qint64 run = 100; run < 100 + qint64(ForwarderFrames::kStreamsKept) + 10; ++run)
        frames.record(4, DeviceCounters { run, 8, 1, 0, 0, 0 });
    QCOMPARE(frames.totals().at(4).framesToRun, quint64(ForwarderFrames::kStreamsKept + 10));
    QVERIFY(!frames.totals().count(5));
}

QTEST_GUILESS_MAIN(TestForwarderTraffic)
#include "tst_forwardertraffic.moc"
