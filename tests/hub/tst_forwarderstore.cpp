#include "common/crypto/secrets.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <thread>

using namespace cloop;
using namespace cloop::hub;

namespace {
protocol::DeviceSpec usbDevice()
{
    return *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407:A1B2"));
}
} // namespace

class TestForwarderStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void enrollStoresOnlyHashes();
    void enrollRefusesBadInput_data();
    void enrollRefusesBadInput();
    void nameIsUniqueAmongActiveForwarders();
    void redeemOnceThenAuthenticate();
    void reusedTokenIsRefused();
    void expiredTokenIsRefused();
    void wrongSecretTypesAreRefused();
    void unknownSecretsAreRefused();
    void revokeEndsCredentialAndPendingToken();
    void revokingTwiceIsAnError();
    void aNewTokenVoidsTheEarlierOnes();
    void aNewTokenIsOnlyForAForwarderThatNeverRedeemed();
    void concurrentRedemptionsHaveOneWinner();
    void everyChangeIsAudited();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    ManualClock m_clock { QDateTime(QDate(2026, 11, 30), QTime(9, 0), Qt::UTC) };
    std::unique_ptr<Database> m_db;
    std::unique_ptr<ForwarderStore> m_store;
};

void TestForwarderStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto db = Database::openSqlite(m_dir->filePath(QStringLiteral("hub.db")), m_clock);
    QVERIFY(db);
    m_db = std::move(*db);
    m_store = std::make_unique<ForwarderStore>(*m_db);
}

void TestForwarderStore::cleanup()
{
    m_store.reset();
    m_db.reset();
    m_dir.reset();
}

void TestForwarderStore::enrollStoresOnlyHashes()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench-hsm"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY2(enrollment, qPrintable(enrollment.ok() ? QString() : enrollment.error().message));
    QCOMPARE(secrets::kindOf(enrollment->token), secrets::SecretKind::ForwarderEnrollmentToken);
    QCOMPARE(enrollment->forwarder.name, QStringLiteral("bench-hsm"));
    QCOMPARE(enrollment->forwarder.device, usbDevice());
    QVERIFY(!enrollment->forwarder.enrolledAt.isValid());
    QCOMPARE(enrollment->tokenExpiresAt, m_clock.now().addSecs(24 * 3600));

    auto rows = m_db->query(QStringLiteral("SELECT token_hash FROM enrollment_tokens"));
    QVERIFY(rows && rows->next());
    QCOMPARE(rows->value(0).toString(), secrets::sha256Hex(enrollment->token));

    auto redeemed = m_store->redeem(enrollment->token);
    QVERIFY(redeemed);
    auto credentials
        = m_db->query(QStringLiteral("SELECT credential_hash FROM forwarder_credentials"));
    QVERIFY(credentials && credentials->next());
    QCOMPARE(credentials->value(0).toString(), secrets::sha256Hex(redeemed->credential));
}

void TestForwarderStore::enrollRefusesBadInput_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("ttlSeconds");
    QTest::addColumn<QString>("code");
    QTest::newRow("empty name") << QString() << 3600 << QStringLiteral("invalid_name");
    QTest::newRow("uppercase") << QStringLiteral("Bench") << 3600 << QStringLiteral("invalid_name");
    QTest::newRow("slash") << QStringLiteral("a/b") << 3600 << QStringLiteral("invalid_name");
    QTest::newRow("too long") << QString(64, QLatin1Char('a')) << 3600
                              << QStringLiteral("invalid_name");
    QTest::newRow("zero ttl") << QStringLiteral("ok") << 0 << QStringLiteral("invalid_ttl");
    QTest::newRow("ttl over 7d") << QStringLiteral("ok") << 8 * 86400
                                 << QStringLiteral("invalid_ttl");
}

