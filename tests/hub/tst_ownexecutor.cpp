// The hub's own executor without its thread: how it gets in (the saved
// credential, moved along with the hub; a new enrollment; a revocation that
// stands), and the name "hub" that only the hub may give.

#include "apiharness.h"

#include "common/crypto/secrets.h"
#include "common/identity/credentialfile.h"
#include "common/identity/enrollmentbundle.h"
#include "hub/executor/ownexecutor.h"
#include "hub/executor/ownexecutorcredential.h"
#include "hub/storage/executorstore.h"

#include <QFile>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

namespace {
const QUrl kHubUrl(QStringLiteral("wss://127.0.0.1:7443"));
const QString kPin = QStringLiteral("sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
const QString kOtherPin = QStringLiteral("sha256:AAAAQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
} // namespace

class TestOwnExecutor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void firstStartEnrollsTheExecutorNamedHub();
    void theSavedCredentialFollowsTheHubsAddressAndKey();
    void aRevocationStands();
    void aLostCredentialRetiresTheOldRecord();
    void aCredentialFromAnotherDatabaseEnrollsAnew();
    void aBrokenCredentialFileIsAnErrorAndEnrollsNothing();
    void nobodyElseMayEnrollTheNameHub();
    void runsNameTheirExecutor();

private:
    QString credentialPath() const { return m_harness->dbPath() + QLatin1String(".agent.json"); }
    Result<QString> prepare(const QUrl &url = kHubUrl, const QString &pin = kPin)
    {
        return OwnExecutorCredential(m_harness->core(), credentialPath()).prepare(url, pin);
    }
    // Enrolls "hub" as the hub would, redeems it, and keeps the credential
    // in the file the way the agent saves it.
    identity::DaemonCredential enrollAndSave(const QUrl &url, const QString &pin);
    QList<ExecutorRecord> hubRecords(bool includeRevoked);

    std::unique_ptr<ApiHarness> m_harness;
    QString m_admin;
};

void TestOwnExecutor::init()
{
    m_harness = std::make_unique<ApiHarness>();
    QVERIFY(m_harness->open());
    auto admin = m_harness->addUser(QStringLiteral("admin"), true);
    QVERIFY2(admin, qPrintable(failure(admin)));
    m_admin = *admin;
}

void TestOwnExecutor::cleanup()
{
    m_harness.reset();
}

identity::DaemonCredential TestOwnExecutor::enrollAndSave(const QUrl &url, const QString &pin)
{
    identity::DaemonCredential saved;
    auto bundleText = prepare(url, pin);
    if (!bundleText || bundleText->isEmpty())
        return saved;
    auto bundle = identity::EnrollmentBundle::decode(
        *bundleText, identity::EnrollmentBundle::Kind::Executor);
    if (!bundle)
        return saved;
    auto redeemed = m_harness->core().stores().executors.redeem(bundle->token);
    if (!redeemed)
        return saved;
    saved.server = bundle->hub;
    saved.pin = bundle->pins;
    saved.id = redeemed->first.id;
    saved.name = redeemed->first.name;
    saved.credential = redeemed->second;
    saved.enrolledAt = QDateTime::currentDateTimeUtc();
    if (!identity::CredentialFile(credentialPath()).save(saved))
        return {};
    return saved;
}

QList<ExecutorRecord> TestOwnExecutor::hubRecords(bool includeRevoked)
{
    QList<ExecutorRecord> out;
    auto all = m_harness->core().stores().executors.list(includeRevoked);
    if (!all)
        return out;
    for (const ExecutorRecord &record : std::as_const(*all)) {
        if (record.name == OwnExecutor::kName)
            out.append(record);
    }
    return out;
}

void TestOwnExecutor::firstStartEnrollsTheExecutorNamedHub()
{
    auto bundleText = prepare();
    QVERIFY2(bundleText, qPrintable(failure(bundleText)));
    auto bundle = identity::EnrollmentBundle::decode(
        *bundleText, identity::EnrollmentBundle::Kind::Executor);
    QVERIFY2(bundle, qPrintable(failure(bundle)));
    QCOMPARE(bundle->hub, kHubUrl);
    QCOMPARE(bundle->pins, kPin);
    QCOMPARE(secrets::kindOf(bundle->token), secrets::SecretKind::AgentEnrollmentToken);

    const QList<ExecutorRecord> records = hubRecords(true);
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().createdBy, QStringLiteral("hub"));
    QVERIFY(!records.first().isRevoked());
    const QStringList audit = m_harness->rows(
        2, QStringLiteral("SELECT actor, action FROM audit_log WHERE action = 'executor.enroll'"));
    QCOMPARE(audit, QStringList { QStringLiteral("hub|executor.enroll") });
    // Nothing is saved before the agent redeems the token.
    QVERIFY(!QFile::exists(credentialPath()));
}

