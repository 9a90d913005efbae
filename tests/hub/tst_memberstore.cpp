// MemberStore and MemberLease on a real SQLite file and a ManualClock: the
// cluster's members table, its generations and leases.

#include "common/util/clock.h"
#include "hub/cluster/clustermembers.h"
#include "hub/cluster/memberlease.h"
#include "hub/storage/database.h"
#include "hub/storage/memberstore.h"
#include "hub/storage/sessionholderstore.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::hub;
using namespace Qt::StringLiterals;

namespace {

MemberStore::Joining memberA()
{
    return { u"a1b2"_s, u"hub-a.example:7443"_s, u"wss://hub-a.example:7443"_s, QString(),
        u"sha256:AAAA"_s, u"0.1.0"_s };
}

MemberStore::Joining memberB()
{
    return { u"e5f6"_s, u"hub-b.example:7443"_s, u"wss://hub-b.example:7443"_s, QString(),
        u"sha256:BBBB"_s, u"0.1.0"_s };
}

} // namespace

class TestMemberStore final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aMemberJoinsAndIsAliveWhileItsLeaseRuns();
    void aRestartIsTheSameMemberAtTheNextGeneration();
    void aStaleGenerationCannotRenew();
    void leavingEndsTheLeaseAtOnce();
    void theLeaseRenewsItselfAndLeavesWhenItGoes();
    void aLeaseTakenOverSaysSo();
    void aLiveMemberClaimsAndReleasesItsSessions();
    void aStaleClaimNeverWins();
    void onlyLiveMembersHoldSessions();
    void aMemberSeesTheOthersComeAndGo();

private:
    ManualClock m_clock { QDateTime(QDate(2026, 12, 2), QTime(9, 0), Qt::UTC) };
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Database> m_db;
};

void TestMemberStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto db = Database::openSqlite(m_dir->filePath(u"hub.db"_s), m_clock);
    QVERIFY(db);
    m_db = std::move(*db);
}

void TestMemberStore::cleanup()
{
    m_db.reset();
    m_dir.reset();
}

void TestMemberStore::aMemberJoinsAndIsAliveWhileItsLeaseRuns()
{
    MemberStore store(*m_db);
    auto joined = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY2(joined, qPrintable(joined ? QString() : joined.error().message));
    QCOMPARE(joined->generation, 1);
    QCOMPARE(joined->name, u"hub-a.example:7443"_s);
    QCOMPARE(joined->keyPin, u"sha256:AAAA"_s);
    QVERIFY(joined->peerUrl.isEmpty());
    QCOMPARE(joined->stateAt(m_clock.now()), MemberRecord::State::Alive);
    QCOMPARE(joined->stateAt(m_clock.now().addSecs(14)), MemberRecord::State::Alive);
    QCOMPARE(joined->stateAt(m_clock.now().addSecs(15)), MemberRecord::State::Dead);
    QCOMPARE(memberStateName(MemberRecord::State::Dead), u"dead"_s);

    MemberStore::Joining other = memberA();
    other.key = u"c3d4"_s;
    other.name = u"hub-b.example:7443"_s;
    QVERIFY(store.join(other, m_clock.now().addSecs(15)));
    auto listed = store.list();
    QVERIFY(listed);
    QCOMPARE(listed->size(), 2);
    QCOMPARE(listed->at(1).name, u"hub-b.example:7443"_s);
    QCOMPARE(listed->at(1).generation, 1);
}

void TestMemberStore::aRestartIsTheSameMemberAtTheNextGeneration()
{
    MemberStore store(*m_db);
    auto first = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(first);
    m_clock.advance(60);
    MemberStore::Joining again = memberA();
    again.software = u"0.1.1"_s;
    auto second = store.join(again, m_clock.now().addSecs(15));
    QVERIFY(second);
    QCOMPARE(second->id, first->id);
    QCOMPARE(second->generation, 2);
    QCOMPARE(second->software, u"0.1.1"_s);
    QCOMPARE(second->startedAt, m_clock.now());
    QCOMPARE(store.list()->size(), 1);
}

void TestMemberStore::aStaleGenerationCannotRenew()
{
    MemberStore store(*m_db);
    auto old = store.join(memberA(), m_clock.now().addSecs(15));
    auto current = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(old && current);
    // The replaced process's renewal changes nothing.
    const QDateTime later = m_clock.now().addSecs(600);
    auto stale = store.renew(old->id, old->generation, later);
    QVERIFY(stale);
    QVERIFY(!*stale);
    QCOMPARE(store.list()->constFirst().leaseUntil, m_clock.now().addSecs(15));
    // Nor can it say the member left.
    QVERIFY(store.leave(old->id, old->generation));
    QCOMPARE(store.list()->constFirst().stateAt(m_clock.now()), MemberRecord::State::Alive);
    auto renewed = store.renew(current->id, current->generation, later);
    QVERIFY(renewed && *renewed);
    QCOMPARE(store.list()->constFirst().leaseUntil, later);
}