void TestForwarderStore::enrollRefusesBadInput()
{
    QFETCH(QString, name);
    QFETCH(int, ttlSeconds);
    QFETCH(QString, code);
    auto enrollment = m_store->enroll(
        name, usbDevice(), QStringLiteral("user:admin"), std::chrono::seconds(ttlSeconds));
    QVERIFY(!enrollment);
    QCOMPARE(enrollment.error().code, code);
    // Nothing half-written stays behind.
    auto count = m_db->query(
        QStringLiteral("SELECT (SELECT count(*) FROM forwarders) + (SELECT count(*) FROM "
                       "enrollment_tokens) + (SELECT count(*) FROM audit_log)"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 0);
}

void TestForwarderStore::nameIsUniqueAmongActiveForwarders()
{
    auto first = m_store->enroll(QStringLiteral("lab"),
        *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1")),
        QStringLiteral("user:admin"));
    QVERIFY(first);
    auto clash = m_store->enroll(QStringLiteral("lab"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(!clash);
    QCOMPARE(clash.error().code, QStringLiteral("name_taken"));
    QVERIFY(clash.error().message.contains(QString::number(first->forwarder.id)));

    // Once the first is revoked, its name is free again.
    QVERIFY(m_store->revoke(first->forwarder.id, QStringLiteral("user:admin"), QString()));
    auto again = m_store->enroll(QStringLiteral("lab"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(again);
    QVERIFY(again->forwarder.id != first->forwarder.id);
}

void TestForwarderStore::redeemOnceThenAuthenticate()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    auto redeemed = m_store->redeem(enrollment->token);
    QVERIFY2(redeemed, qPrintable(redeemed.ok() ? QString() : redeemed.error().message));
    QCOMPARE(secrets::kindOf(redeemed->credential), secrets::SecretKind::ForwarderCredential);
    QCOMPARE(redeemed->forwarder.id, enrollment->forwarder.id);
    QVERIFY(redeemed->forwarder.enrolledAt.isValid());

    auto authenticated = m_store->authenticate(redeemed->credential);
    QVERIFY(authenticated);
    QCOMPARE(authenticated->id, enrollment->forwarder.id);
    QCOMPARE(authenticated->name, QStringLiteral("bench"));
}

void TestForwarderStore::reusedTokenIsRefused()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    QVERIFY(m_store->redeem(enrollment->token));
    auto second = m_store->redeem(enrollment->token);
    QVERIFY(!second);
    QCOMPARE(second.error().code, QStringLiteral("token_used"));
    QVERIFY(second.error().permanent);
    auto credentials = m_db->query(QStringLiteral("SELECT count(*) FROM forwarder_credentials"));
    QVERIFY(credentials && credentials->next());
    QCOMPARE(credentials->value(0).toInt(), 1);
}

void TestForwarderStore::expiredTokenIsRefused()
{
    const QDateTime enrolledAt = m_clock.now();
    const std::chrono::seconds ttl { 600 };
    auto early = m_store->enroll(
        QStringLiteral("bench-early"), usbDevice(), QStringLiteral("user:admin"), ttl);
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"), ttl);
    QVERIFY(early && enrollment);
    QCOMPARE(enrollment->forwarder.createdAt, enrolledAt);
    QCOMPARE(enrollment->tokenExpiresAt, enrolledAt.addSecs(ttl.count()));
    // The token is good up to its last second on the hub's clock, not the
    // wall's: nobody waits ten minutes here.
    m_clock.advance(ttl.count() - 1);
    auto inTime = m_store->redeem(early->token);
    QVERIFY2(inTime, qPrintable(inTime ? QString() : inTime.error().message));
    QCOMPARE(m_store->find(early->forwarder.id)->enrolledAt, m_clock.now());
    m_clock.advance(1);
    auto redeemed = m_store->redeem(enrollment->token);
    QVERIFY(!redeemed);
    QCOMPARE(redeemed.error().code, QStringLiteral("token_expired"));
    QVERIFY(redeemed.error().permanent);
    auto record = m_store->find(enrollment->forwarder.id);
    QVERIFY(record);
    QVERIFY(!record->enrolledAt.isValid());
}

void TestForwarderStore::wrongSecretTypesAreRefused()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    // A token is not a credential, and a credential is not a token.
    auto asCredential = m_store->authenticate(enrollment->token);
    QVERIFY(!asCredential);
    QCOMPARE(asCredential.error().code, QStringLiteral("wrong_credential_type"));
    auto redeemed = m_store->redeem(enrollment->token);
    QVERIFY(redeemed);
    auto asToken = m_store->redeem(redeemed->credential);
    QVERIFY(!asToken);
    QCOMPARE(asToken.error().code, QStringLiteral("wrong_credential_type"));
    // Other roles' secrets, with a correct-looking shape, are refused by type.
    for (const auto kind :
        { secrets::SecretKind::AgentCredential, secrets::SecretKind::ApiToken }) {
        auto other = m_store->authenticate(secrets::generate(kind));
        QVERIFY(!other);
        QCOMPARE(other.error().code, QStringLiteral("wrong_credential_type"));
    }
}

void TestForwarderStore::unknownSecretsAreRefused()
{
    auto credential
        = m_store->authenticate(secrets::generate(secrets::SecretKind::ForwarderCredential));
    QVERIFY(!credential);
    QCOMPARE(credential.error().code, QStringLiteral("unknown_credential"));
    QVERIFY(credential.error().permanent);
    auto token = m_store->redeem(secrets::generate(secrets::SecretKind::ForwarderEnrollmentToken));
    QVERIFY(!token);
    QCOMPARE(token.error().code, QStringLiteral("unknown_token"));
}

void TestForwarderStore::revokeEndsCredentialAndPendingToken()
{
    auto enrolled
        = m_store->enroll(QStringLiteral("one"), usbDevice(), QStringLiteral("user:admin"));
    auto pending
        = m_store->enroll(QStringLiteral("two"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrolled && pending);
    auto redeemed = m_store->redeem(enrolled->token);
    QVERIFY(redeemed);

    auto revoked = m_store->revoke(
        enrolled->forwarder.id, QStringLiteral("user:admin"), QStringLiteral("returned"));
    QVERIFY(revoked);
    QVERIFY(revoked->isRevoked());
    QCOMPARE(revoked->revokedBy, QStringLiteral("user:admin"));
    auto authenticated = m_store->authenticate(redeemed->credential);
    QVERIFY(!authenticated);
    QCOMPARE(authenticated.error().code, QStringLiteral("revoked"));
    QVERIFY(authenticated.error().permanent);

    // A forwarder revoked before its bundle was used can never be enrolled.
    QVERIFY(m_store->revoke(pending->forwarder.id, QStringLiteral("user:admin"), QString()));
    auto late = m_store->redeem(pending->token);
    QVERIFY(!late);
    QCOMPARE(late.error().code, QStringLiteral("revoked"));
}

void TestForwarderStore::revokingTwiceIsAnError()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    QVERIFY(m_store->revoke(enrollment->forwarder.id, QStringLiteral("user:admin"), QString()));
    auto again = m_store->revoke(enrollment->forwarder.id, QStringLiteral("user:admin"), QString());
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("already_revoked"));
    auto missing = m_store->revoke(9999, QStringLiteral("user:admin"), QString());
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, QStringLiteral("not_found"));
}

