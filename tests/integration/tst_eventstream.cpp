// Integration: the hub's event stream over its real TLS port. A dashboard
// subscribes on wss://HUB/api/events with an API token and then hears, as
// they happen, that a forwarder was enrolled, connected and revoked.

#include "support/eventclient.h"
#include "support/testrig.h"

#include "common/net/hubtls.h"
#include "common/net/spkipin.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

using namespace cloop;
using namespace cloop::testing;

class TestEventStream final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void wrongTokenIsRefusedAndClosed();
    void subscriberHearsForwarderLifecycle();
    void revokedTokenClosedWithinASecond();
    void userWithoutARoleIsRefused();
    void eachUserIsCappedAlone();

private:
    // A user with a maintainer role in a project (or none), and their API token.
    QString userToken(const QString &name, bool withRole);
    std::unique_ptr<EventClient> subscribe(const QString &token);

    std::unique_ptr<TestRig> m_rig;
};

void TestEventStream::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestEventStream::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestEventStream::wrongTokenIsRefusedAndClosed()
{
    EventClient client(m_rig->hub());
    QVERIFY(client.waitConnected());
    // A forwarder-shaped secret is not an API token.
    client.send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), QStringLiteral("cfc_notanapitoken") } });
    QVERIFY(client.waitFor(QStringLiteral("error")));
    const QJsonObject error = client.messages.at(client.indexOf(QStringLiteral("error")));
    QCOMPARE(
        error.value(QLatin1String("code")).toString(), QStringLiteral("wrong_credential_type"));
    QVERIFY(QTest::qWaitFor(
        [&] { return client.state() == QAbstractSocket::UnconnectedState; }, kLongWaitMs));
    QCOMPARE(client.indexOf(QStringLiteral("subscribed")), -1);
}

void TestEventStream::subscriberHearsForwarderLifecycle()
{
    HubProcess &hub = m_rig->hub();
    EventClient client(hub);
    QVERIFY(client.waitConnected());
    client.send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), hub.adminToken() } });
    QVERIFY(client.waitFor(QStringLiteral("subscribed")));

    // When a forwarder is enrolled and connects,
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("watched"), forwarder),
        qPrintable(m_rig->lastError()));
    // then the subscriber heard both, in that order, about that forwarder.
    QVERIFY(client.waitFor(QStringLiteral("event"), QStringLiteral("forwarder.connected")));
    const qsizetype enrolled
        = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.enrolled"));
    const qsizetype connected
        = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.connected"));
    QVERIFY(enrolled >= 0 && enrolled < connected);
    const QJsonObject data = client.messages.at(connected).value(QLatin1String("data")).toObject();
    QCOMPARE(data.value(QLatin1String("id")).toInteger(), forwarder.enrollment.id);
    QCOMPARE(data.value(QLatin1String("name")).toString(), QStringLiteral("watched"));

    // When it is revoked, the revocation and the dropped session follow.
    const CliResult revoked = hub.cli({ QStringLiteral("forward"), QStringLiteral("revoke"),
        QString::number(forwarder.enrollment.id), QStringLiteral("--reason"),
        QStringLiteral("bench returned") });
    CLOOP_COMPARE_EXIT(revoked, 0);
    QVERIFY(client.waitFor(QStringLiteral("event"), QStringLiteral("forwarder.disconnected")));
    const qsizetype revokedAt
        = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.revoked"));
    QVERIFY(revokedAt > connected);
    QCOMPARE(client.messages.at(revokedAt)
                 .value(QLatin1String("data"))
                 .toObject()
                 .value(QLatin1String("reason"))
                 .toString(),
        QStringLiteral("bench returned"));
}

QString TestEventStream::userToken(const QString &name, bool withRole)
{
    HubProcess &hub = m_rig->hub();
    if (hub.cli({ QStringLiteral("user"), QStringLiteral("add"), name }).exitCode != 0)
        return {};
    if (withRole) {
        hub.cli({ QStringLiteral("project"), QStringLiteral("add"),
            QStringLiteral("/srv/projects/") + name });
        if (hub.cli({ QStringLiteral("project"), QStringLiteral("grant"),
                        QStringLiteral("/srv/projects/") + name, QStringLiteral("--user"), name,
                        QStringLiteral("--role"), QStringLiteral("maintainer") })
                .exitCode
            != 0)
            return {};
    }
    return hub
        .cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
            name, QStringLiteral("--json") })
        .toObject()
        .value(QLatin1String("token"))
        .toString();
}