void TestOwnExecutor::theSavedCredentialFollowsTheHubsAddressAndKey()
{
    const identity::DaemonCredential saved = enrollAndSave(kHubUrl, kPin);
    QVERIFY(!saved.credential.isEmpty());
    const QStringList before = m_harness->fingerprint();

    // Same hub: nothing to do, nothing changed.
    auto same = prepare();
    QVERIFY2(same, qPrintable(failure(same)));
    QVERIFY(same->isEmpty());

    // Another port and a new key: the file now names them, with the same credential.
    const QUrl moved(QStringLiteral("wss://127.0.0.1:9443"));
    auto again = prepare(moved, kOtherPin);
    QVERIFY2(again, qPrintable(failure(again)));
    QVERIFY2(again->isEmpty(), "a good credential must not enroll anew");
    auto reloaded = identity::CredentialFile(credentialPath()).load();
    QVERIFY2(reloaded && reloaded->credential, qPrintable(failure(reloaded)));
    QCOMPARE(reloaded->credential->server, moved);
    QCOMPARE(reloaded->credential->pin, kOtherPin);
    QCOMPARE(reloaded->credential->credential, saved.credential);
    QCOMPARE(reloaded->credential->id, saved.id);
    QVERIFY(reloaded->warnings.isEmpty()); // still 0600
    QCOMPARE(m_harness->fingerprint(), before);
}

void TestOwnExecutor::aRevocationStands()
{
    const identity::DaemonCredential saved = enrollAndSave(kHubUrl, kPin);
    QVERIFY(!saved.credential.isEmpty());
    auto revoked = m_harness->core().stores().executors.revoke(
        saved.id, QStringLiteral("user:admin"), QStringLiteral("no workloads on the hub"));
    QVERIFY2(revoked, qPrintable(failure(revoked)));
    const QStringList before = m_harness->fingerprint();

    auto refused = prepare();
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("own_executor_revoked"));
    QVERIFY2(
        refused.error().message.contains(credentialPath()), qPrintable(refused.error().message));
    // Nothing enrolled in its place, nothing else touched, the file kept.
    QCOMPARE(m_harness->fingerprint(), before);
    QVERIFY(hubRecords(false).isEmpty());
    QVERIFY(QFile::exists(credentialPath()));

    // Its operator removes the file: then, and only then, a new one.
    QVERIFY(QFile::remove(credentialPath()));
    auto anew = prepare();
    QVERIFY2(anew && !anew->isEmpty(), qPrintable(failure(anew)));
    QCOMPARE(hubRecords(false).size(), 1);
    QVERIFY(hubRecords(false).first().id != saved.id);
}

void TestOwnExecutor::aLostCredentialRetiresTheOldRecord()
{
    const identity::DaemonCredential saved = enrollAndSave(kHubUrl, kPin);
    QVERIFY(!saved.credential.isEmpty());
    QVERIFY(QFile::remove(credentialPath()));

    auto anew = prepare();
    QVERIFY2(anew && !anew->isEmpty(), qPrintable(failure(anew)));
    auto old = m_harness->core().stores().executors.find(saved.id);
    QVERIFY2(old, qPrintable(failure(old)));
    QVERIFY(old->isRevoked());
    QCOMPARE(old->revokedBy, QStringLiteral("hub"));
    // The old credential no longer opens anything.
    auto stale = m_harness->core().stores().executors.authenticate(saved.credential);
    QVERIFY(!stale);
    QCOMPARE(stale.error().code, QStringLiteral("revoked"));
    const QList<ExecutorRecord> active = hubRecords(false);
    QCOMPARE(active.size(), 1);
    QVERIFY(active.first().id != saved.id);
    const QStringList audit = m_harness->rows(3,
        QStringLiteral(
            "SELECT actor, action, subject FROM audit_log WHERE action = 'executor.revoke'"));
    QCOMPARE(
        audit, QStringList { QStringLiteral("hub|executor.revoke|executor:%1").arg(saved.id) });
}

