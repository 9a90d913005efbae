// The cluster bus between two members on one database: a real SQLite file
// (two connections) always, and a real PostgreSQL server the test starts
// when there is one (LISTEN/NOTIFY, a server that goes away and comes
// back). What one member publishes in a change reaches the other in order,
// only once the change committed, never back to itself.

#include "common/util/clock.h"
#include "hub/cluster/clusterbus.h"
#include "hub/cluster/memberlease.h"
#include "hub/domain/eventbus.h"
#include "hub/storage/clustereventstore.h"
#include "hub/storage/database.h"
#include "hub/storage/memberstore.h"
#include "hub/storage/notificationlistener.h"
#include "support/postgresserver.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

// Skips without a server, or fails where one is required (CI).
#define REQUIRE_POSTGRES(database)                                                                 \
    do {                                                                                           \
        if ((database).isEmpty()) {                                                                \
            if (PostgresServer::required())                                                        \
                QFAIL("no PostgreSQL server (CLOOP_REQUIRE_POSTGRES=1)");                          \
            QSKIP("no PostgreSQL server on this machine");                                         \
        }                                                                                          \
    } while (false)

namespace {

// One member: its connection, its lease, its event bus and cluster bus.
struct Member
{
    std::unique_ptr<Database> db;
    std::unique_ptr<MemberStore> members;
    std::unique_ptr<MemberLease> lease;
    std::unique_ptr<EventBus> events;
    std::unique_ptr<ClusterEventStore> store;
    std::unique_ptr<ClusterBus> bus;
    QList<HubEvent> heard;

    QList<HubEvent> heardFromOthers() const
    {
        QList<HubEvent> out;
        for (const HubEvent &event : heard)
            if (event.isFromAnotherMember())
                out.append(event);
        return out;
    }
};

} // namespace

class TestClusterBus final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aCommittedChangesEventReachesTheOtherMember();
    void aRolledBackChangeTellsNobody();
    void eventsArriveInTheirOrderAndNeverTwice();
    void aMemberStartsFromTheNewestEvent();
    void oldEventsArePruned();

    void postgresNotificationWakesTheReaderBeforeThePoll();
    void postgresGoneAndBackAsksForAResynchronisation();

private:
    std::unique_ptr<Member> join(std::unique_ptr<Database> db, const QString &name,
        ClusterBus::Options options, bool listen);
    std::unique_ptr<Member> sqliteMember(const QString &name);
    // A PostgreSQL database for two members; empty when there is none.
    QString postgresDatabase();

    ManualClock m_clock { QDateTime(QDate(2026, 12, 3), QTime(9, 0), Qt::UTC) };
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<PostgresServer> m_server;
};

void TestClusterBus::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
}

void TestClusterBus::cleanup()
{
    m_dir.reset();
}

std::unique_ptr<Member> TestClusterBus::join(
    std::unique_ptr<Database> db, const QString &name, ClusterBus::Options options, bool listen)
{
    auto member = std::make_unique<Member>();
    member->db = std::move(db);
    member->members = std::make_unique<MemberStore>(*member->db);
    member->lease
        = std::make_unique<MemberLease>(*member->members, m_clock, MemberLease::Options {});
    if (!member->lease->join(
            { name + u"-key"_s, name, u"wss://"_s + name, QString(), u"sha256:x"_s, u"0"_s }))
        return nullptr;
    member->events = std::make_unique<EventBus>(*member->db);
    member->store = std::make_unique<ClusterEventStore>(*member->db);
    std::unique_ptr<NotificationListener> listener;
    if (listen) {
        auto opened = NotificationListener::open(*member->db, QString(ClusterEventStore::kChannel));
        if (!opened)
            return nullptr;
        listener = std::move(*opened);
    }
    member->bus = std::make_unique<ClusterBus>(
        *member->store, *member->events, *member->lease, m_clock, std::move(listener), options);
    if (!member->bus->start())
        return nullptr;
    Member *raw = member.get();
    connect(member->events.get(), &EventBus::published, this,
        [raw](const HubEvent &event) { raw->heard.append(event); });
    return member;
}

std::unique_ptr<Member> TestClusterBus::sqliteMember(const QString &name)
{
    auto db = Database::openSqlite(m_dir->filePath(u"hub.db"_s), m_clock);
    if (!db)
        return nullptr;
    ClusterBus::Options options;
    options.poll = std::chrono::hours(1); // read by hand
    return join(std::move(*db), name, options, false);
}

