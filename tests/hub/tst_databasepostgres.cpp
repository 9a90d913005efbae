// The hub's storage on a real PostgreSQL server: the same stores that
// tst_database, tst_forwarderstore, tst_runstore and tst_bindings exercise on
// SQLite, through Database::openPostgres against a throwaway server of the
// test's own (tests/support/postgresserver.h). Without PostgreSQL installed
// the test skips; with CLOOP_REQUIRE_POSTGRES=1 (CI) it fails instead.

#include "common/crypto/secrets.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/bindingstore.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"
#include "hub/storage/requeststore.h"
#include "hub/storage/runstore.h"
#include "hub/storage/virtualexecutorstore.h"
#include "support/postgresserver.h"
#include "support/verifyresult.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

using namespace cloop;
using namespace cloop::hub;
using cloop::testing::PostgresServer;

namespace {

protocol::DeviceSpec usbDevice()
{
    return *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407:A1B2"));
}

qint64 countOf(Database &db, const QString &table)
{
    auto rows = db.query(QStringLiteral("SELECT count(*) FROM %1").arg(table));
    if (!rows || !rows->next())
        return -1;
    return rows->value(0).toLongLong();
}

} // namespace

class TestDatabasePostgres : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void migratesToCurrentSchemaAndReopens();
    void concurrentOpensMigrateOnce();
    void transactionRollsBackUnlessCommitted();
    void failedStatementInTransactionCommitsNothing();
    void failedStatementNamesItsPurposeNotItsValues();
    void forwarderEnrollmentRedeemAndRevoke();
    void concurrentRedemptionsHaveOneWinner();
    void executorEnrollmentHelloAndRevoke();
    void usersProjectsRolesAndTokens();
    void requestsAndBindings();
    void runsMoveThroughTheirStates();
    void rawBytesComeBackAsTheyWereAndJoinAsBytes();
    void auditLogFiltersBySinceAndAction();
    void wrongPasswordIsRefused();
    void quotedValuesReachTheServerAsTheyAre();
    void unreachableServerIsRefused();
    void urlIsRefusedWithTheKeywordForm();
    void readOnlyDatabaseIsRefused();
    void serverStoppedUnderOpenDatabase();
    void aChangeIsAnsweredAsMadeWhenTheConnectionDropsRightAfterItsCommit();

private:
    PostgresServer m_server;
    QString m_database;
    std::unique_ptr<Database> m_db;
};

void TestDatabasePostgres::initTestCase()
{
    QElapsedTimer clock;
    clock.start();
    if (!m_server.start()) {
        const QString why
            = QStringLiteral("no PostgreSQL server for this test: %1").arg(m_server.lastError());
        if (PostgresServer::required())
            QFAIL(qPrintable(why + QStringLiteral("\n(CLOOP_REQUIRE_POSTGRES=1: a failure here)")));
        QSKIP(qPrintable(why + QStringLiteral(" (CLOOP_REQUIRE_POSTGRES=1 fails instead)")));
    }
    qInfo("PostgreSQL server in %s started in %lld ms", qPrintable(m_server.socketDirectory()),
        clock.elapsed());
}

void TestDatabasePostgres::init()
{
    m_database = m_server.createDatabase();
    QVERIFY2(!m_database.isEmpty(), qPrintable(m_server.lastError()));
    auto db = Database::openPostgres(m_server.connectionString(m_database));
    CLOOP_VERIFY_OK(db);
    m_db = std::move(*db);
}

void TestDatabasePostgres::cleanup()
{
    m_db.reset();
}

void TestDatabasePostgres::migratesToCurrentSchemaAndReopens()
{
    QCOMPARE(m_db->dialect(), Database::Dialect::Postgres);
    QCOMPARE(m_db->schemaVersion(), Database::currentSchemaVersion());
    for (const char *table : { "users", "api_tokens", "forwarders", "enrollment_tokens",
             "forwarder_credentials", "audit_log", "projects", "project_roles", "binding_requests",
             "bindings", "executors", "executor_tokens", "executor_credentials", "runs",
             "virtual_executors", "run_logs", "run_log_chunks", "run_log_totals" })
        QVERIFY2(countOf(*m_db, QLatin1String(table)) == 0, table);
    QVERIFY(m_db->query(
        QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 1, ?)"),
        { QStringLiteral("alice"), QStringLiteral("2026-01-01T00:00:00.000Z") }));

    // Reopening finds the schema current and changes nothing.
    m_db.reset();
    auto again = Database::openPostgres(m_server.connectionString(m_database));
    CLOOP_VERIFY_OK(again);
    m_db = std::move(*again);
    QCOMPARE(m_db->schemaVersion(), Database::currentSchemaVersion());
    QCOMPARE(countOf(*m_db, QStringLiteral("meta")), 1);
    auto rows = m_db->query(QStringLiteral("SELECT name FROM users"));
    QVERIFY(rows && rows->next());
    QCOMPARE(rows->value(0).toString(), QStringLiteral("alice"));
    QVERIFY(!rows->next());

    // A schema newer than this hub is refused, as on SQLite.
    QVERIFY(
        m_db->query(QStringLiteral("UPDATE meta SET value = '999' WHERE key = 'schema_version'")));
    auto newer = Database::openPostgres(m_server.connectionString(m_database));
    QVERIFY(!newer);
    QCOMPARE(newer.error().code, QStringLiteral("schema_too_new"));
}