void TestForwarderStore::aNewTokenVoidsTheEarlierOnes()
{
    auto enrollment = m_store->enroll(
        QStringLiteral("bench"), usbDevice(), QStringLiteral("user:alice"), std::chrono::hours(1));
    QVERIFY(enrollment);
    m_clock.advance(60);
    auto reissued = m_store->reissue(
        enrollment->forwarder.id, QStringLiteral("user:bob"), std::chrono::hours(2));
    QVERIFY2(reissued, qPrintable(reissued ? QString() : reissued.error().message));
    QVERIFY(reissued->token != enrollment->token);
    QCOMPARE(secrets::kindOf(reissued->token), secrets::SecretKind::ForwarderEnrollmentToken);
    QCOMPARE(reissued->tokenExpiresAt, m_clock.now().addSecs(2 * 3600));
    QCOMPARE(reissued->forwarder.id, enrollment->forwarder.id);

    // The lost bundle enrolls nothing, even within its own lifetime.
    auto old = m_store->redeem(enrollment->token);
    QVERIFY(!old);
    QCOMPARE(old.error().code, QStringLiteral("token_expired"));
    QVERIFY(!m_store->find(enrollment->forwarder.id)->enrolledAt.isValid());
    auto redeemed = m_store->redeem(reissued->token);
    QVERIFY2(redeemed, qPrintable(redeemed ? QString() : redeemed.error().message));
    QCOMPARE(redeemed->forwarder.id, enrollment->forwarder.id);

    auto entries = AuditLog(*m_db).entries({}, QStringLiteral("forwarder.reissue"));
    QVERIFY(entries);
    QCOMPARE(entries->size(), 1);
    QCOMPARE(entries->first().actor, QStringLiteral("user:bob"));
    QCOMPARE(
        entries->first().subject, QStringLiteral("forwarder:%1").arg(enrollment->forwarder.id));
    const QByteArray details = QJsonDocument(entries->first().details).toJson();
    QVERIFY(!details.contains(reissued->token.toUtf8()));
    QVERIFY(!details.contains(secrets::sha256Hex(reissued->token).toUtf8()));
}