std::unique_ptr<EventClient> TestEventStream::subscribe(const QString &token)
{
    auto client = std::make_unique<EventClient>(m_rig->hub());
    if (!client->waitConnected())
        return client;
    client->send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), token } });
    (void)QTest::qWaitFor(
        [&] {
            return client->indexOf(QStringLiteral("subscribed")) >= 0
                || client->indexOf(QStringLiteral("error")) >= 0;
        },
        kLongWaitMs);
    return client;
}

void TestEventStream::revokedTokenClosedWithinASecond()
{
    HubProcess &hub = m_rig->hub();
    const QString token = userToken(QStringLiteral("maint"), true);
    QVERIFY2(token.startsWith(QLatin1String("cat_")), qPrintable(hub.transcript()));
    auto client = subscribe(token);
    QVERIFY(client->indexOf(QStringLiteral("subscribed")) >= 0);
    const QJsonArray tokens = hub.cliItems({ QStringLiteral("token"), QStringLiteral("list"),
        QStringLiteral("--user"), QStringLiteral("maint"), QStringLiteral("--json") });
    QCOMPARE(tokens.size(), 1);
    const qint64 tokenId = tokens.first().toObject().value(QLatin1String("id")).toInteger();

    // When the token is revoked (`cloop token revoke`)
    const CliResult revoked
        = hub.cli({ QStringLiteral("token"), QStringLiteral("revoke"), QString::number(tokenId) });
    CLOOP_COMPARE_EXIT(revoked, 0);
    QElapsedTimer clock;
    clock.start();
    // Then its open subscription is told why and closed within a second.
    QVERIFY(QTest::qWaitFor(
        [&] { return client->state() == QAbstractSocket::UnconnectedState; }, 1000));
    qInfo("the revoked token's subscription closed %lld ms after the revocation returned",
        static_cast<long long>(clock.elapsed()));
    const qsizetype error = client->indexOf(QStringLiteral("error"));
    QVERIFY(error >= 0);
    QCOMPARE(client->messages.at(error).value(QLatin1String("code")).toString(),
        QStringLiteral("unauthorized"));
    // and no event reaches it afterwards: it is gone.
    QVERIFY(hub.log().contains(QLatin1String("ended the event subscription of maint")));
}

void TestEventStream::userWithoutARoleIsRefused()
{
    const QString token = userToken(QStringLiteral("visitor"), false);
    QVERIFY(token.startsWith(QLatin1String("cat_")));
    auto client = subscribe(token);
    QCOMPARE(client->indexOf(QStringLiteral("subscribed")), -1);
    const qsizetype error = client->indexOf(QStringLiteral("error"));
    QVERIFY(error >= 0);
    QCOMPARE(client->messages.at(error).value(QLatin1String("code")).toString(),
        QStringLiteral("forbidden"));
    QVERIFY(QTest::qWaitFor(
        [&] { return client->state() == QAbstractSocket::UnconnectedState; }, kLongWaitMs));
}

void TestEventStream::eachUserIsCappedAlone()
{
    const QString token = userToken(QStringLiteral("busy"), true);
    QVERIFY(token.startsWith(QLatin1String("cat_")));
    // Given one user holding the most subscriptions one user may
    std::vector<std::unique_ptr<EventClient>> mine;
    for (int i = 0; i < 8; ++i) {
        mine.push_back(subscribe(token));
        QVERIFY(mine.back()->indexOf(QStringLiteral("subscribed")) >= 0);
    }
    // When the same user opens one more, it is refused and told why
    auto ninth = subscribe(token);
    QCOMPARE(ninth->indexOf(QStringLiteral("subscribed")), -1);
    const qsizetype error = ninth->indexOf(QStringLiteral("error"));
    QVERIFY(error >= 0);
    QCOMPARE(ninth->messages.at(error).value(QLatin1String("code")).toString(),
        QStringLiteral("too_many_subscriptions"));
    // while the administrator, and another user, still subscribe, and the
    // first user's eight stay open.
    auto admin = subscribe(m_rig->hub().adminToken());
    QVERIFY(admin->indexOf(QStringLiteral("subscribed")) >= 0);
    auto other = subscribe(userToken(QStringLiteral("other"), true));
    QVERIFY(other->indexOf(QStringLiteral("subscribed")) >= 0);
    for (const auto &client : mine)
        QCOMPARE(client->state(), QAbstractSocket::ConnectedState);
}

QTEST_GUILESS_MAIN(TestEventStream)
#include "tst_eventstream.moc"