void TestDatabasePostgres::concurrentOpensMigrateOnce()
{
    // Hub members starting together on one new database.
    const QString fresh = m_server.createDatabase();
    QVERIFY2(!fresh.isEmpty(), qPrintable(m_server.lastError()));
    const QString connection = m_server.connectionString(fresh);
    constexpr int kMembers = 3;
    std::atomic<int> ready { 0 };
    std::vector<QString> outcomes(kMembers);
    std::vector<std::thread> members;
    for (int i = 0; i < kMembers; ++i) {
        members.emplace_back([&, i] {
            ++ready;
            while (ready.load() < kMembers)
                std::this_thread::yield();
            auto db = Database::openPostgres(connection);
            outcomes[i] = db ? QString() : db.error().message;
        });
    }
    for (auto &member : members)
        member.join();
    for (const QString &outcome : outcomes)
        QVERIFY2(outcome.isEmpty(), qPrintable(outcome));
    auto db = Database::openPostgres(connection);
    CLOOP_VERIFY_OK(db);
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    QCOMPARE(countOf(**db, QStringLiteral("meta")), 1);
}

void TestDatabasePostgres::transactionRollsBackUnlessCommitted()
{
    Database &database = *m_db;
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')");
    {
        Database::Transaction transaction(database);
        QVERIFY(transaction.begin());
        QVERIFY(database.query(insert, { QStringLiteral("bob") }));
    }
    QCOMPARE(countOf(database, QStringLiteral("users")), 0);

    {
        Database::Transaction transaction(database);
        QVERIFY(database.query(insert, { QStringLiteral("bob") }));
        QVERIFY(transaction.commit());
        QVERIFY(!transaction.commit());
    }
    QCOMPARE(countOf(database, QStringLiteral("users")), 1);

    // A joined transaction that gives up takes the outer one with it.
    {
        Database::Transaction outer(database);
        QVERIFY(database.query(insert, { QStringLiteral("carol") }));
        {
            Database::Transaction inner(database);
            QVERIFY(inner.begin());
            QVERIFY(database.query(insert, { QStringLiteral("dave") }));
        }
        QVERIFY(!outer.commit());
    }
    QCOMPARE(countOf(database, QStringLiteral("users")), 1);

    {
        Database::Transaction outer(database);
        {
            Database::Transaction inner(database);
            QVERIFY(database.query(insert, { QStringLiteral("erin") }));
            QVERIFY(inner.commit());
        }
        QVERIFY(outer.commit());
    }
    QCOMPARE(countOf(database, QStringLiteral("users")), 2);
}

void TestDatabasePostgres::failedStatementInTransactionCommitsNothing()
{
    Database &database = *m_db;
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')");
    QVERIFY(database.query(insert, { QStringLiteral("taken") }));
    {
        Database::Transaction transaction(database);
        QVERIFY(transaction.begin());
        QVERIFY(database.query(insert, { QStringLiteral("first") }));
        QVERIFY(!database.query(insert, { QStringLiteral("taken") }));
        // PostgreSQL has given the transaction up; a COMMIT there would
        // quietly roll back. Committing must say so.
        auto committed = transaction.commit();
        QVERIFY(!committed);
        QCOMPARE(committed.error().code, QStringLiteral("storage_error"));
    }
    auto names = database.query(QStringLiteral("SELECT name FROM users ORDER BY name"));
    QVERIFY(names && names->next());
    QCOMPARE(names->value(0).toString(), QStringLiteral("taken"));
    QVERIFY(!names->next());
    // The connection is usable again after the rollback.
    QVERIFY(database.query(insert, { QStringLiteral("second") }));
    QCOMPARE(countOf(database, QStringLiteral("users")), 2);
}

void TestDatabasePostgres::failedStatementNamesItsPurposeNotItsValues()
{
    const QString secretHash = QStringLiteral("deadbeefcafe");
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')");
    QVERIFY(m_db->query(insert, { secretHash }));
    auto duplicate = m_db->query(insert, { secretHash });
    QVERIFY(!duplicate);
    QCOMPARE(duplicate.error().code, QStringLiteral("storage_error"));
    QVERIFY2(duplicate.error().message.contains(QStringLiteral("INSERT INTO users")),
        qPrintable(duplicate.error().message));
    QVERIFY2(duplicate.error().message.contains(QStringLiteral("users_name_key")),
        qPrintable(duplicate.error().message));
    // PostgreSQL's DETAIL line repeats the key's value.
    QVERIFY2(
        !duplicate.error().message.contains(secretHash), qPrintable(duplicate.error().message));

    // A value of the wrong type is quoted back in the server's message.
    auto wrongType = m_db->query(
        QStringLiteral("SELECT id FROM users WHERE id = ?"), { QStringLiteral("s3cr3t-value") });
    QVERIFY(!wrongType);
    QVERIFY2(!wrongType.error().message.contains(QStringLiteral("s3cr3t-value")),
        qPrintable(wrongType.error().message));
}

