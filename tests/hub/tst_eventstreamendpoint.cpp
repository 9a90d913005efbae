// The event stream (wss://HUB/api/events) over a plain loopback
// QWebSocketServer: subscription by API token, who receives which event,
// and subscriptions that end when their token or their user's roles go.

#include "tests/hub/apiharness.h"

#include "common/crypto/secrets.h"
#include "common/net/qtmessagesocket.h"
#include "hub/domain/eventbus.h"
#include "hub/server/eventstreamendpoint.h"

#include <QSignalSpy>
#include <QWebSocket>
#include <QWebSocketServer>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

namespace {

const QString kP = QStringLiteral("/srv/projects/bench");
const QString kQ = QStringLiteral("/srv/projects/radio");

// A dashboard's end of the stream: records what arrives.
class Client final : public QObject
{
public:
    explicit Client(const QUrl &url)
    {
        connect(&socket, &QWebSocket::textMessageReceived, this, [this](const QString &text) {
            messages.append(QJsonDocument::fromJson(text.toUtf8()).object());
        });
        connect(&socket, &QWebSocket::disconnected, this, [this] { closed = true; });
        socket.open(url);
    }
    ~Client() override { socket.abort(); }

    void sendRaw(const QByteArray &bytes, bool binary)
    {
        if (binary)
            socket.sendBinaryMessage(bytes);
        else
            socket.sendTextMessage(QString::fromUtf8(bytes));
    }
    void send(const QJsonObject &message)
    {
        socket.sendTextMessage(
            QString::fromUtf8(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    }
    // The names of the events received, in order.
    QStringList events() const
    {
        QStringList names;
        for (const QJsonObject &message : messages) {
            if (message.value(QLatin1String("type")).toString() == QLatin1String("event"))
                names.append(message.value(QLatin1String("event")).toString());
        }
        return names;
    }
    // "event:project-or-name" of each event, to tell P's from Q's.
    QStringList eventKeys() const
    {
        QStringList keys;
        for (const QJsonObject &message : messages) {
            if (message.value(QLatin1String("type")).toString() != QLatin1String("event"))
                continue;
            const QJsonObject data = message.value(QLatin1String("data")).toObject();
            const QString about = data.contains(QLatin1String("project"))
                ? data.value(QLatin1String("project")).toString()
                : data.value(QLatin1String("name")).toString();
            keys.append(
                message.value(QLatin1String("event")).toString() + QLatin1Char(':') + about);
        }
        return keys;
    }

    QWebSocket socket;
    QList<QJsonObject> messages;
    bool closed = false;
};

} // namespace

class TestEventStreamEndpoint : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void refusedSubscriptions_data();
    void refusedSubscriptions();
    void subscribedWithAValidToken();
    void nothingBeforeSubscribing();
    void eventsReachOnlyThoseWhoMaySeeThem();
    void realChangesAreStreamed();
    void rolesAreCheckedWhenTheEventHappens();
    void revokedTokenEndsItsSubscription();
    void lastRoleGoneEndsTheSubscription();
    void changesMadeElsewhereAreFoundByTheRecheck();
    void eachUserHasACapOfTheirOwn();
    void eventsAboutAUserReachOnlyThemAndAdministrators();

private:
    std::unique_ptr<Client> subscribed(const QString &token, const QString &user);
    void restartStream(EventStreamEndpoint::Limits limits);
    qint64 tokenIdOf(const QString &user);
    void publishSample();