void TestClusterBus::aCommittedChangesEventReachesTheOtherMember()
{
    auto a = sqliteMember(u"hub-a:7443"_s);
    auto b = sqliteMember(u"hub-b:7443"_s);
    QVERIFY(a && b);
    // Given a change in progress on A that publishes its event,
    {
        Database::Transaction change(*a->db);
        a->events->publish(HubEvent(u"binding.created"_s, { { u"id"_s, 7 } }, 3, m_clock.now()));
        // nobody hears of it before it commits, not even A's own subscribers,
        b->bus->readNew();
        QVERIFY(a->heard.isEmpty());
        QVERIFY(b->heard.isEmpty());
        QVERIFY(change.commit());
    }
    // then once it did, A's subscribers hear it as their own
    QCOMPARE(a->heard.size(), 1);
    QVERIFY(!a->heard.first().isFromAnotherMember());
    // and B's hear it from A, with everything it carried.
    b->bus->readNew();
    QCOMPARE(b->heard.size(), 1);
    const HubEvent &event = b->heard.first();
    QCOMPARE(event.member, u"hub-a:7443"_s);
    QCOMPARE(event.name, u"binding.created"_s);
    QCOMPARE(event.data.value("id"_L1).toInteger(), 7);
    QCOMPARE(event.projectId, std::optional<qint64>(3));
    QCOMPARE(event.at, m_clock.now());
    // A reading its own table does not hear itself again.
    a->bus->readNew();
    QCOMPARE(a->heard.size(), 1);
}

void TestClusterBus::aRolledBackChangeTellsNobody()
{
    auto a = sqliteMember(u"hub-a:7443"_s);
    auto b = sqliteMember(u"hub-b:7443"_s);
    QVERIFY(a && b);
    {
        Database::Transaction change(*a->db);
        a->events->publish(HubEvent(u"forwarder.revoked"_s, { { u"id"_s, 1 } }));
        // (the change fails before it commits)
    }
    b->bus->readNew();
    QVERIFY(a->heard.isEmpty());
    QVERIFY(b->heard.isEmpty());
    auto rows = a->db->query(u"SELECT count(*) FROM cluster_events"_s);
    QVERIFY(rows && rows->next());
    QCOMPARE(rows->value(0).toInt(), 0);
}

void TestClusterBus::eventsArriveInTheirOrderAndNeverTwice()
{
    auto a = sqliteMember(u"hub-a:7443"_s);
    auto b = sqliteMember(u"hub-b:7443"_s);
    QVERIFY(a && b);
    // Both members publish, interleaved, some in batches of one transaction.
    for (int i = 0; i < 30; ++i) {
        Member &from = i % 3 == 0 ? *b : *a;
        Database::Transaction change(*from.db);
        from.events->publish(HubEvent(u"run.queued"_s, { { u"n"_s, i } }));
        if (i % 5 == 0)
            from.events->publish(HubEvent(u"run.queued"_s, { { u"n"_s, 1000 + i } }));
        QVERIFY(change.commit());
        if (i % 7 == 0) {
            a->bus->readNew();
            b->bus->readNew();
        }
    }
    a->bus->readNew();
    b->bus->readNew();
    b->bus->readNew();
    // Each member heard every event exactly once: its own as it committed,
    // the other's in the order they were committed.
    QList<int> onA;
    QList<int> onB;
    for (const HubEvent &event : a->heard)
        onA.append(event.data.value("n"_L1).toInt());
    for (const HubEvent &event : b->heard)
        onB.append(event.data.value("n"_L1).toInt());
    QCOMPARE(onA.size(), 36);
    QCOMPARE(onB.size(), 36);
    QList<int> fromA;
    QList<int> fromB;
    for (const HubEvent &event : b->heardFromOthers())
        fromA.append(event.data.value("n"_L1).toInt());
    for (const HubEvent &event : a->heardFromOthers())
        fromB.append(event.data.value("n"_L1).toInt());
    QList<int> expectedFromA;
    QList<int> expectedFromB;
    for (int i = 0; i < 30; ++i) {
        QList<int> &list = i % 3 == 0 ? expectedFromB : expectedFromA;
        list.append(i);
        if (i % 5 == 0)
            list.append(1000 + i);
    }
    QCOMPARE(fromA, expectedFromA);
    QCOMPARE(fromB, expectedFromB);
}

void TestClusterBus::aMemberStartsFromTheNewestEvent()
{
    auto a = sqliteMember(u"hub-a:7443"_s);
    QVERIFY(a);
    a->events->publish(HubEvent(u"forwarder.enrolled"_s, { { u"id"_s, 1 } }));
    // A member that joins later hears only what comes after it joined.
    auto b = sqliteMember(u"hub-b:7443"_s);
    QVERIFY(b);
    b->bus->readNew();
    QVERIFY(b->heard.isEmpty());
    a->events->publish(HubEvent(u"forwarder.enrolled"_s, { { u"id"_s, 2 } }));
    b->bus->readNew();
    QCOMPARE(b->heard.size(), 1);
    QCOMPARE(b->heard.first().data.value("id"_L1).toInteger(), 2);
}