void TestDatabasePostgres::forwarderEnrollmentRedeemAndRevoke()
{
    ForwarderStore store(*m_db);
    auto enrollment
        = store.enroll(QStringLiteral("bench-hsm"), usbDevice(), QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(enrollment);
    QVERIFY(enrollment->forwarder.id > 0);
    QCOMPARE(enrollment->forwarder.device, usbDevice());
    QVERIFY(!enrollment->forwarder.enrolledAt.isValid());
    QVERIFY(qAbs(enrollment->forwarder.createdAt.secsTo(QDateTime::currentDateTimeUtc())) < 60);
    auto tokens = m_db->query(QStringLiteral("SELECT token_hash FROM enrollment_tokens"));
    QVERIFY(tokens && tokens->next());
    QCOMPARE(tokens->value(0).toString(), secrets::sha256Hex(enrollment->token));

    auto clash = store.enroll(QStringLiteral("bench-hsm"), usbDevice(), QStringLiteral("user:a"));
    QVERIFY(!clash);
    QCOMPARE(clash.error().code, QStringLiteral("name_taken"));
    // A refused enrollment leaves nothing behind.
    QCOMPARE(countOf(*m_db, QStringLiteral("forwarders")), 1);

    auto redeemed = store.redeem(enrollment->token);
    CLOOP_VERIFY_OK(redeemed);
    QVERIFY(redeemed->forwarder.enrolledAt.isValid());
    auto reused = store.redeem(enrollment->token);
    QVERIFY(!reused);
    QCOMPARE(reused.error().code, QStringLiteral("token_used"));

    auto authenticated = store.authenticate(redeemed->credential);
    CLOOP_VERIFY_OK(authenticated);
    QCOMPARE(authenticated->id, enrollment->forwarder.id);
    QCOMPARE(authenticated->name, QStringLiteral("bench-hsm"));
    QVERIFY(store.touchLastSeen(authenticated->id));
    QVERIFY(store.find(authenticated->id)->lastSeenAt.isValid());
    auto unknown = store.authenticate(secrets::generate(secrets::SecretKind::ForwarderCredential));
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, QStringLiteral("unknown_credential"));

    // An expired token is refused.
    auto late = store.enroll(QStringLiteral("late"), usbDevice(), QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(late);
    QVERIFY(m_db->query(QStringLiteral("UPDATE enrollment_tokens SET expires_at = ? WHERE "
                                       "forwarder_id = ?"),
        { toDbTime(QDateTime::currentDateTimeUtc().addSecs(-1)), late->forwarder.id }));
    auto expired = store.redeem(late->token);
    QVERIFY(!expired);
    QCOMPARE(expired.error().code, QStringLiteral("token_expired"));

    auto revoked = store.revoke(
        enrollment->forwarder.id, QStringLiteral("user:bob"), QStringLiteral("returned"));
    CLOOP_VERIFY_OK(revoked);
    QVERIFY(revoked->isRevoked());
    QCOMPARE(revoked->revokedBy, QStringLiteral("user:bob"));
    auto refused = store.authenticate(redeemed->credential);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("revoked"));
    auto twice = store.revoke(enrollment->forwarder.id, QStringLiteral("user:bob"), QString());
    QVERIFY(!twice);
    QCOMPARE(twice.error().code, QStringLiteral("already_revoked"));
    auto missing = store.revoke(9999, QStringLiteral("user:bob"), QString());
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, QStringLiteral("not_found"));

    // The revoked one's name is free again; the list keeps both.
    auto again = store.enroll(QStringLiteral("bench-hsm"), usbDevice(), QStringLiteral("user:a"));
    CLOOP_VERIFY_OK(again);
    QVERIFY(again->forwarder.id > enrollment->forwarder.id);
    auto all = store.list();
    CLOOP_VERIFY_OK(all);
    QCOMPARE(all->size(), 3);
    auto active = store.list(false);
    CLOOP_VERIFY_OK(active);
    QCOMPARE(active->size(), 2);

    auto entries = AuditLog(*m_db).entries({}, QStringLiteral("forwarder.revoke"));
    CLOOP_VERIFY_OK(entries);
    QCOMPARE(entries->size(), 1);
    QCOMPARE(entries->first().details.value(QLatin1String("reason")).toString(),
        QStringLiteral("returned"));
}

void TestDatabasePostgres::concurrentRedemptionsHaveOneWinner()
{
    ForwarderStore store(*m_db);
    auto enrollment
        = store.enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    CLOOP_VERIFY_OK(enrollment);
    const QString connection = m_server.connectionString(m_database);
    const QString token = enrollment->token;

    // Hub members, each with a connection of its own, race on one token.
    constexpr int kRacers = 4;
    std::atomic<int> ready { 0 };
    std::atomic<int> winners { 0 };
    std::atomic<int> usedRefusals { 0 };
    std::vector<std::thread> racers;
    for (int i = 0; i < kRacers; ++i) {
        racers.emplace_back([&] {
            auto db = Database::openPostgres(connection);
            if (!db)
                return;
            ForwarderStore racer(**db);
            ++ready;
            while (ready.load() < kRacers)
                std::this_thread::yield();
            auto redeemed = racer.redeem(token);
            if (redeemed)
                ++winners;
            else if (redeemed.error().code == QLatin1String("token_used"))
                ++usedRefusals;
        });
    }
    for (auto &racer : racers)
        racer.join();
    QCOMPARE(ready.load(), kRacers);
    QCOMPARE(winners.load(), 1);
    QCOMPARE(usedRefusals.load(), kRacers - 1);
    QCOMPARE(countOf(*m_db, QStringLiteral("forwarder_credentials")), 1);
}

