// ExecutorService without HTTP: who may enroll, revoke and create virtual
// executors, what it publishes, and the agents' own way in.

#include "hub/domain/executorservice.h"
#include "tests/hub/apiharness.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

class TestExecutorService : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void anEnrollmentIsPublishedAndAudited();
    void theHubsOwnNameIsReserved();
    void theCallerIsCheckedBeforeTheBody();
    void aRevocationSaysWhoAndWhy();
    void virtualExecutorsAreCreatedByHubAdministrators();
    void anAgentComesInWithItsTokenThenItsCredential();

private:
    ExecutorService &service() { return m_hub->core().executors(); }
    // The events published since the last call, as "name id".
    QStringList takeEvents();

    std::unique_ptr<ApiHarness> m_hub;
    ApiPrincipal m_admin;
    ApiPrincipal m_maintainer;
};

void TestExecutorService::init()
{
    m_hub = std::make_unique<ApiHarness>();
    QVERIFY(m_hub->open());
    auto admin = m_hub->addCaller(QStringLiteral("admin"), true);
    auto maintainer = m_hub->addCaller(QStringLiteral("pmaint"));
    auto project = m_hub->addProject(QStringLiteral("/srv/projects/bench"));
    QVERIFY(admin && maintainer && project);
    QVERIFY(m_hub->grant(*project, QStringLiteral("pmaint"), ProjectRole::Maintainer));
    m_admin = *admin;
    m_maintainer = *maintainer;
}

void TestExecutorService::cleanup()
{
    m_hub.reset();
}

QStringList TestExecutorService::takeEvents()
{
    QStringList out;
    for (const HubEvent &event : m_hub->takeEvents())
        out.append(QStringLiteral("%1 %2")
                       .arg(event.name)
                       .arg(event.data.value(QLatin1String("id")).toInteger()));
    return out;
}

void TestExecutorService::anEnrollmentIsPublishedAndAudited()
{
    const qint64 audited = m_hub->lastAuditId();
    auto enrolled = service().enroll(m_admin,
        { { QStringLiteral("name"), QStringLiteral("buildbox") },
            { QStringLiteral("token_ttl"), QStringLiteral("2h") } });
    QVERIFY2(enrolled, qPrintable(failure(enrolled)));
    QCOMPARE(enrolled->executor.name, QStringLiteral("buildbox"));
    QCOMPARE(enrolled->executor.createdBy, QStringLiteral("user:admin"));
    QVERIFY(enrolled->token.startsWith(QStringLiteral("cet_")));
    QVERIFY(qAbs(QDateTime::currentDateTimeUtc().secsTo(enrolled->tokenExpiresAt) - 7200) < 60);
    QCOMPARE(takeEvents(),
        QStringList { QStringLiteral("executor.enrolled %1").arg(enrolled->executor.id) });
    QCOMPARE(m_hub->auditActionsSince(audited), QStringList { QStringLiteral("executor.enroll") });
}

void TestExecutorService::theHubsOwnNameIsReserved()
{
    auto taken = service().enroll(m_admin, { { QStringLiteral("name"), QStringLiteral("hub") } });
    QVERIFY(!taken);
    QCOMPARE(taken.error().code, QStringLiteral("name_reserved"));
    QVERIFY(m_hub->core().stores().executors.list()->isEmpty());
    QVERIFY(takeEvents().isEmpty());
}

void TestExecutorService::theCallerIsCheckedBeforeTheBody()
{
    // Whoever may not act learns nothing about what they sent.
    const QJsonObject malformed { { QStringLiteral("name"), 5 }, { QStringLiteral("reason"), 5 } };
    QCOMPARE(service().enroll(m_maintainer, malformed).error().code, QStringLiteral("forbidden"));
    QCOMPARE(
        service().revoke(m_maintainer, 1, malformed).error().code, QStringLiteral("forbidden"));
    QCOMPARE(service().createVirtualExecutor(m_maintainer, malformed).error().code,
        QStringLiteral("forbidden"));
    QCOMPARE(service().enroll(m_admin, malformed).error().code, QStringLiteral("invalid_request"));
}