    std::unique_ptr<ApiHarness> m_hub;
    std::unique_ptr<EventStreamEndpoint> m_stream;
    std::unique_ptr<QWebSocketServer> m_server;
    QUrl m_url;
    QHash<QString, QString> m_tokens; // user -> API token
    QString m_forwarderCredential;
    qint64 m_p = 0;
    qint64 m_q = 0;
    qint64 m_hsm = 0;
    qint64 m_radio = 0;
};

void TestEventStreamEndpoint::init()
{
    m_hub = std::make_unique<ApiHarness>();
    Status opened = m_hub->open();
    QVERIFY2(opened, qPrintable(failure(opened)));
    m_tokens.clear();
    for (const auto &[name, hubAdmin] : { std::pair { QStringLiteral("admin"), true },
             std::pair { QStringLiteral("pmaint"), false },
             std::pair { QStringLiteral("padmin"), false },
             std::pair { QStringLiteral("qmaint"), false },
             std::pair { QStringLiteral("nobody"), false } }) {
        auto token = m_hub->addUser(name, hubAdmin);
        QVERIFY2(token, qPrintable(failure(token)));
        m_tokens.insert(name, *token);
    }
    auto p = m_hub->addProject(kP);
    auto q = m_hub->addProject(kQ);
    QVERIFY2(p && q, "adding projects");
    m_p = *p;
    m_q = *q;
    QVERIFY(m_hub->grant(m_p, QStringLiteral("pmaint"), ProjectRole::Maintainer));
    QVERIFY(m_hub->grant(m_p, QStringLiteral("padmin"), ProjectRole::Administrator));
    QVERIFY(m_hub->grant(m_q, QStringLiteral("qmaint"), ProjectRole::Maintainer));
    auto hsm = m_hub->enrollUsb(QStringLiteral("hsm"));
    auto radio = m_hub->enrollUsb(QStringLiteral("radio"), QStringLiteral("1d50:6089"));
    auto credential = m_hub->forwarderCredential(QStringLiteral("daemon-fwd"));
    QVERIFY2(hsm && radio && credential, "enrolling forwarders");
    m_hsm = *hsm;
    m_radio = *radio;
    m_forwarderCredential = *credential;

    restartStream(EventStreamEndpoint::Limits {});
}

void TestEventStreamEndpoint::restartStream(EventStreamEndpoint::Limits limits)
{
    m_server.reset();
    m_stream = std::make_unique<EventStreamEndpoint>(m_hub->core(), limits);
    m_server = std::make_unique<QWebSocketServer>(
        QStringLiteral("tst_eventstream"), QWebSocketServer::NonSecureMode);
    QVERIFY(m_server->listen(QHostAddress::LocalHost, 0));
    connect(m_server.get(), &QWebSocketServer::newConnection, this, [this] {
        while (QWebSocket *socket = m_server->nextPendingConnection())
            m_stream->handleSocket(std::make_unique<net::QtMessageSocket>(socket));
    });
    m_url = QUrl(QStringLiteral("ws://127.0.0.1:%1/api/events").arg(m_server->serverPort()));
}

void TestEventStreamEndpoint::cleanup()
{
    m_server.reset();
    m_stream.reset();
    m_hub.reset();
}

std::unique_ptr<Client> TestEventStreamEndpoint::subscribed(
    const QString &token, const QString &user)
{
    auto client = std::make_unique<Client>(m_url);
    // QTRY_* return from the function they are in: keep them in lambdas here.
    [&] {
        QTRY_COMPARE_WITH_TIMEOUT(client->socket.state(), QAbstractSocket::ConnectedState, 5000);
    }();
    client->send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), token } });
    [&] { QTRY_COMPARE_WITH_TIMEOUT(client->messages.size(), 1, 5000); }();
    if (client->messages.isEmpty())
        return client;
    const QJsonObject answer = client->messages.first();
    if (answer.value(QLatin1String("type")).toString() != QLatin1String("subscribed")
        || answer.value(QLatin1String("user")).toString() != user) {
        QTest::qFail(qPrintable(QStringLiteral("unexpected answer to subscribe: ")
                         + QString::fromUtf8(QJsonDocument(answer).toJson(QJsonDocument::Compact))),
            __FILE__, __LINE__);
        client->messages.clear();
    }
    return client;
}

// One event about P, one about Q, one about a forwarder (no project).
void TestEventStreamEndpoint::publishSample()
{
    EventBus &bus = m_hub->core().events();
    bus.publish(HubEvent { QStringLiteral("binding.created"),
        { { QStringLiteral("id"), 1 }, { QStringLiteral("project"), kP } }, m_p });
    bus.publish(HubEvent { QStringLiteral("request.filed"),
        { { QStringLiteral("id"), 2 }, { QStringLiteral("project"), kQ } }, m_q });
    bus.publish(HubEvent { QStringLiteral("forwarder.connected"),
        { { QStringLiteral("id"), m_hsm }, { QStringLiteral("name"), QStringLiteral("hsm") } },
        std::nullopt });
}

void TestEventStreamEndpoint::refusedSubscriptions_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("code");
    QTest::newRow("unknown API token")
        << QStringLiteral("unknown") << QStringLiteral("unauthorized");
    QTest::newRow("garbage") << QStringLiteral("garbage") << QStringLiteral("unauthorized");
    QTest::newRow("forwarder credential")
        << QStringLiteral("forwarder") << QStringLiteral("wrong_credential_type");
    QTest::newRow("not a subscribe message")
        << QStringLiteral("hello") << QStringLiteral("protocol_error");
    QTest::newRow("token not a string")
        << QStringLiteral("number") << QStringLiteral("protocol_error");
    QTest::newRow("not JSON") << QStringLiteral("text") << QStringLiteral("protocol_error");
    QTest::newRow("binary") << QStringLiteral("binary") << QStringLiteral("protocol_error");
    QTest::newRow("a user without a role")
        << QStringLiteral("nobody") << QStringLiteral("forbidden");
}