void TestDatabasePostgres::executorEnrollmentHelloAndRevoke()
{
    ExecutorStore store(*m_db);
    auto enrollment = store.enroll(QStringLiteral("rack-1"), QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(enrollment);
    auto redeemed = store.redeem(enrollment->token);
    CLOOP_VERIFY_OK(redeemed);
    QCOMPARE(secrets::kindOf(redeemed->second), secrets::SecretKind::AgentCredential);
    auto authenticated = store.authenticate(redeemed->second);
    CLOOP_VERIFY_OK(authenticated);
    QCOMPARE(authenticated->id, enrollment->executor.id);

    const QJsonObject capabilities { { QStringLiteral("runtimes"),
        QJsonArray { QStringLiteral("runc") } } };
    QVERIFY(
        store.recordHello(authenticated->id, QStringLiteral("cloop-agent 0.1"), 3, capabilities));
    auto active = store.findActive(QStringLiteral("rack-1"));
    CLOOP_VERIFY_OK(active);
    QCOMPARE(active->software, QStringLiteral("cloop-agent 0.1"));
    QCOMPARE(active->protocol, 3);
    QCOMPARE(active->capabilities, capabilities);
    QVERIFY(active->lastSeenAt.isValid());

    VirtualExecutorStore virtuals(*m_db);
    auto created = virtuals.create(QStringLiteral("gvisor"), active->id, QStringLiteral("runsc"),
        QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(created);
    QCOMPARE(created->executorName, QStringLiteral("rack-1"));
    QCOMPARE(created->runtime, QStringLiteral("runsc"));
    auto plain = virtuals.create(
        QStringLiteral("plain"), active->id, QString(), QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(plain);
    QVERIFY(plain->runtime.isEmpty());
    auto listed = virtuals.list();
    CLOOP_VERIFY_OK(listed);
    QCOMPARE(listed->size(), 2);
    QCOMPARE(listed->first().name, QStringLiteral("gvisor"));

    auto revoked = store.revoke(active->id, QStringLiteral("user:alice"), QStringLiteral("moved"));
    CLOOP_VERIFY_OK(revoked);
    auto refused = store.authenticate(redeemed->second);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("revoked"));
    auto gone = store.findActive(QStringLiteral("rack-1"));
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, QStringLiteral("not_found"));
    auto onRevoked = virtuals.create(
        QStringLiteral("late"), active->id, QString(), QStringLiteral("user:alice"));
    QVERIFY(!onRevoked);
    QCOMPARE(onRevoked.error().code, QStringLiteral("executor_revoked"));
}

void TestDatabasePostgres::usersProjectsRolesAndTokens()
{
    ProjectStore people(*m_db);
    auto admin = people.addUser(QStringLiteral("root-admin"), true, QStringLiteral("hub"));
    CLOOP_VERIFY_OK(admin);
    QVERIFY(admin->hubAdmin);
    auto alice = people.addUser(QStringLiteral("alice"), false, QStringLiteral("user:root-admin"));
    CLOOP_VERIFY_OK(alice);
    QVERIFY(!alice->hubAdmin);
    QVERIFY(alice->createdAt.isValid());
    auto twice = people.addUser(QStringLiteral("alice"), false, QStringLiteral("user:root-admin"));
    QVERIFY(!twice);
    QCOMPARE(twice.error().code, QStringLiteral("user_exists"));
    auto users = people.users();
    CLOOP_VERIFY_OK(users);
    QCOMPARE(users->size(), 2);
    QCOMPARE(users->first().name, QStringLiteral("alice"));

    auto project = people.addProject(
        QStringLiteral("/srv/projects/bench"), QStringLiteral("user:root-admin"));
    CLOOP_VERIFY_OK(project);
    auto granted = people.setRole(
        project->id, alice->id, ProjectRole::Maintainer, QStringLiteral("user:root-admin"));
    CLOOP_VERIFY_OK(granted);
    QCOMPARE(granted->members.size(), 1);
    QCOMPARE(granted->members.first().user, QStringLiteral("alice"));
    // Setting a role again replaces it.
    QVERIFY(people.setRole(
        project->id, alice->id, ProjectRole::Administrator, QStringLiteral("user:root-admin")));
    auto role = people.roleIn(alice->id, project->id);
    CLOOP_VERIFY_OK(role);
    QCOMPARE(*role, std::optional<ProjectRole>(ProjectRole::Administrator));
    auto grants = people.rolesOf(alice->id);
    CLOOP_VERIFY_OK(grants);
    QCOMPARE(grants->size(), 1);
    QCOMPARE(grants->first().projectPath, QStringLiteral("/srv/projects/bench"));
    auto byPath = people.findProject(QStringLiteral("/srv/projects/bench"));
    CLOOP_VERIFY_OK(byPath);
    QCOMPARE(byPath->id, project->id);
    QVERIFY(
        people.setRole(project->id, alice->id, std::nullopt, QStringLiteral("user:root-admin")));
    role = people.roleIn(alice->id, project->id);
    CLOOP_VERIFY_OK(role);
    QVERIFY(!role->has_value());

    ApiTokenStore tokens(*m_db);
    auto ensured = tokens.ensureHubAdmin(QStringLiteral("root-admin"));
    CLOOP_VERIFY_OK(ensured);
    QCOMPARE(*ensured, admin->id);
    auto created = tokens.ensureHubAdmin(QStringLiteral("second-admin"));
    CLOOP_VERIFY_OK(created);
    QVERIFY(people.findUser(*created)->hubAdmin);

    auto token
        = tokens.createToken(alice->id, QStringLiteral("laptop"), QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(token);
    auto principal = tokens.authenticate(*token);
    CLOOP_VERIFY_OK(principal);
    QCOMPARE(principal->userId, alice->id);
    QCOMPARE(principal->userName, QStringLiteral("alice"));
    QVERIFY(!principal->hubAdmin);
    auto listed = tokens.list(alice->id);
    CLOOP_VERIFY_OK(listed);
    QCOMPARE(listed->size(), 1);
    QCOMPARE(listed->first().label, QStringLiteral("laptop"));
    QVERIFY(!listed->first().revokedAt.isValid());

    auto revoked = tokens.revoke(principal->tokenId, QStringLiteral("user:alice"));
    CLOOP_VERIFY_OK(revoked);
    QVERIFY(revoked->revokedAt.isValid());
    auto refused = tokens.authenticate(*token);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("unauthorized"));
    auto again = tokens.revoke(principal->tokenId, QStringLiteral("user:alice"));
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("already_revoked"));

    auto audited = AuditLog(*m_db).entries();
    CLOOP_VERIFY_OK(audited);
    QStringList actions;
    for (const AuditEntry &entry : std::as_const(*audited))
        actions.append(entry.action);
    QCOMPARE(actions.count(QString(auditaction::kApiTokenCreate)), 1);
    QCOMPARE(actions.count(QString(auditaction::kApiTokenRevoke)), 1);
    QCOMPARE(actions.count(QString(auditaction::kUserAdd)), 2);
}

