// The pre-authentication pool: per-address caps and rates, the global cap,
// and whose place a newcomer takes when it is full.

#include "hub/edge/preauthpool.h"

#include <QtTest>

#include <map>

using cloop::hub::edge::PreAuthPool;
using cloop::hub::edge::sourceKeyOf;

namespace {

QHostAddress v4(const char *text)
{
    return QHostAddress(QString::fromLatin1(text));
}

// Connections as the front holds them: a place each, ended when evicted.
class Connections
{
public:
    explicit Connections(PreAuthPool &pool)
        : m_pool(pool)
    { }

    // The connection's number, or 0 when the pool refused it.
    int open(const QHostAddress &source, qint64 nowMs = 0)
    {
        const int number = ++m_next;
        auto place = m_pool.enter(source, nowMs, [this, number] {
            m_evicted.push_back(number);
            m_live.erase(number);
        });
        if (!place)
            return 0;
        m_live.emplace(number, std::move(*place));
        return number;
    }
    void close(int number) { m_live.erase(number); }
    bool isLive(int number) const { return m_live.count(number) > 0; }
    const std::vector<int> &evicted() const { return m_evicted; }

private:
    PreAuthPool &m_pool;
    std::map<int, PreAuthPool::Place> m_live;
    std::vector<int> m_evicted;
    int m_next = 0;
};

PreAuthPool::Limits limits(int total, int perSource, int burst = 1000, double rate = 1000)
{
    PreAuthPool::Limits limits;
    limits.maxTotal = total;
    limits.maxPerSource = perSource;
    limits.admitBurst = burst;
    limits.admitPerSecond = rate;
    return limits;
}

} // namespace

class TestPreAuthPool final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sourceKeys();
    void placesAreGivenBack();
    void aSourceTakesOnlyItsShare();
    void aFullPoolEvictsTheLargestSource();
    void theNewcomerAlwaysGetsIn();
    void newConnectionsPerSourceAreRateLimited();
    void aPlaceMayOutliveThePool();
};

void TestPreAuthPool::sourceKeys()
{
    // IPv4 by address, IPv4-mapped IPv6 as IPv4, IPv6 by /64.
    QCOMPARE(sourceKeyOf(v4("192.0.2.1")), sourceKeyOf(v4("::ffff:192.0.2.1")));
    QVERIFY(sourceKeyOf(v4("192.0.2.1")) != sourceKeyOf(v4("192.0.2.2")));
    QCOMPARE(sourceKeyOf(v4("2001:db8:1:2::1")), sourceKeyOf(v4("2001:db8:1:2:ffff::9")));
    QVERIFY(sourceKeyOf(v4("2001:db8:1:2::1")) != sourceKeyOf(v4("2001:db8:1:3::1")));
    QVERIFY(sourceKeyOf(v4("0.0.0.1")) != sourceKeyOf(v4("::1")));
}

void TestPreAuthPool::placesAreGivenBack()
{
    PreAuthPool pool(limits(4, 4));
    Connections connections(pool);
    const int a = connections.open(v4("192.0.2.1"));
    const int b = connections.open(v4("192.0.2.1"));
    QCOMPARE(pool.size(), 2);
    QCOMPARE(pool.sizeOf(v4("192.0.2.1")), 2);
    connections.close(a);
    QCOMPARE(pool.size(), 1);
    connections.close(b);
    QCOMPARE(pool.size(), 0);
    QCOMPARE(pool.sizeOf(v4("192.0.2.1")), 0);

    // Released twice, or moved from, a place gives back exactly once.
    auto place = pool.enter(v4("192.0.2.9"), 0, {});
    QVERIFY(place && place->isHeld());
    PreAuthPool::Place moved = std::move(*place);
    QVERIFY(!place->isHeld());
    QCOMPARE(pool.size(), 1);
    moved.release();
    moved.release();
    QCOMPARE(pool.size(), 0);
}