void TestEventStreamEndpoint::refusedSubscriptions()
{
    QFETCH(QString, kind);
    QFETCH(QString, code);

    Client client(m_url);
    QTRY_COMPARE_WITH_TIMEOUT(client.socket.state(), QAbstractSocket::ConnectedState, 5000);
    QJsonObject message { { QStringLiteral("type"), QStringLiteral("subscribe") } };
    if (kind == QLatin1String("unknown"))
        message.insert(QStringLiteral("token"), secrets::generate(secrets::SecretKind::ApiToken));
    else if (kind == QLatin1String("garbage"))
        message.insert(QStringLiteral("token"), QStringLiteral("let-me-in"));
    else if (kind == QLatin1String("forwarder"))
        message.insert(QStringLiteral("token"), m_forwarderCredential);
    else if (kind == QLatin1String("hello"))
        message = { { QStringLiteral("type"), QStringLiteral("hello") },
            { QStringLiteral("token"), m_tokens.value(QStringLiteral("admin")) } };
    else if (kind == QLatin1String("nobody"))
        message.insert(QStringLiteral("token"), m_tokens.value(QStringLiteral("nobody")));
    else
        message.insert(QStringLiteral("token"), 42);
    if (kind == QLatin1String("text"))
        client.sendRaw("subscribe me", false);
    else if (kind == QLatin1String("binary"))
        client.sendRaw(QByteArray("{\"type\":\"subscribe\"}"), true);
    else
        client.send(message);

    // An error, then the hub closes.
    QTRY_VERIFY_WITH_TIMEOUT(client.closed, 5000);
    QCOMPARE(client.messages.size(), 1);
    QCOMPARE(client.messages[0].value(QLatin1String("type")).toString(), QStringLiteral("error"));
    QCOMPARE(client.messages[0].value(QLatin1String("code")).toString(), code);
    QVERIFY(!client.messages[0].value(QLatin1String("message")).toString().isEmpty());
    QCOMPARE(client.socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QCOMPARE(m_stream->subscriberCount(), 0);
}

void TestEventStreamEndpoint::subscribedWithAValidToken()
{
    auto client = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));
    QCOMPARE(client->messages.size(), 1);
    QCOMPARE(m_stream->subscriberCount(), 1);
    QVERIFY(!client->closed);

    // Leaving is noticed.
    client->socket.close();
    QTRY_COMPARE_WITH_TIMEOUT(m_stream->subscriberCount(), 0, 5000);
}

void TestEventStreamEndpoint::nothingBeforeSubscribing()
{
    Client early(m_url);
    QTRY_COMPARE_WITH_TIMEOUT(early.socket.state(), QAbstractSocket::ConnectedState, 5000);
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    publishSample();
    QTRY_COMPARE_WITH_TIMEOUT(admin->events().size(), 3, 5000);
    QTest::qWait(50);
    QVERIFY(early.messages.isEmpty());
}

void TestEventStreamEndpoint::eventsReachOnlyThoseWhoMaySeeThem()
{
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    QCOMPARE(m_stream->subscriberCount(), 3);

    publishSample();

    // The hub administrator sees everything, in order.
    QTRY_COMPARE_WITH_TIMEOUT(admin->eventKeys(),
        (QStringList { QStringLiteral("binding.created:") + kP,
            QStringLiteral("request.filed:") + kQ, QStringLiteral("forwarder.connected:hsm") }),
        5000);
    // A project's members see its events and the forwarders', not another project's.
    QTRY_COMPARE_WITH_TIMEOUT(pmaint->eventKeys(),
        (QStringList {
            QStringLiteral("binding.created:") + kP, QStringLiteral("forwarder.connected:hsm") }),
        5000);
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->eventKeys(),
        (QStringList {
            QStringLiteral("request.filed:") + kQ, QStringLiteral("forwarder.connected:hsm") }),
        5000);
    // The messages have the documented shape.
    const QJsonObject first = admin->messages.value(1);
    QCOMPARE(first.value(QLatin1String("type")).toString(), QStringLiteral("event"));
    QCOMPARE(first.value(QLatin1String("event")).toString(), QStringLiteral("binding.created"));
    QVERIFY(QDateTime::fromString(first.value(QLatin1String("at")).toString(), Qt::ISODateWithMs)
                .isValid());
    QCOMPARE(first.value(QLatin1String("data")).toObject().value(QLatin1String("id")).toInt(), 1);
}