void TestDatabasePostgres::requestsAndBindings()
{
    ForwarderStore forwarders(*m_db);
    ProjectStore people(*m_db);
    auto forwarder
        = forwarders.enroll(QStringLiteral("lab"), usbDevice(), QStringLiteral("user:a"));
    CLOOP_VERIFY_OK(forwarder);
    auto user = people.addUser(QStringLiteral("bob"), false, QStringLiteral("hub"));
    CLOOP_VERIFY_OK(user);
    auto project = people.addProject(QStringLiteral("/srv/p"), QStringLiteral("hub"));
    CLOOP_VERIFY_OK(project);
    const qint64 forwarderId = forwarder->forwarder.id;
    const QDateTime now = QDateTime::currentDateTimeUtc();

    RequestStore requests(*m_db);
    BindingTerms terms;
    terms.ttl = std::chrono::hours(2);
    auto filed = requests.file(forwarderId, project->id, user->id, QStringLiteral("flashing"),
        terms, now, std::chrono::hours(1));
    CLOOP_VERIFY_OK(filed);
    QCOMPARE(filed->state, RequestRecord::State::Pending);
    QCOMPARE(filed->terms.ttl, std::chrono::seconds(2 * 3600));
    QVERIFY(filed->terms.virtualExecutor.isEmpty());
    auto pending = requests.list({}, now);
    CLOOP_VERIFY_OK(pending);
    QCOMPARE(pending->size(), 1);

    BindingStore bindings(*m_db);
    auto binding = bindings.create(
        forwarderId, project->id, terms, QStringLiteral("user:alice"), now, filed->id);
    CLOOP_VERIFY_OK(binding);
    QCOMPARE(binding->requestId, std::optional<qint64>(filed->id));
    QCOMPARE(binding->terms.ttl, std::chrono::seconds(2 * 3600));
    QVERIFY(binding->isActiveAt(now));
    auto decided = requests.decide(filed->id, RequestRecord::State::Approved,
        QStringLiteral("user:alice"), QString(), binding->id, now);
    CLOOP_VERIFY_OK(decided);
    QCOMPARE(decided->state, RequestRecord::State::Approved);
    QCOMPARE(decided->bindingId, std::optional<qint64>(binding->id));
    auto decidedTwice = requests.decide(filed->id, RequestRecord::State::Denied,
        QStringLiteral("user:carol"), QStringLiteral("no"), std::nullopt, now);
    QVERIFY(!decidedTwice);
    QCOMPARE(decidedTwice.error().code, QStringLiteral("already_decided"));

    // One device, one binding.
    auto second = bindings.create(
        forwarderId, project->id, terms, QStringLiteral("user:alice"), now, std::nullopt);
    QVERIFY(!second);
    QCOMPARE(second.error().code, QStringLiteral("already_bound"));
    auto active = bindings.activeForForwarder(forwarderId, now);
    CLOOP_VERIFY_OK(active);
    QVERIFY(active->has_value());

    auto ended = bindings.end(binding->id, BindingRecord::State::Unbound,
        QStringLiteral("user:alice"), QStringLiteral("done"), now.addSecs(1));
    CLOOP_VERIFY_OK(ended);
    QCOMPARE(ended->state, BindingRecord::State::Unbound);
    QCOMPARE(ended->endReason, QStringLiteral("done"));
    QVERIFY(ended->endedAt.isValid());

    // A binding whose time ran out is swept as expired.
    BindingTerms shortTerms;
    shortTerms.ttl = std::chrono::seconds(60);
    shortTerms.targetInterface = QStringLiteral("eth1");
    shortTerms.targetAddress = QStringLiteral("10.9.0.2/24");
    auto brief = bindings.create(
        forwarderId, project->id, shortTerms, QStringLiteral("user:alice"), now, std::nullopt);
    CLOOP_VERIFY_OK(brief);
    QCOMPARE(brief->terms.targetAddress, QStringLiteral("10.9.0.2/24"));
    auto swept = bindings.expireDue(now.addSecs(61));
    CLOOP_VERIFY_OK(swept);
    QCOMPARE(swept->size(), 1);
    QCOMPARE(swept->first().state, BindingRecord::State::Expired);
    auto live = bindings.list(now.addSecs(61), project->id, false);
    CLOOP_VERIFY_OK(live);
    QVERIFY(live->isEmpty());
    auto history = bindings.list(now.addSecs(61), project->id, true);
    CLOOP_VERIFY_OK(history);
    QCOMPARE(history->size(), 2);

    // Revoking the forwarder ends what it still lends and cancels its requests.
    auto third = bindings.create(
        forwarderId, project->id, terms, QStringLiteral("user:alice"), now, std::nullopt);
    CLOOP_VERIFY_OK(third);
    auto another = requests.file(forwarderId, project->id, user->id, QStringLiteral("later"), terms,
        now, std::chrono::hours(1));
    CLOOP_VERIFY_OK(another);
    auto endedAll = bindings.endAllOfForwarder(
        forwarderId, QStringLiteral("user:alice"), QStringLiteral("revoked"), now);
    CLOOP_VERIFY_OK(endedAll);
    QCOMPARE(endedAll->size(), 1);
    QCOMPARE(endedAll->first().state, BindingRecord::State::ForwarderRevoked);
    auto cancelled = requests.cancelAllOfForwarder(
        forwarderId, QStringLiteral("user:alice"), QStringLiteral("revoked"), now);
    CLOOP_VERIFY_OK(cancelled);
    QCOMPARE(cancelled->size(), 1);
    QCOMPARE(cancelled->first().state, RequestRecord::State::Cancelled);
    // A request nobody decided expires.
    auto unanswered = requests.file(forwarderId, project->id, user->id, QStringLiteral("x"), terms,
        now, std::chrono::seconds(30));
    CLOOP_VERIFY_OK(unanswered);
    auto expired = requests.expireDue(now.addSecs(31));
    CLOOP_VERIFY_OK(expired);
    QCOMPARE(expired->size(), 1);
    QCOMPARE(expired->first().state, RequestRecord::State::Expired);
}