void TestMemberStore::leavingEndsTheLeaseAtOnce()
{
    MemberStore store(*m_db);
    auto joined = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(joined);
    m_clock.advance(2);
    QVERIFY(store.leave(joined->id, joined->generation));
    const MemberRecord left = store.list()->constFirst();
    QCOMPARE(left.stateAt(m_clock.now()), MemberRecord::State::Left);
    QCOMPARE(left.leftAt, m_clock.now());
    // A member that left renews nothing; it joins again to come back.
    auto renewed = store.renew(joined->id, joined->generation, m_clock.now().addSecs(15));
    QVERIFY(renewed && !*renewed);
    auto back = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(back);
    QCOMPARE(back->stateAt(m_clock.now()), MemberRecord::State::Alive);
    QVERIFY(!back->leftAt.isValid());
}

void TestMemberStore::theLeaseRenewsItselfAndLeavesWhenItGoes()
{
    MemberStore store(*m_db);
    {
        MemberLease lease(store, m_clock,
            MemberLease::Options { std::chrono::seconds(15), std::chrono::milliseconds(20) });
        QVERIFY(lease.join(memberA()));
        QVERIFY(lease.isMember());
        m_clock.advance(10);
        // Renewed from the clock's new time, by the timer alone.
        QTRY_COMPARE(store.list()->constFirst().leaseUntil, m_clock.now().addSecs(15));
        QCOMPARE(lease.record().leaseUntil, m_clock.now().addSecs(15));
    }
    QCOMPARE(store.list()->constFirst().stateAt(m_clock.now()), MemberRecord::State::Left);
}

void TestMemberStore::aLeaseTakenOverSaysSo()
{
    MemberStore store(*m_db);
    MemberLease lease(store, m_clock,
        MemberLease::Options { std::chrono::seconds(15), std::chrono::milliseconds(20) });
    QSignalSpy superseded(&lease, &MemberLease::superseded);
    QVERIFY(lease.join(memberA()));
    // The same data folder started again elsewhere.
    auto newer = store.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(newer);
    QTRY_COMPARE(superseded.size(), 1);
    QVERIFY(superseded.first().first().toString().contains(u"started again"_s));
    QVERIFY(!lease.isMember());
    QCOMPARE(store.list()->constFirst().generation, newer->generation);
}

void TestMemberStore::aLiveMemberClaimsAndReleasesItsSessions()
{
    MemberStore members(*m_db);
    SessionHolderStore holders(*m_db);
    auto a = members.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(a);
    auto claimed = holders.claim(u"forwarder"_s, 7, a->id, a->generation, m_clock.now());
    QVERIFY2(claimed && *claimed, qPrintable(claimed ? QString() : claimed.error().message));
    auto live = holders.live(m_clock.now());
    QVERIFY(live);
    QCOMPARE(live->size(), 1);
    QCOMPARE(live->first().daemonId, 7);
    QCOMPARE(live->first().memberName, u"hub-a.example:7443"_s);
    QCOMPARE(live->first().connectedAt, m_clock.now());
    // An executor of the same id is another session.
    QVERIFY(*holders.claim(u"executor"_s, 7, a->id, a->generation, m_clock.now()));
    QCOMPARE(holders.live(m_clock.now())->size(), 2);
    QVERIFY(holders.release(u"forwarder"_s, 7, a->id, a->generation));
    live = holders.live(m_clock.now());
    QCOMPARE(live->size(), 1);
    QCOMPARE(live->first().kind, u"executor"_s);
}