void TestPreAuthPool::aSourceTakesOnlyItsShare()
{
    // Given a source at its cap
    PreAuthPool pool(limits(100, 3));
    Connections connections(pool);
    const int first = connections.open(v4("198.51.100.7"));
    const int second = connections.open(v4("198.51.100.7"));
    const int third = connections.open(v4("198.51.100.7"));
    const int other = connections.open(v4("203.0.113.1"));
    // When it opens one more, its own oldest goes, nobody else's.
    const int fourth = connections.open(v4("198.51.100.7"));
    QVERIFY(fourth != 0);
    QCOMPARE(connections.evicted(), std::vector<int> { first });
    QVERIFY(connections.isLive(second) && connections.isLive(third) && connections.isLive(fourth));
    QVERIFY(connections.isLive(other));
    QCOMPARE(pool.sizeOf(v4("198.51.100.7")), 3);
    QCOMPARE(pool.evictedCount(), quint64(1));
}

void TestPreAuthPool::aFullPoolEvictsTheLargestSource()
{
    // Given a full pool: a flooder with 4 places, two others with 1 and 2
    PreAuthPool pool(limits(7, 5));
    Connections connections(pool);
    const int lab = connections.open(v4("10.1.0.1"));
    std::vector<int> flood;
    for (int i = 0; i < 4; ++i)
        flood.push_back(connections.open(v4("192.0.2.66")));
    const int office1 = connections.open(v4("10.2.0.1"));
    const int office2 = connections.open(v4("10.2.0.1"));
    QCOMPARE(pool.size(), 7);

    // When a daemon from a fourth address arrives, the flooder's oldest goes
    const int daemon = connections.open(v4("10.3.0.1"));
    QVERIFY(daemon != 0);
    QCOMPARE(connections.evicted(), std::vector<int> { flood[0] });
    QVERIFY(connections.isLive(lab) && connections.isLive(office1) && connections.isLive(office2));
    QCOMPARE(pool.size(), 7);
    // and keeps going first while it holds the most.
    connections.open(v4("10.4.0.1"));
    QCOMPARE(connections.evicted(), (std::vector<int> { flood[0], flood[1] }));
}

void TestPreAuthPool::theNewcomerAlwaysGetsIn()
{
    // However the pool was filled, a newcomer with a rate left gets a place.
    PreAuthPool pool(limits(50, 50, 10'000, 0));
    Connections connections(pool);
    for (int i = 0; i < 500; ++i)
        QVERIFY(connections.open(v4("192.0.2.66")) != 0);
    QCOMPARE(pool.size(), 50);
    const int daemon = connections.open(v4("192.0.2.66"));
    QVERIFY(daemon != 0);
    QVERIFY(connections.isLive(daemon));
}

void TestPreAuthPool::newConnectionsPerSourceAreRateLimited()
{
    // Bursts of 3, refilled at 2 per second.
    PreAuthPool pool(limits(100, 100, 3, 2));
    Connections connections(pool);
    for (int i = 0; i < 3; ++i)
        QVERIFY(connections.open(v4("192.0.2.66"), 0) != 0);
    QCOMPARE(connections.open(v4("192.0.2.66"), 0), 0);
    QCOMPARE(pool.refusedCount(), quint64(1));
    // Others are not affected
    QVERIFY(connections.open(v4("192.0.2.67"), 0) != 0);
    // and the source gets one more after half a second.
    QCOMPARE(connections.open(v4("192.0.2.66"), 400), 0);
    QVERIFY(connections.open(v4("192.0.2.66"), 500) != 0);
    QCOMPARE(connections.open(v4("192.0.2.66"), 500), 0);
    // Closing does not give the rate back: it counts openings, not places.
    QCOMPARE(pool.size(), 5);
}

void TestPreAuthPool::aPlaceMayOutliveThePool()
{
    std::optional<PreAuthPool::Place> place;
    {
        PreAuthPool pool;
        place = pool.enter(v4("192.0.2.1"), 0, {});
        QVERIFY(place && place->isHeld());
    }
    place->release();
    QVERIFY(!place->isHeld());
}

QTEST_GUILESS_MAIN(TestPreAuthPool)
#include "tst_preauthpool.moc"