void TestClusterBus::oldEventsArePruned()
{
    auto a = sqliteMember(u"hub-a:7443"_s);
    QVERIFY(a);
    a->events->publish(HubEvent(u"forwarder.enrolled"_s, { { u"id"_s, 1 } }, {}, m_clock.now()));
    m_clock.advance(3600);
    a->events->publish(HubEvent(u"forwarder.enrolled"_s, { { u"id"_s, 2 } }, {}, m_clock.now()));
    auto pruned = a->store->pruneBefore(m_clock.now().addSecs(-600));
    QVERIFY(pruned);
    QCOMPARE(*pruned, 1);
    auto first = a->store->firstSequence();
    auto last = a->store->lastSequence();
    QVERIFY(first && last);
    QCOMPARE(*first, *last);
}

QString TestClusterBus::postgresDatabase()
{
    if (!m_server) {
        m_server = std::make_unique<PostgresServer>();
        if (!m_server->start()) {
            if (PostgresServer::required())
                qWarning().noquote() << m_server->lastError();
            return {};
        }
    }
    return m_server->createDatabase();
}

void TestClusterBus::postgresNotificationWakesTheReaderBeforeThePoll()
{
    const QString database = postgresDatabase();
    REQUIRE_POSTGRES(database);
    ClusterBus::Options slow;
    slow.poll = std::chrono::seconds(30); // only a notification can be in time
    auto dbA = Database::openPostgres(m_server->connectionString(database), m_clock);
    auto dbB = Database::openPostgres(m_server->connectionString(database), m_clock);
    QVERIFY(dbA && dbB);
    auto a = join(std::move(*dbA), u"hub-a:7443"_s, slow, true);
    auto b = join(std::move(*dbB), u"hub-b:7443"_s, slow, true);
    QVERIFY(a && b);
    QElapsedTimer took;
    took.start();
    a->events->publish(HubEvent(u"forwarder.revoked"_s, { { u"id"_s, 4 } }));
    QTRY_COMPARE_WITH_TIMEOUT(b->heard.size(), 1, 10'000);
    QVERIFY2(took.elapsed() < 10'000, "the poll, not the notification, delivered it");
    qInfo() << "delivered by notification in" << took.elapsed() << "ms";
    QCOMPARE(b->heard.first().data.value("id"_L1).toInteger(), 4);
    QCOMPARE(b->heard.first().member, u"hub-a:7443"_s);
}

void TestClusterBus::postgresGoneAndBackAsksForAResynchronisation()
{
    const QString database = postgresDatabase();
    REQUIRE_POSTGRES(database);
    ClusterBus::Options byHand;
    byHand.poll = std::chrono::hours(1);
    byHand.listenerCheck = std::chrono::hours(1);
    auto dbA = Database::openPostgres(m_server->connectionString(database), m_clock);
    auto dbB = Database::openPostgres(m_server->connectionString(database), m_clock);
    QVERIFY(dbA && dbB);
    auto a = join(std::move(*dbA), u"hub-a:7443"_s, byHand, false);
    auto b = join(std::move(*dbB), u"hub-b:7443"_s, byHand, false);
    QVERIFY(a && b);
    QSignalSpy resynchronise(b->bus.get(), &ClusterBus::resynchronise);
    // Given the server gone while B reads,
    QVERIFY2(m_server->stop(), qPrintable(m_server->lastError()));
    b->bus->readNew();
    QVERIFY(b->heard.isEmpty());
    QCOMPARE(resynchronise.size(), 0);
    // a change on A fails then, saying why, and nothing of it is heard,
    {
        Database::Transaction change(*a->db);
        a->events->publish(HubEvent(u"binding.created"_s, { { u"id"_s, 1 } }));
        const Status committed = change.commit();
        QVERIFY(!committed);
        QCOMPARE(committed.error().code, QString(kDatabaseUnreachable));
        QVERIFY2(committed.error().message.contains(u"the cluster database is unreachable"_s),
            qPrintable(committed.error().message));
    }
    QVERIFY(a->heard.isEmpty());
    // and once the server is back, B asks for a resynchronisation and then
    // hears what A does from then on.
    QVERIFY2(m_server->start(), qPrintable(m_server->lastError()));
    QVERIFY(QTest::qWaitFor(
        [&] {
            Database::Transaction change(*a->db);
            a->events->publish(HubEvent(u"binding.created"_s, { { u"id"_s, 2 } }));
            return change.commit().ok();
        },
        20'000));
    QCOMPARE(a->heard.size(), 1);
    QVERIFY(QTest::qWaitFor(
        [&] {
            b->bus->readNew();
            return !b->heard.isEmpty();
        },
        20'000));
    QCOMPARE(resynchronise.size(), 1);
    QCOMPARE(b->heard.first().data.value("id"_L1).toInteger(), 2);
}

QTEST_GUILESS_MAIN(TestClusterBus)
#include "tst_clusterbus.moc"
