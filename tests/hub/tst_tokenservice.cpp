// TokenService without HTTP: tokens are made by hub administrators, seen
// and revoked by their owner or a hub administrator, and a revocation is
// told to the token's user (their event stream ends it at once).

#include "hub/domain/tokenservice.h"
#include "tests/hub/apiharness.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

class TestTokenService : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aNewTokenSpeaksForItsUser();
    void tokensAreListedForTheirOwner();
    void aRevocationTakesEffectAndIsTold();

private:
    TokenService &service() { return m_hub->core().tokens(); }

    std::unique_ptr<ApiHarness> m_hub;
    ApiPrincipal m_admin;
    ApiPrincipal m_maintainer;
    ApiPrincipal m_other;
};

void TestTokenService::init()
{
    m_hub = std::make_unique<ApiHarness>();
    QVERIFY(m_hub->open());
    auto admin = m_hub->addCaller(QStringLiteral("admin"), true);
    auto maintainer = m_hub->addCaller(QStringLiteral("pmaint"));
    auto other = m_hub->addCaller(QStringLiteral("qmaint"));
    QVERIFY(admin && maintainer && other);
    m_admin = *admin;
    m_maintainer = *maintainer;
    m_other = *other;
}

void TestTokenService::cleanup()
{
    m_hub.reset();
}

void TestTokenService::aNewTokenSpeaksForItsUser()
{
    const QJsonObject body { { QStringLiteral("user"), QStringLiteral("pmaint") },
        { QStringLiteral("label"), QStringLiteral("laptop") } };
    QCOMPARE(service().create(m_maintainer, body).error().code, QStringLiteral("forbidden"));
    auto created = service().create(m_admin, body);
    QVERIFY2(created, qPrintable(failure(created)));
    QCOMPARE(created->user.name, QStringLiteral("pmaint"));
    auto caller = service().authenticate(created->token);
    QVERIFY(caller);
    QCOMPARE(caller->userId, m_maintainer.userId);
    QVERIFY(caller->tokenId != m_maintainer.tokenId);
    QCOMPARE(service()
                 .create(m_admin, { { QStringLiteral("user"), QStringLiteral("ghost") } })
                 .error()
                 .code,
        QStringLiteral("not_found"));
}

void TestTokenService::tokensAreListedForTheirOwner()
{
    auto own = service().list(m_maintainer, QString());
    QVERIFY(own);
    QCOMPARE(own->size(), 1);
    QCOMPARE(own->first().userName, QStringLiteral("pmaint"));
    QVERIFY(service().list(m_maintainer, QStringLiteral("pmaint")));
    QCOMPARE(service().list(m_maintainer, QStringLiteral("qmaint")).error().code,
        QStringLiteral("forbidden"));
    QCOMPARE(service().list(m_admin, QString())->size(), 3);
    QCOMPARE(service().list(m_admin, QStringLiteral("qmaint"))->size(), 1);
}

void TestTokenService::aRevocationTakesEffectAndIsTold()
{
    // Another user's token is not theirs to revoke.
    QCOMPARE(
        service().revoke(m_other, m_maintainer.tokenId).error().code, QStringLiteral("forbidden"));
    QVERIFY(m_hub->takeEvents().isEmpty());
    QVERIFY(service().principalOf(m_maintainer.tokenId));

    auto revoked = service().revoke(m_maintainer, m_maintainer.tokenId);
    QVERIFY2(revoked, qPrintable(failure(revoked)));
    QVERIFY(revoked->revokedAt.isValid());
    QVERIFY(!service().principalOf(m_maintainer.tokenId));
    const QList<HubEvent> events = m_hub->takeEvents();
    QCOMPARE(events.size(), 1);
    const HubEvent event = events.first();
    QCOMPARE(event.name, QLatin1String(api::hubeventname::kTokenRevoked));
    QCOMPARE(event.userId, std::optional<qint64>(m_maintainer.userId));
    QCOMPARE(event.data.value(QLatin1String("token_id")).toInteger(), m_maintainer.tokenId);
}

QTEST_GUILESS_MAIN(TestTokenService)
#include "tst_tokenservice.moc"
