// What a heartbeat's tick decides (common/net/heartbeat.h), without a clock:
// when each end pings, when it gives up, and that a late tick blames itself.
// tst_tunnelconnection has the heartbeat on real links.

#include "common/net/heartbeat.h"

#include <QTest>

using namespace std::chrono_literals;
using cloop::net::Heartbeat;

namespace {

constexpr Heartbeat::Pace kPace { 10'000ms, 30'000ms };

Heartbeat::Verdict onTimeTick(qint64 silentMs, Heartbeat::Initiative initiative)
{
    return Heartbeat::judge(silentMs, kPace.interval.count(), kPace, initiative);
}

} // namespace

class TestHeartbeat final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void anEndPingsOnlyAfterItsShareOfSilence_data();
    void anEndPingsOnlyAfterItsShareOfSilence();
    void bothGiveUpAtTheTimeout();
    void aLateTickPingsInsteadOfJudging();
    void theFollowersPingComesATickBeforeItsTimeout();
};

void TestHeartbeat::anEndPingsOnlyAfterItsShareOfSilence_data()
{
    QTest::addColumn<Heartbeat::Initiative>("initiative");
    QTest::addColumn<qint64>("silentMs");
    QTest::addColumn<Heartbeat::Verdict>("verdict");
    using V = Heartbeat::Verdict;
    const auto leads = Heartbeat::Initiative::Leads;
    const auto follows = Heartbeat::Initiative::Follows;
    // The leader pings after half an interval of silence.
    QTest::newRow("leader, just heard") << leads << qint64(0) << V::Wait;
    QTest::newRow("leader, under half") << leads << qint64(4'999) << V::Wait;
    QTest::newRow("leader, half") << leads << qint64(5'000) << V::Ping;
    QTest::newRow("leader, near timeout") << leads << qint64(29'999) << V::Ping;
    // A leader beating every interval is heard at most an interval (and a
    // coarse timer's lateness) before each of the follower's ticks.
    QTest::newRow("follower, just heard") << follows << qint64(0) << V::Wait;
    QTest::newRow("follower, a late beat") << follows << qint64(10'500) << V::Wait;
    QTest::newRow("follower, under 1.5") << follows << qint64(14'999) << V::Wait;
    QTest::newRow("follower, 1.5 intervals") << follows << qint64(15'000) << V::Ping;
    QTest::newRow("follower, near timeout") << follows << qint64(29'999) << V::Ping;
}

void TestHeartbeat::anEndPingsOnlyAfterItsShareOfSilence()
{
    QFETCH(Heartbeat::Initiative, initiative);
    QFETCH(qint64, silentMs);
    QFETCH(Heartbeat::Verdict, verdict);
    QCOMPARE(onTimeTick(silentMs, initiative), verdict);
}

void TestHeartbeat::bothGiveUpAtTheTimeout()
{
    for (const auto initiative : { Heartbeat::Initiative::Leads, Heartbeat::Initiative::Follows }) {
        QCOMPARE(onTimeTick(30'000, initiative), Heartbeat::Verdict::Dead);
        QCOMPARE(onTimeTick(600'000, initiative), Heartbeat::Verdict::Dead);
    }
}

void TestHeartbeat::aLateTickPingsInsteadOfJudging()
{
    // This side's loop stood still for 25 s: the silence is its own, and
    // what the peer sent meanwhile is still unread.
    for (const auto initiative : { Heartbeat::Initiative::Leads, Heartbeat::Initiative::Follows }) {
        QCOMPARE(Heartbeat::judge(45'000, 25'000, kPace, initiative), Heartbeat::Verdict::Ping);
        QCOMPARE(Heartbeat::judge(0, 25'000, kPace, initiative), Heartbeat::Verdict::Ping);
        // Up to two intervals counts as on time.
        QCOMPARE(Heartbeat::judge(45'000, 20'000, kPace, initiative), Heartbeat::Verdict::Dead);
    }
}

void TestHeartbeat::theFollowersPingComesATickBeforeItsTimeout()
{
    // Ticks an interval apart from a silence begun just after one: the
    // follower's ping goes out at least one tick before the one that would
    // judge the link dead, so the answer has an interval to arrive.
    for (const Heartbeat::Pace &pace :
        { Heartbeat::Pace { Heartbeat::kDefaultInterval, Heartbeat::kDefaultTimeout },
            Heartbeat::Pace { Heartbeat::kWatchfulInterval, Heartbeat::kWatchfulTimeout } }) {
        const qint64 interval = pace.interval.count();
        qint64 firstPing = -1;
        qint64 firstDead = -1;
        for (qint64 silent = interval - 1; firstDead < 0; silent += interval) {
            const auto verdict
                = Heartbeat::judge(silent, interval, pace, Heartbeat::Initiative::Follows);
            if (verdict == Heartbeat::Verdict::Ping && firstPing < 0)
                firstPing = silent;
            if (verdict == Heartbeat::Verdict::Dead)
                firstDead = silent;
        }
        QVERIFY(firstPing >= 0);
        QVERIFY2(firstDead - firstPing >= interval,
            qPrintable(
                QStringLiteral("ping at %1 ms, dead at %2 ms").arg(firstPing).arg(firstDead)));
    }
}

QTEST_GUILESS_MAIN(TestHeartbeat)
#include "tst_heartbeat.moc"