void TestEventStreamEndpoint::realChangesAreStreamed()
{
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));

    // A maintainer of P asks, an administrator of P approves; Q gets a binding;
    // a forwarder is enrolled.
    const QString adminToken = m_tokens.value(QStringLiteral("admin"));
    const ApiResponse filed = m_hub->post(QStringLiteral("/api/forwarders/%1/request").arg(m_hsm),
        m_tokens.value(QStringLiteral("pmaint")),
        { { QStringLiteral("project"), kP }, { QStringLiteral("reason"), QStringLiteral("run") } });
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    const ApiResponse approved
        = m_hub->post(QStringLiteral("/api/requests/%1/approve")
                          .arg(bodyOf(filed).value(QLatin1String("id")).toInteger()),
            m_tokens.value(QStringLiteral("padmin")));
    QVERIFY2(approved.status == 200, qPrintable(describe(approved)));
    const ApiResponse bound = m_hub->post(QStringLiteral("/api/forwarders/%1/bind").arg(m_radio),
        adminToken, { { QStringLiteral("project"), kQ } });
    QVERIFY2(bound.status == 201, qPrintable(describe(bound)));
    const ApiResponse enrolled = m_hub->post(QStringLiteral("/api/forwarders"), adminToken,
        { { QStringLiteral("name"), QStringLiteral("new-fwd") },
            { QStringLiteral("usb"), QStringLiteral("1050:0407") } });
    QVERIFY2(enrolled.status == 201, qPrintable(describe(enrolled)));

    const QStringList pEvents { QStringLiteral("request.filed:") + kP,
        QStringLiteral("request.decided:") + kP, QStringLiteral("binding.created:") + kP };
    const QString qEvent = QStringLiteral("binding.created:") + kQ;
    const QString enrolledEvent = QStringLiteral("forwarder.enrolled:new-fwd");
    QTRY_COMPARE_WITH_TIMEOUT(
        admin->eventKeys(), (pEvents + QStringList { qEvent, enrolledEvent }), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(pmaint->eventKeys(), (pEvents + QStringList { enrolledEvent }), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->eventKeys(), (QStringList { qEvent, enrolledEvent }), 5000);
}

void TestEventStreamEndpoint::rolesAreCheckedWhenTheEventHappens()
{
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    publishSample();
    QTRY_COMPARE_WITH_TIMEOUT(admin->events().size(), 3, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->events().size(), 2, 5000);

    // Given a role in P after subscribing, the same connection now gets P's
    // events too.
    QVERIFY(m_hub->grant(m_p, QStringLiteral("qmaint"), ProjectRole::Maintainer));
    publishSample();
    QTRY_COMPARE_WITH_TIMEOUT(admin->events().size(), 6, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->eventKeys(),
        (QStringList { QStringLiteral("request.filed:") + kQ,
            QStringLiteral("forwarder.connected:hsm"), QStringLiteral("binding.created:") + kP,
            QStringLiteral("request.filed:") + kQ, QStringLiteral("forwarder.connected:hsm") }),
        5000);
}

qint64 TestEventStreamEndpoint::tokenIdOf(const QString &user)
{
    auto principal = m_hub->core().tokens().authenticate(m_tokens.value(user));
    return principal ? principal->tokenId : 0;
}

void TestEventStreamEndpoint::revokedTokenEndsItsSubscription()
{
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    QCOMPARE(m_stream->subscriberCount(), 2);

    // When pmaint's token is revoked through the API
    const qint64 tokenId = tokenIdOf(QStringLiteral("pmaint"));
    QVERIFY(tokenId > 0);
    const ApiResponse revoked = m_hub->post(QStringLiteral("/api/tokens/%1/revoke").arg(tokenId),
        m_tokens.value(QStringLiteral("admin")));
    QVERIFY2(revoked.status == 200, qPrintable(describe(revoked)));

    // Then its subscription ends at once, with the reason, and nothing
    // published afterwards reaches it; the other subscription stays.
    QTRY_VERIFY_WITH_TIMEOUT(pmaint->closed, 1000);
    QCOMPARE(
        pmaint->messages.last().value(QLatin1String("type")).toString(), QStringLiteral("error"));
    QCOMPARE(pmaint->messages.last().value(QLatin1String("code")).toString(),
        QStringLiteral("unauthorized"));
    const int seen = pmaint->events().size();
    publishSample();
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->events().size(), 2, 5000);
    QCOMPARE(pmaint->events().size(), seen);
    QVERIFY(!qmaint->closed);
    QCOMPARE(m_stream->subscriberCount(), 1);
}