void TestForwarderStore::aNewTokenIsOnlyForAForwarderThatNeverRedeemed()
{
    auto enrolled
        = m_store->enroll(QStringLiteral("one"), usbDevice(), QStringLiteral("user:admin"));
    auto revoked
        = m_store->enroll(QStringLiteral("two"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrolled && revoked);
    auto credential = m_store->redeem(enrolled->token);
    QVERIFY(credential);
    QVERIFY(m_store->revoke(revoked->forwarder.id, QStringLiteral("user:admin"), QString()));
    auto tokensBefore = m_db->query(QStringLiteral("SELECT count(*) FROM enrollment_tokens"));
    QVERIFY(tokensBefore && tokensBefore->next());

    auto again = m_store->reissue(enrolled->forwarder.id, QStringLiteral("user:admin"));
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("already_enrolled"));
    // Its credential is untouched.
    QVERIFY(m_store->authenticate(credential->credential));
    auto afterRevoke = m_store->reissue(revoked->forwarder.id, QStringLiteral("user:admin"));
    QVERIFY(!afterRevoke);
    QCOMPARE(afterRevoke.error().code, QStringLiteral("already_revoked"));
    auto missing = m_store->reissue(9999, QStringLiteral("user:admin"));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, QStringLiteral("not_found"));
    for (const std::chrono::seconds ttl :
        { std::chrono::seconds(0), std::chrono::seconds(8 * 86400) }) {
        auto pending
            = m_store->enroll(QStringLiteral("three"), usbDevice(), QStringLiteral("user:admin"));
        QVERIFY(pending);
        auto badTtl = m_store->reissue(pending->forwarder.id, QStringLiteral("user:admin"), ttl);
        QVERIFY(!badTtl);
        // The refused call left its bundle working.
        QVERIFY(m_store->revoke(pending->forwarder.id, QStringLiteral("user:admin"), QString()));
    }
    // No refusal left a token behind, and none was audited.
    auto tokensAfter = m_db->query(QStringLiteral("SELECT count(*) FROM enrollment_tokens"));
    QVERIFY(tokensAfter && tokensAfter->next());
    QCOMPARE(tokensAfter->value(0).toInt(), tokensBefore->value(0).toInt() + 2);
    auto entries = AuditLog(*m_db).entries({}, QStringLiteral("forwarder.reissue"));
    QVERIFY(entries);
    QVERIFY(entries->isEmpty());
}

void TestForwarderStore::concurrentRedemptionsHaveOneWinner()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const QString path = m_dir->filePath(QStringLiteral("hub.db"));
    const QString token = enrollment->token;

    // Two hub members (two connections, two threads) race on one token.
    constexpr int kRacers = 4;
    std::atomic<int> ready { 0 };
    std::atomic<int> winners { 0 };
    std::atomic<int> usedRefusals { 0 };
    std::vector<std::thread> racers;
    for (int i = 0; i < kRacers; ++i) {
        racers.emplace_back([&] {
            auto db = Database::openSqlite(path, m_clock);
            if (!db)
                return;
            ForwarderStore store(**db);
            ++ready;
            while (ready.load() < kRacers)
                std::this_thread::yield();
            auto redeemed = store.redeem(token);
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
    auto credentials = m_db->query(QStringLiteral("SELECT count(*) FROM forwarder_credentials"));
    QVERIFY(credentials && credentials->next());
    QCOMPARE(credentials->value(0).toInt(), 1);
}

void TestForwarderStore::everyChangeIsAudited()
{
    auto enrollment
        = m_store->enroll(QStringLiteral("bench"), usbDevice(), QStringLiteral("user:alice"));
    QVERIFY(enrollment);
    QVERIFY(m_store->redeem(enrollment->token));
    QVERIFY(m_store->revoke(
        enrollment->forwarder.id, QStringLiteral("user:bob"), QStringLiteral("returned")));

    auto entries = AuditLog(*m_db).entries();
    QVERIFY(entries);
    QCOMPARE(entries->size(), 3);
    const QString subject = QStringLiteral("forwarder:%1").arg(enrollment->forwarder.id);
    QCOMPARE(entries->at(0).action, QStringLiteral("forwarder.enroll"));
    QCOMPARE(entries->at(0).actor, QStringLiteral("user:alice"));
    QCOMPARE(entries->at(0).subject, subject);
    QCOMPARE(
        entries->at(0).details.value(QLatin1String("name")).toString(), QStringLiteral("bench"));
    QCOMPARE(entries->at(1).action, QStringLiteral("forwarder.redeem"));
    QCOMPARE(entries->at(2).action, QStringLiteral("forwarder.revoke"));
    QCOMPARE(entries->at(2).actor, QStringLiteral("user:bob"));
    QCOMPARE(entries->at(2).details.value(QLatin1String("reason")).toString(),
        QStringLiteral("returned"));
    for (const AuditEntry &entry : std::as_const(*entries)) {
        QVERIFY(entry.at.isValid());
        // The audit log never holds a secret.
        QVERIFY(!QJsonDocument(entry.details).toJson().contains(enrollment->token.toUtf8()));
    }
    auto revokes = AuditLog(*m_db).entries({}, QStringLiteral("forwarder.revoke"));
    QVERIFY(revokes);
    QCOMPARE(revokes->size(), 1);
}

QTEST_GUILESS_MAIN(TestForwarderStore)
#include "tst_forwarderstore.moc"