void TestDatabasePostgres::runsMoveThroughTheirStates()
{
    ProjectStore people(*m_db);
    auto project = people.addProject(QStringLiteral("/srv/runs"), QStringLiteral("hub"));
    CLOOP_VERIFY_OK(project);
    ExecutorStore executors(*m_db);
    auto executor = executors.enroll(QStringLiteral("rack"), QStringLiteral("hub"));
    CLOOP_VERIFY_OK(executor);
    const qint64 executorId = executor->executor.id;
    const QDateTime now = QDateTime::currentDateTimeUtc();

    RunStore runs(*m_db);
    NewRun request;
    request.projectId = project->id;
    request.requestedBy = QStringLiteral("user:alice");
    request.argv
        = { QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo 'hi' \"there\"") };
    request.hostProcess = true;
    auto run = runs.create(request, now);
    CLOOP_VERIFY_OK(run);
    QCOMPARE(run->state, RunRecord::State::Queued);
    QCOMPARE(run->argv, request.argv);
    QVERIFY(run->hostProcess);
    QVERIFY(!run->executorId);
    QVERIFY(!run->exitCode);
    QVERIFY(!run->logExpected);
    auto queued = runs.queued();
    CLOOP_VERIFY_OK(queued);
    QCOMPARE(queued->size(), 1);

    auto dispatched = runs.markDispatched(run->id, executorId, now);
    CLOOP_VERIFY_OK(dispatched);
    QCOMPARE(dispatched->executorId, std::optional<qint64>(executorId));
    // A run leaves a state once.
    auto again = runs.markDispatched(run->id, executorId, now);
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("run_state"));
    auto elsewhere = runs.markRunning(run->id, executorId + 1, now);
    QVERIFY(!elsewhere);
    QCOMPARE(elsewhere.error().code, QStringLiteral("run_state"));
    CLOOP_VERIFY_OK(runs.markRunning(run->id, executorId, now));
    auto onIt = runs.activeOn(executorId);
    CLOOP_VERIFY_OK(onIt);
    QCOMPARE(onIt->size(), 1);
    QVERIFY(runs.setLogEnd(run->id, 4096));
    QVERIFY(runs.setLogExpected(run->id, 5000000000LL));
    auto finished
        = runs.finishOn(executorId, run->id, RunRecord::State::Succeeded, 0, QString(), now);
    CLOOP_VERIFY_OK(finished);
    QCOMPARE(finished->state, RunRecord::State::Succeeded);
    QCOMPARE(finished->exitCode, std::optional<int>(0));
    QVERIFY(finished->error.isEmpty());
    QCOMPARE(finished->logEnd, 4096);
    QCOMPARE(finished->logExpected, std::optional<qint64>(5000000000LL));

    auto cancelledRun = runs.create(request, now);
    CLOOP_VERIFY_OK(cancelledRun);
    auto cancelled = runs.finish(cancelledRun->id, RunRecord::State::Cancelled, std::nullopt,
        QStringLiteral("cancelled by alice"), now);
    CLOOP_VERIFY_OK(cancelled);
    QVERIFY(!cancelled->exitCode);
    QCOMPARE(cancelled->error, QStringLiteral("cancelled by alice"));

    auto open = runs.list(QList<qint64> { project->id }, false);
    CLOOP_VERIFY_OK(open);
    QVERIFY(open->isEmpty());
    auto all = runs.list(QList<qint64> { project->id, project->id + 100 }, true);
    CLOOP_VERIFY_OK(all);
    QCOMPARE(all->size(), 2);
}

void TestDatabasePostgres::rawBytesComeBackAsTheyWereAndJoinAsBytes()
{
    // Run log records are any bytes: NULs, invalid UTF-8, all of them.
    QByteArray head;
    for (int i = 0; i < 256; ++i)
        head.append(char(i));
    const QByteArray tail = QByteArray("\0\xff\xfe tail\0", 9);
    CLOOP_VERIFY_OK(m_db->query(QStringLiteral("INSERT INTO run_logs (run_id, start_offset, "
                                               "end_offset, stored_bytes) VALUES (1, 0, 0, 0)")));
    auto inserted = m_db->query(QStringLiteral("INSERT INTO run_log_chunks (run_id, first_offset, "
                                               "end_offset, stored_bytes, records) VALUES (1, 0, "
                                               "0, 0, ?)"),
        { head });
    CLOOP_VERIFY_OK(inserted);
    auto joined = m_db->query(
        QStringLiteral("UPDATE run_log_chunks SET records = %1 WHERE run_id "
                       "= 1")
            .arg(m_db->concatenatedBytes(QStringLiteral("records"), QStringLiteral("?"))),
        { tail });
    CLOOP_VERIFY_OK(joined);
    auto rows = m_db->query(QStringLiteral("SELECT records, octet_length(records) FROM "
                                           "run_log_chunks"));
    CLOOP_VERIFY_OK(rows);
    QVERIFY(rows->next());
    QCOMPARE(rows->value(1).toLongLong(), qint64(head.size() + tail.size()));
    QCOMPARE(rows->value(0).toByteArray(), head + tail);
}