void TestOwnExecutor::aCredentialFromAnotherDatabaseEnrollsAnew()
{
    identity::DaemonCredential foreign;
    foreign.server = kHubUrl;
    foreign.pin = kPin;
    foreign.id = 41;
    foreign.name = QStringLiteral("hub");
    foreign.credential = secrets::generate(secrets::SecretKind::AgentCredential);
    QVERIFY(identity::CredentialFile(credentialPath()).save(foreign));

    auto anew = prepare();
    QVERIFY2(anew && !anew->isEmpty(), qPrintable(failure(anew)));
    QCOMPARE(hubRecords(true).size(), 1);
}

void TestOwnExecutor::aBrokenCredentialFileIsAnErrorAndEnrollsNothing()
{
    QFile file(credentialPath());
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"server\": 7, \"credential\": ");
    file.close();
    QVERIFY(file.setPermissions(QFile::ReadOwner | QFile::WriteOwner));
    const QStringList before = m_harness->fingerprint();

    auto refused = prepare();
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("own_executor_credential"));
    QVERIFY2(
        refused.error().message.contains(credentialPath()), qPrintable(refused.error().message));
    QCOMPARE(m_harness->fingerprint(), before);
}

void TestOwnExecutor::nobodyElseMayEnrollTheNameHub()
{
    const QStringList before = m_harness->fingerprint();
    const ApiResponse refused = m_harness->post(QStringLiteral("/api/executors"), m_admin,
        { { QStringLiteral("name"), QStringLiteral("hub") } });
    QCOMPARE(refused.status, 409);
    QCOMPARE(errorCode(refused), QStringLiteral("name_reserved"));
    QCOMPARE(m_harness->fingerprint(), before);
    // Any other name is fine.
    const ApiResponse other = m_harness->post(QStringLiteral("/api/executors"), m_admin,
        { { QStringLiteral("name"), QStringLiteral("hub-2") } });
    QVERIFY2(other.status == 201, qPrintable(describe(other)));
}

void TestOwnExecutor::runsNameTheirExecutor()
{
    const identity::DaemonCredential saved = enrollAndSave(kHubUrl, kPin);
    QVERIFY(!saved.credential.isEmpty());
    auto project = m_harness->addProject(QStringLiteral("/srv/projects/p"));
    QVERIFY2(project, qPrintable(failure(project)));
    const QJsonObject base { { QStringLiteral("project"), QStringLiteral("/srv/projects/p") },
        { QStringLiteral("argv"), QJsonArray { QStringLiteral("true") } } };

    QJsonObject byName = base;
    byName.insert(QStringLiteral("executor"), QStringLiteral("hub"));
    const ApiResponse created = m_harness->post(QStringLiteral("/api/runs"), m_admin, byName);
    QVERIFY2(created.status == 201, qPrintable(describe(created)));
    QCOMPARE(bodyOf(created).value(QLatin1String("executor_id")).toInteger(), saved.id);

    const QStringList before = m_harness->fingerprint();
    QJsonObject unknown = base;
    unknown.insert(QStringLiteral("executor"), QStringLiteral("nowhere"));
    const ApiResponse missing = m_harness->post(QStringLiteral("/api/runs"), m_admin, unknown);
    QCOMPARE(missing.status, 404);
    QVERIFY2(
        errorMessage(missing).contains(QLatin1String("nowhere")), qPrintable(describe(missing)));

    QJsonObject both = byName;
    both.insert(QStringLiteral("executor_id"), saved.id);
    QCOMPARE(m_harness->post(QStringLiteral("/api/runs"), m_admin, both).status, 400);
    QJsonObject notAName = base;
    notAName.insert(QStringLiteral("executor"), 7);
    QCOMPARE(m_harness->post(QStringLiteral("/api/runs"), m_admin, notAName).status, 400);
    QCOMPARE(m_harness->fingerprint(), before);

    // A revoked executor's name names nothing.
    QVERIFY(m_harness->core().stores().executors.revoke(
        saved.id, QStringLiteral("user:admin"), QString()));
    const QStringList afterRevoke = m_harness->fingerprint();
    QCOMPARE(m_harness->post(QStringLiteral("/api/runs"), m_admin, byName).status, 404);
    QCOMPARE(m_harness->fingerprint(), afterRevoke);
}

QTEST_GUILESS_MAIN(TestOwnExecutor)
#include "tst_ownexecutor.moc"