void TestMemberStore::aStaleClaimNeverWins()
{
    MemberStore members(*m_db);
    SessionHolderStore holders(*m_db);
    auto a = members.join(memberA(), m_clock.now().addSecs(15));
    auto b = members.join(memberB(), m_clock.now().addSecs(15));
    QVERIFY(a && b);
    const QDateTime earlier = m_clock.now();
    m_clock.advance(1);
    // The daemon reconnected to B; A's write of its older connection
    // comes late and changes nothing.
    QVERIFY(*holders.claim(u"forwarder"_s, 3, b->id, b->generation, m_clock.now()));
    auto late = holders.claim(u"forwarder"_s, 3, a->id, a->generation, earlier);
    QVERIFY(late);
    QVERIFY(!*late);
    QCOMPARE(holders.live(m_clock.now())->first().memberId, b->id);
    // Nor does A's release of its own, long gone, session touch B's claim.
    QVERIFY(holders.release(u"forwarder"_s, 3, a->id, a->generation));
    QCOMPARE(holders.live(m_clock.now())->size(), 1);
    // A replaced start of B cannot release what the new start claims.
    auto newerB = members.join(memberB(), m_clock.now().addSecs(15));
    QVERIFY(newerB);
    QVERIFY(*holders.claim(u"forwarder"_s, 3, b->id, newerB->generation, m_clock.now()));
    QVERIFY(holders.release(u"forwarder"_s, 3, b->id, b->generation));
    QCOMPARE(holders.live(m_clock.now())->size(), 1);
    // A member whose lease lapsed writes nothing.
    m_clock.advance(20);
    auto dead = holders.claim(u"forwarder"_s, 4, a->id, a->generation, m_clock.now());
    QVERIFY(dead && !*dead);
    // A live member's claim replaces a dead member's, however old its
    // connection time.
    auto renewed = members.renew(a->id, a->generation, m_clock.now().addSecs(15));
    QVERIFY(renewed && *renewed);
    QVERIFY(*holders.claim(u"forwarder"_s, 3, a->id, a->generation, earlier));
    const auto live = holders.live(m_clock.now());
    QCOMPARE(live->size(), 1);
    QCOMPARE(live->first().memberId, a->id);
}

void TestMemberStore::onlyLiveMembersHoldSessions()
{
    MemberStore members(*m_db);
    SessionHolderStore holders(*m_db);
    auto a = members.join(memberA(), m_clock.now().addSecs(15));
    auto b = members.join(memberB(), m_clock.now().addSecs(60));
    QVERIFY(a && b);
    QVERIFY(*holders.claim(u"forwarder"_s, 1, a->id, a->generation, m_clock.now()));
    QVERIFY(*holders.claim(u"forwarder"_s, 2, b->id, b->generation, m_clock.now()));
    QCOMPARE(holders.live(m_clock.now())->size(), 2);
    // A's lease lapses: its sessions are offline.
    m_clock.advance(16);
    auto live = holders.live(m_clock.now());
    QCOMPARE(live->size(), 1);
    QCOMPARE(live->first().daemonId, 2);
    // B leaves: nothing is held.
    QVERIFY(members.leave(b->id, b->generation));
    QCOMPARE(holders.live(m_clock.now())->size(), 0);
    // A starts again: its earlier start's claims are forgotten.
    auto again = members.join(memberA(), m_clock.now().addSecs(15));
    QVERIFY(again);
    QVERIFY(holders.forgetEarlierStarts(again->id, again->generation));
    QVERIFY(*holders.claim(u"executor"_s, 9, again->id, again->generation, m_clock.now()));
    live = holders.live(m_clock.now());
    QCOMPARE(live->size(), 1);
    QCOMPARE(live->first().kind, u"executor"_s);
}

void TestMemberStore::aMemberSeesTheOthersComeAndGo()
{
    MemberStore store(*m_db);
    MemberLease a(store, m_clock, {});
    QVERIFY(a.join(memberA()));
    ClusterMembers view(store, a, m_clock, std::chrono::milliseconds(20));
    QSignalSpy changed(&view, &ClusterMembers::changed);
    view.start();
    // Alone: nobody else, and its daemons are told its own address.
    QVERIFY(view.others().isEmpty());
    QCOMPARE(view.daemonUrls(), QList<QUrl> { QUrl(u"wss://hub-a.example:7443"_s) });
    // A member that joins later is seen at the next reading, with its key,
    {
        MemberLease b(store, m_clock, {});
        QVERIFY(b.join(memberB()));
        QTRY_COMPARE(changed.size(), 1);
        QCOMPARE(view.others().size(), 1);
        QCOMPARE(view.otherPins(), QStringList { u"sha256:BBBB"_s });
        QCOMPARE(view.daemonUrls(),
            (QList<QUrl> {
                QUrl(u"wss://hub-a.example:7443"_s), QUrl(u"wss://hub-b.example:7443"_s) }));
        QCOMPARE(view.liveMemberWithPin(u"sha256:BBBB"_s)->id, b.record().id);
        QVERIFY(!view.liveMemberWithPin(u"sha256:AAAA"_s)); // itself is no peer
    }
    // and one that left is gone from the view.
    QTRY_COMPARE(changed.size(), 2);
    QVERIFY(view.others().isEmpty());
}

QTEST_GUILESS_MAIN(TestMemberStore)
#include "tst_memberstore.moc"