void TestDatabasePostgres::auditLogFiltersBySinceAndAction()
{
    AuditLog log(*m_db);
    QVERIFY(
        log.append(QStringLiteral("user:alice"), auditaction::kUserAdd, QStringLiteral("user:bob"),
            { { QStringLiteral("hub_admin"), false },
                { QStringLiteral("note"), QStringLiteral("ünïcode ✓ 'quoted' \\") } }));
    const QDateTime between = QDateTime::currentDateTimeUtc().addMSecs(1);
    QTest::qWait(5);
    QVERIFY(
        log.append(QStringLiteral("hub"), auditaction::kProjectAdd, QStringLiteral("project:/p")));
    auto all = log.entries();
    CLOOP_VERIFY_OK(all);
    QCOMPARE(all->size(), 2);
    QVERIFY(all->at(0).id < all->at(1).id);
    QCOMPARE(all->at(0).details.value(QLatin1String("note")).toString(),
        QStringLiteral("ünïcode ✓ 'quoted' \\"));
    QVERIFY(all->at(0).at.isValid());
    auto since = log.entries(between);
    CLOOP_VERIFY_OK(since);
    QCOMPARE(since->size(), 1);
    QCOMPARE(since->first().action, QStringLiteral("project.add"));
    auto byAction = log.entries({}, QStringLiteral("user.add"));
    CLOOP_VERIFY_OK(byAction);
    QCOMPARE(byAction->size(), 1);
    QCOMPARE(byAction->first().subject, QStringLiteral("user:bob"));
}

void TestDatabasePostgres::wrongPasswordIsRefused()
{
    const QString wrong = QStringLiteral("not-the-password");
    auto db = Database::openPostgres(m_server.connectionString(m_database, wrong));
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(QStringLiteral("password authentication failed")),
        qPrintable(db.error().message));
    QVERIFY2(db.error().message.contains(QStringLiteral("cannot connect to PostgreSQL")),
        qPrintable(db.error().message));
    QVERIFY2(!db.error().message.contains(wrong), qPrintable(db.error().message));
}

void TestDatabasePostgres::quotedValuesReachTheServerAsTheyAre()
{
    // A space, a quote, a backslash and a ';', which Qt's driver turns into
    // a space in what it passes on unquoted.
    QVERIFY2(m_server.execute(QStringLiteral("postgres"),
                 QStringLiteral("CREATE ROLE tricky LOGIN PASSWORD 'p;a ss''wo\\rd'")),
        qPrintable(m_server.lastError()));
    const QString owned = m_server.createDatabase(QStringLiteral("tricky"));
    QVERIFY2(!owned.isEmpty(), qPrintable(m_server.lastError()));
    auto db = Database::openPostgres(
        QStringLiteral("host='%1' dbname=%2 user=tricky password='p;a ss\\'wo\\\\rd' "
                       "application_name='cloop hub'")
            .arg(m_server.socketDirectory(), owned));
    CLOOP_VERIFY_OK(db);
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    auto name = (*db)->query(QStringLiteral("SELECT current_setting('application_name')"));
    QVERIFY(name && name->next());
    QCOMPARE(name->value(0).toString(), QStringLiteral("cloop hub"));

    auto unclosed = Database::openPostgres(QStringLiteral("host=/tmp password='abc"));
    QVERIFY(!unclosed);
    QVERIFY2(unclosed.error().message.contains(QStringLiteral("not closed")),
        qPrintable(unclosed.error().message));
    QVERIFY(!unclosed.error().message.contains(QStringLiteral("abc")));
}

void TestDatabasePostgres::unreachableServerIsRefused()
{
    QTemporaryDir empty;
    QElapsedTimer clock;
    clock.start();
    auto db = Database::openPostgres(
        QStringLiteral("host=%1 dbname=cloop user=cloop connect_timeout=5").arg(empty.path()));
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(QStringLiteral("cannot connect to PostgreSQL")),
        qPrintable(db.error().message));
    // Which server it tried is named, so the operator can check the address.
    QVERIFY2(db.error().message.contains(empty.path()), qPrintable(db.error().message));
    QVERIFY(clock.elapsed() < 10'000);

    auto absent = Database::openPostgres(m_server.connectionString(QStringLiteral("no_such_db")));
    QVERIFY(!absent);
    QVERIFY2(absent.error().message.contains(QStringLiteral("no_such_db")),
        qPrintable(absent.error().message));
}

void TestDatabasePostgres::urlIsRefusedWithTheKeywordForm()
{
    auto db
        = Database::openPostgres(QStringLiteral("postgresql://cloop:secret@localhost:5432/cloop"));
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(QStringLiteral("host=")), qPrintable(db.error().message));
    QVERIFY2(
        !db.error().message.contains(QStringLiteral("secret")), qPrintable(db.error().message));
}

void TestDatabasePostgres::readOnlyDatabaseIsRefused()
{
    // As a hot standby is: every transaction read-only.
    QVERIFY(m_db->query(QStringLiteral("ALTER DATABASE %1 SET default_transaction_read_only = on")
                            .arg(m_database)));
    m_db.reset();
    auto db = Database::openPostgres(m_server.connectionString(m_database));
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(QStringLiteral("not writable")),
        qPrintable(db.error().message));
}

