// Integration: the hub's event stream over its real TLS port. A dashboard
// subscribes on wss://HUB/api/events with an API token and then hears, as
// they happen, that a forwarder was enrolled, connected and revoked.

#include "support/testrig.h"

#include "common/net/hubtls.h"
#include "common/net/spkipin.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

using namespace cloop;
using namespace cloop::testing;

namespace {

// A pinned WebSocket to the hub, collecting every message it receives.
class EventClient
{
public:
    explicit EventClient(const HubProcess &hub)
        : m_trust(*net::PinSet::parse(hub.pin()), {})
    {
        m_socket.setSslConfiguration(m_trust.configuration());
        QObject::connect(&m_socket, &QWebSocket::sslErrors, &m_socket, [this](const QList<QSslError> &errors) {
            auto verdict = m_trust.judge(errors, m_socket.sslConfiguration().peerCertificate());
            if (verdict)
                m_socket.ignoreSslErrors(*verdict);
        });
        QObject::connect(&m_socket, &QWebSocket::textMessageReceived, &m_socket,
                         [this](const QString &text) { messages.append(QJsonDocument::fromJson(text.toUtf8()).object()); });
        QUrl url = hub.apiUrl(QStringLiteral("/api/events"));
        url.setScheme(QStringLiteral("wss"));
        m_socket.open(url);
    }

    bool waitConnected() { return QTest::qWaitFor([this] { return m_socket.state() == QAbstractSocket::ConnectedState; }, kLongWaitMs); }
    void send(const QJsonObject &message) { m_socket.sendTextMessage(QString::fromUtf8(QJsonDocument(message).toJson())); }
    bool waitFor(const QString &type, const QString &event = {})
    {
        return QTest::qWaitFor([&] { return indexOf(type, event) >= 0; }, kLongWaitMs);
    }
    qsizetype indexOf(const QString &type, const QString &event = {}) const
    {
        for (qsizetype i = 0; i < messages.size(); ++i) {
            if (messages[i].value(QLatin1String("type")).toString() == type
                && (event.isEmpty() || messages[i].value(QLatin1String("event")).toString() == event))
                return i;
        }
        return -1;
    }
    QAbstractSocket::SocketState state() const { return m_socket.state(); }

    QList<QJsonObject> messages;

private:
    net::HubTrust m_trust;
    QWebSocket m_socket;
};

} // namespace

class TestEventStream final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void wrongTokenIsRefusedAndClosed();
    void subscriberHearsForwarderLifecycle();

private:
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
    client.send({{QStringLiteral("type"), QStringLiteral("subscribe")},
                 {QStringLiteral("token"), QStringLiteral("cfc_notanapitoken")}});
    QVERIFY(client.waitFor(QStringLiteral("error")));
    const QJsonObject error = client.messages.at(client.indexOf(QStringLiteral("error")));
    QCOMPARE(error.value(QLatin1String("code")).toString(), QStringLiteral("wrong_credential_type"));
    QVERIFY(QTest::qWaitFor([&] { return client.state() == QAbstractSocket::UnconnectedState; }, kLongWaitMs));
    QCOMPARE(client.indexOf(QStringLiteral("subscribed")), -1);
}

void TestEventStream::subscriberHearsForwarderLifecycle()
{
    HubProcess &hub = m_rig->hub();
    EventClient client(hub);
    QVERIFY(client.waitConnected());
    client.send({{QStringLiteral("type"), QStringLiteral("subscribe")}, {QStringLiteral("token"), hub.adminToken()}});
    QVERIFY(client.waitFor(QStringLiteral("subscribed")));

    // When a forwarder is enrolled and connects,
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("watched"), forwarder), qPrintable(m_rig->lastError()));
    // then the subscriber heard both, in that order, about that forwarder.
    QVERIFY(client.waitFor(QStringLiteral("event"), QStringLiteral("forwarder.connected")));
    const qsizetype enrolled = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.enrolled"));
    const qsizetype connected = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.connected"));
    QVERIFY(enrolled >= 0 && enrolled < connected);
    const QJsonObject data = client.messages.at(connected).value(QLatin1String("data")).toObject();
    QCOMPARE(data.value(QLatin1String("id")).toInteger(), forwarder.enrollment.id);
    QCOMPARE(data.value(QLatin1String("name")).toString(), QStringLiteral("watched"));

    // When it is revoked, the revocation and the dropped session follow.
    const CliResult revoked = hub.cli({QStringLiteral("forward"), QStringLiteral("revoke"),
                                       QString::number(forwarder.enrollment.id), QStringLiteral("--reason"),
                                       QStringLiteral("bench returned")});
    CLOOP_COMPARE_EXIT(revoked, 0);
    QVERIFY(client.waitFor(QStringLiteral("event"), QStringLiteral("forwarder.disconnected")));
    const qsizetype revokedAt = client.indexOf(QStringLiteral("event"), QStringLiteral("forwarder.revoked"));
    QVERIFY(revokedAt > connected);
    QCOMPARE(client.messages.at(revokedAt).value(QLatin1String("data")).toObject().value(QLatin1String("reason")).toString(),
             QStringLiteral("bench returned"));
}

QTEST_GUILESS_MAIN(TestEventStream)
#include "tst_eventstream.moc"