void TestExecutorService::aRevocationSaysWhoAndWhy()
{
    auto enrolled
        = service().enroll(m_admin, { { QStringLiteral("name"), QStringLiteral("buildbox") } });
    QVERIFY(enrolled);
    const qint64 id = enrolled->executor.id;
    m_hub->takeEvents();

    auto revoked = service().revoke(
        m_admin, id, { { QStringLiteral("reason"), QStringLiteral("decommissioned") } });
    QVERIFY2(revoked, qPrintable(failure(revoked)));
    QVERIFY(revoked->isRevoked());
    const QList<HubEvent> events = m_hub->takeEvents();
    QCOMPARE(events.size(), 1);
    const HubEvent event = events.first();
    QCOMPARE(event.name, QStringLiteral("executor.revoked"));
    QCOMPARE(event.data.value(QLatin1String("by")).toString(), QStringLiteral("admin"));
    QCOMPARE(
        event.data.value(QLatin1String("reason")).toString(), QStringLiteral("decommissioned"));
    QVERIFY(!event.projectId && !event.userId);

    // Once is enough: a second revocation is refused and tells nobody.
    auto again = service().revoke(m_admin, id, {});
    QCOMPARE(again.error().code, QStringLiteral("already_revoked"));
    QVERIFY(takeEvents().isEmpty());
}

void TestExecutorService::virtualExecutorsAreCreatedByHubAdministrators()
{
    auto enrolled
        = service().enroll(m_admin, { { QStringLiteral("name"), QStringLiteral("buildbox") } });
    QVERIFY(enrolled);
    const QJsonObject body { { QStringLiteral("name"), QStringLiteral("gpu") },
        { QStringLiteral("executor_id"), enrolled->executor.id },
        { QStringLiteral("runtime"), QStringLiteral("crun") } };
    QCOMPARE(service().createVirtualExecutor(m_maintainer, body).error().code,
        QStringLiteral("forbidden"));
    auto created = service().createVirtualExecutor(m_admin, body);
    QVERIFY2(created, qPrintable(failure(created)));
    QCOMPARE(created->executorName, QStringLiteral("buildbox"));
    QCOMPARE(created->createdBy, QStringLiteral("user:admin"));

    // Anyone with a role sees them.
    auto seen = service().virtualExecutors(m_maintainer);
    QVERIFY(seen);
    QCOMPARE(seen->size(), 1);
    QCOMPARE(seen->first().runtime, QStringLiteral("crun"));
    auto listed = service().list(m_maintainer);
    QVERIFY(listed);
    QCOMPARE(listed->size(), 1);
}

void TestExecutorService::anAgentComesInWithItsTokenThenItsCredential()
{
    auto enrolled
        = service().enroll(m_admin, { { QStringLiteral("name"), QStringLiteral("buildbox") } });
    QVERIFY(enrolled);
    auto redeemed = service().redeem(enrolled->token);
    QVERIFY2(redeemed, qPrintable(failure(redeemed)));
    QCOMPARE(redeemed->first.id, enrolled->executor.id);
    QVERIFY(redeemed->first.enrolledAt.isValid());

    auto known = service().authenticate(redeemed->second);
    QVERIFY(known);
    QVERIFY(service().recordHello(known->id, QStringLiteral("0.2.0"), 25, {}));
    QCOMPARE(service().forDispatch(known->id)->software, QStringLiteral("0.2.0"));

    QVERIFY(service().revoke(m_admin, known->id, {}));
    auto refused = service().authenticate(redeemed->second);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("revoked"));
    QVERIFY(refused.error().permanent);
}

QTEST_GUILESS_MAIN(TestExecutorService)
#include "tst_executorservice.moc"