void TestDatabasePostgres::serverStoppedUnderOpenDatabase()
{
    ForwarderStore forwarders(*m_db);
    QVERIFY(forwarders.enroll(QStringLiteral("kept"), usbDevice(), QStringLiteral("user:a")));
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')");
    {
        Database::Transaction transaction(*m_db);
        QVERIFY(transaction.begin());
        QVERIFY(m_db->query(insert, { QStringLiteral("half-written") }));

        QVERIFY2(m_server.stop(), qPrintable(m_server.lastError()));
        auto lost = m_db->query(insert, { QStringLiteral("after-stop") });
        QVERIFY(!lost);
        QCOMPARE(lost.error().code, QStringLiteral("database_unreachable"));
        QVERIFY2(lost.error().message.contains(QStringLiteral("connection to PostgreSQL")),
            qPrintable(lost.error().message));
        QVERIFY2(
            lost.error().message.contains(QStringLiteral("the cluster database is unreachable")),
            qPrintable(lost.error().message));
        QVERIFY(!lost.error().permanent);
        auto committed = transaction.commit();
        QVERIFY(!committed);
        QCOMPARE(committed.error().code, QStringLiteral("storage_error"));
    }
    // While the server is away every store says so, and nothing crashes.
    auto enrolled
        = forwarders.enroll(QStringLiteral("while-down"), usbDevice(), QStringLiteral("u"));
    QVERIFY(!enrolled);
    QCOMPARE(enrolled.error().code, QStringLiteral("database_unreachable"));
    auto listed = forwarders.list();
    QVERIFY(!listed);
    QCOMPARE(listed.error().code, QStringLiteral("database_unreachable"));

    // Back again: the same Database reconnects (once its pause between
    // attempts is over), and only committed work is there.
    QVERIFY2(m_server.start(), qPrintable(m_server.lastError()));
    QVERIFY(QTest::qWaitFor([&] { return m_db->query(QStringLiteral("SELECT 1")).ok(); }, 20'000));
    QVERIFY(!m_db->unreachableSince().isValid());
    auto users = m_db->query(QStringLiteral("SELECT count(*) FROM users"));
    CLOOP_VERIFY_OK(users);
    QVERIFY(users->next());
    QCOMPARE(users->value(0).toLongLong(), 0);
    auto kept = forwarders.list();
    CLOOP_VERIFY_OK(kept);
    QCOMPARE(kept->size(), 1);
    QCOMPARE(kept->first().name, QStringLiteral("kept"));
    QVERIFY(forwarders.enroll(QStringLiteral("after"), usbDevice(), QStringLiteral("user:a")));
}

void TestDatabasePostgres::aChangeIsAnsweredAsMadeWhenTheConnectionDropsRightAfterItsCommit()
{
    // Another connection cuts this one right after a change's COMMIT, as a
    // server restarted at that moment does.
    auto backend = m_db->query(QStringLiteral("SELECT pg_backend_pid()"));
    CLOOP_VERIFY_OK(backend);
    QVERIFY(backend->next());
    qint64 pid = backend->value(0).toLongLong();
    auto other = Database::openPostgres(m_server.connectionString(m_database));
    CLOOP_VERIFY_OK(other);
    // Armed before a change: its first statement in a transaction leaves
    // the cut to run right after the commit.
    bool armed = false;
    m_db->setStatementObserver([&](std::chrono::nanoseconds) {
        if (!armed || !m_db->inTransaction())
            return;
        armed = false;
        m_db->afterCommit([&] {
            auto seen = (*other)->query(
                QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE pid = ?"), { pid });
            CLOOP_VERIFY_OK(seen);
            QVERIFY(seen->next());
            QCOMPARE(seen->value(0).toLongLong(), 1);
            CLOOP_VERIFY_OK(
                (*other)->query(QStringLiteral("SELECT pg_terminate_backend(?)"), { pid }));
        });
    });
    const auto unobserved = qScopeGuard([&] { m_db->setStatementObserver({}); });
    const auto cutAfterCommit = [&] { armed = true; };
    ProjectStore projects(*m_db);
    cutAfterCommit();
    auto project = projects.addProject(QStringLiteral("/srv/committed"), QStringLiteral("user:a"));
    // The project was made: the answer says so, not "unreachable", which a
    // caller would take as refused and nothing made.
    CLOOP_VERIFY_OK(project);
    QCOMPARE(project->path, QStringLiteral("/srv/committed"));
    CLOOP_VERIFY_OK(ProjectStore(**other).findProject(QStringLiteral("/srv/committed")));
    // (the connection was indeed cut)
    auto cut = m_db->query(QStringLiteral("SELECT 1"));
    QVERIFY(!cut);
    QCOMPARE(cut.error().code, QStringLiteral("database_unreachable"));

    // The same for a user, once this connection is back.
    QVERIFY(QTest::qWaitFor([&] { return m_db->query(QStringLiteral("SELECT 1")).ok(); }, 20'000));
    auto again = m_db->query(QStringLiteral("SELECT pg_backend_pid()"));
    CLOOP_VERIFY_OK(again);
    QVERIFY(again->next());
    pid = again->value(0).toLongLong();
    cutAfterCommit();
    auto user = projects.addUser(QStringLiteral("carol"), false, QStringLiteral("user:a"));
    CLOOP_VERIFY_OK(user);
    QCOMPARE(user->name, QStringLiteral("carol"));
    CLOOP_VERIFY_OK(ProjectStore(**other).findUser(QStringLiteral("carol")));
    QVERIFY(!m_db->query(QStringLiteral("SELECT 1")));
}

QTEST_GUILESS_MAIN(TestDatabasePostgres)
#include "tst_databasepostgres.moc"