void TestEventStreamEndpoint::lastRoleGoneEndsTheSubscription()
{
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));

    // qmaint's only role is taken away through the API.
    const ApiResponse changed = m_hub->post(QStringLiteral("/api/projects/roles"),
        m_tokens.value(QStringLiteral("admin")),
        { { QStringLiteral("project"), kQ }, { QStringLiteral("user"), QStringLiteral("qmaint") },
            { QStringLiteral("role"), QStringLiteral("none") } });
    QVERIFY2(changed.status == 200, qPrintable(describe(changed)));

    QTRY_VERIFY_WITH_TIMEOUT(qmaint->closed, 1000);
    QCOMPARE(qmaint->messages.last().value(QLatin1String("code")).toString(),
        QStringLiteral("forbidden"));
    QVERIFY(!pmaint->closed);
    QCOMPARE(m_stream->subscriberCount(), 1);
}

void TestEventStreamEndpoint::changesMadeElsewhereAreFoundByTheRecheck()
{
    EventStreamEndpoint::Limits limits;
    limits.recheckInterval = std::chrono::milliseconds(200);
    restartStream(limits);
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));

    // Revoked straight in the store, as another process sharing the
    // database would: no event tells the stream.
    auto revoked = m_hub->core().stores().tokens.revoke(
        tokenIdOf(QStringLiteral("pmaint")), QStringLiteral("test"));
    QVERIFY2(revoked, qPrintable(failure(revoked)));
    QTRY_VERIFY_WITH_TIMEOUT(pmaint->closed, 1000);
    QCOMPARE(m_stream->subscriberCount(), 0);
}

void TestEventStreamEndpoint::eachUserHasACapOfTheirOwn()
{
    EventStreamEndpoint::Limits limits;
    limits.maxPerUser = 3;
    restartStream(limits);
    std::vector<std::unique_ptr<Client>> pmaints;
    for (int i = 0; i < 3; ++i)
        pmaints.push_back(
            subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint")));
    QCOMPARE(
        m_stream->subscriberCountOf(
            m_hub->core().tokens().authenticate(m_tokens.value(QStringLiteral("pmaint")))->userId),
        3);

    // A fourth of the same user is refused, and told why
    Client fourth(m_url);
    QTRY_COMPARE_WITH_TIMEOUT(fourth.socket.state(), QAbstractSocket::ConnectedState, 5000);
    fourth.send({ { QStringLiteral("type"), QStringLiteral("subscribe") },
        { QStringLiteral("token"), m_tokens.value(QStringLiteral("pmaint")) } });
    QTRY_VERIFY_WITH_TIMEOUT(fourth.closed, 5000);
    QCOMPARE(fourth.messages.value(0).value(QLatin1String("code")).toString(),
        QStringLiteral("too_many_subscriptions"));

    // while the first three stay and other users still get in.
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    QCOMPARE(m_stream->subscriberCount(), 5);
    for (const auto &client : pmaints)
        QVERIFY(!client->closed);
}

void TestEventStreamEndpoint::eventsAboutAUserReachOnlyThemAndAdministrators()
{
    auto admin = subscribed(m_tokens.value(QStringLiteral("admin")), QStringLiteral("admin"));
    auto pmaint = subscribed(m_tokens.value(QStringLiteral("pmaint")), QStringLiteral("pmaint"));
    auto qmaint = subscribed(m_tokens.value(QStringLiteral("qmaint")), QStringLiteral("qmaint"));
    const qint64 pmaintId
        = m_hub->core().tokens().authenticate(m_tokens.value(QStringLiteral("pmaint")))->userId;
    m_hub->core().events().publish(HubEvent { QStringLiteral("user.note"),
        { { QStringLiteral("name"), QStringLiteral("pmaint") } }, std::nullopt,
        QDateTime::currentDateTimeUtc(), pmaintId });
    publishSample();
    QTRY_COMPARE_WITH_TIMEOUT(admin->events().size(), 4, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(pmaint->events().size(), 3, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(qmaint->events().size(), 2, 5000);
    QCOMPARE(pmaint->events().first(), QStringLiteral("user.note"));
    QVERIFY(!qmaint->events().contains(QStringLiteral("user.note")));
}

QTEST_GUILESS_MAIN(TestEventStreamEndpoint)
#include "tst_eventstreamendpoint.moc"
