// Tests of the daemon's side of the tunnel (common/tunnel/tunnelclient.h)
// against an in-process fake hub: a QWebSocketServer on 127.0.0.1 with a
// development certificate made at test time (hub/tls/devcertificate.h) or a
// private CA made with the openssl command line. The fake hub records every
// text message, so "no secret before the pin is checked" is checked on what
// actually arrived. Nothing here dials an address other than 127.0.0.1.

#include "common/net/hubtls.h"
#include "common/net/qtmessagesocket.h"
#include "common/net/spkipin.h"
#include "common/protocol/controlmessage.h"
#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/tunneltestsupport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

using namespace std::chrono_literals;
using namespace cloop;
using cloop::testsupport::FakeHub;
using cloop::testsupport::TcpProxy;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;
using tunnel::TunnelClient;
using tunnel::TunnelClientOptions;
using tunnel::TunnelConnection;

namespace {

// Generous: every wait below ends on an event long before this on a healthy run.
constexpr int kEventTimeoutMs = 5000;
constexpr auto kInitialBackoff = 50ms;
constexpr auto kMaxBackoff = 200ms;
// Below every backoff draw ([25, 200] ms), so each wait tells which it was.
constexpr auto kNextUrlDelay = 20ms;

QString endpointPath()
{
    return QStringLiteral("/api/forwarders/connect");
}

QString software()
{
    return QStringLiteral("tst_tunnelclient/1");
}

TunnelClientOptions clientOptions(const QUrl &hubUrl, net::HubTrust trust)
{
    TunnelClientOptions options;
    options.hubUrls = { hubUrl };
    options.endpointPath = endpointPath();
    options.software = software();
    options.trust = std::move(trust);
    options.initialBackoff = kInitialBackoff;
    options.maxBackoff = kMaxBackoff;
    options.authenticationTimeout = 10s; // tests of the timeout set their own
    return options;
}

TunnelClientOptions clientOptions(const QList<QUrl> &hubUrls, net::HubTrust trust)
{
    TunnelClientOptions options = clientOptions(hubUrls.value(0), std::move(trust));
    options.hubUrls = hubUrls;
    options.nextUrlDelay = kNextUrlDelay;
    return options;
}

// A loopback URL nothing listens on: a port the kernel handed out and took
// back, so a dial there is refused at once.
QUrl deadUrl()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return {};
    return QUrl(QStringLiteral("wss://127.0.0.1:%1").arg(probe.serverPort()));
}

// The n-th backoff since the last welcome is drawn from [c/2, c], c =
// min(max, initial * 2^n).
bool isBackoff(qint64 waitMs, int n)
{
    const qint64 ceiling
        = std::min<qint64>(kMaxBackoff.count(), kInitialBackoff.count() << std::min(n, 20));
    return waitMs >= ceiling / 2 && waitMs <= ceiling;
}

// What a stopping hub sends each daemon: why, and over how long the
// daemons should spread their return; then its close.
void sendStopping(FakeHub &hub, int connection, qint64 withinMs)
{
    hub.send(hub.socket(connection),
        protocol::ErrorMessage { QStringLiteral("hub_stopping"),
            QStringLiteral("the hub is stopping"), false, withinMs });
    hub.socket(connection)
        ->close(QWebSocketProtocol::CloseCodeNormal, QStringLiteral("the hub is stopping"));
}

net::PinSet pinSetOf(const hub::TlsIdentity &identity)
{
    return net::PinSet::ofCertificate(identity.chain.first());
}

QJsonObject jsonOf(const QString &text)
{
    return QJsonDocument::fromJson(text.toUtf8()).object();
}

template <typename T> std::optional<T> hubMessage(const FakeHub &hub, int connection, int index)
{
    const auto message = hub.message(connection, index);
    if (!message)
        return std::nullopt;
    if (const T *typed = std::get_if<T>(&*message))
        return *typed;
    return std::nullopt;
}

// Everything a client emitted, typed and in order. It is the context of its
// connections, so it may die before or after the client.
class ClientLog final : public QObject
{
public:
    struct Disconnect
    {
        QString reason;
        qint64 retryInMs;
    };

    explicit ClientLog(TunnelClient *client)
    {
        connect(client, &TunnelClient::enrolled, this, [this](const protocol::Enrolled &e) {
            enrolled.append(e);
            events.append(QStringLiteral("enrolled"));
        });
        connect(client, &TunnelClient::ready, this, [this](const protocol::Welcome &w) {
            ready.append(w);
            events.append(QStringLiteral("ready"));
        });
        connect(client, &TunnelClient::disconnected, this,
            [this](const QString &reason, qint64 retryInMs) {
                disconnects.append(Disconnect { reason, retryInMs });
                events.append(QStringLiteral("disconnected"));
            });
        connect(client, &TunnelClient::refused, this, [this](const Error &error) {
            refusals.append(error);
            events.append(QStringLiteral("refused"));
        });
        connect(client, &TunnelClient::stateChanged, this,
            [this](TunnelClient::State state) { states.append(state); });
        connect(client, &TunnelClient::attemptStarted, this,
            [this](const QUrl &hubUrl) { attempts.append(hubUrl); });
    }

    QStringList events;
    QList<QUrl> attempts;
    QList<protocol::Enrolled> enrolled;
    QList<protocol::Welcome> ready;
    QList<Disconnect> disconnects;
    QList<Error> refusals;
    QList<TunnelClient::State> states;
};

// A loopback server that answers every upgrade request with `answer` and
// keeps whatever each client sent: what a daemon tells a server that
// does not upgrade as RFC 6455 asks.
class CannedAnswerServer final : public QObject
{
public:
    explicit CannedAnswerServer(QByteArray answer)
        : m_answer(std::move(answer))
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                const qsizetype index = received.size();
                received.append(QByteArray());
                connect(socket, &QTcpSocket::readyRead, this, [this, socket, index] {
                    QByteArray &bytes = received[index];
                    const bool answered = bytes.contains("\r\n\r\n");
                    bytes += socket->readAll();
                    if (!answered && bytes.contains("\r\n\r\n"))
                        socket->write(m_answer);
                });
            }
        });
    }

    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    QUrl url() const
    {
        return QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(m_server.serverPort()));
    }

    QList<QByteArray> received;

private:
    QTcpServer m_server;
    QByteArray m_answer;
};

} // namespace

class TestTunnelClient final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    // Trust
    void pinnedSelfSignedConnects();
    void wrongPinNeverSendsSecret();
    void noPinSelfSignedRefused();
    void pinnedButWrongHostNameRefused();
    void privateCaTrusted_data();
    void privateCaTrusted();

    // Authentication
    void redeemThenEnrolled();
    void permanentErrorStopsRetrying();
    void transientErrorRetriesWithBackoff_data();
    void transientErrorRetriesWithBackoff();
    void authenticationTimeout_data();
    void authenticationTimeout();
    void stalledHandshakeIsAbandoned();
    void stopEndsTheLoopAndStartResumes();

    // Liveness and transport
    void heartbeatDetectsDeadLink();
    void insecureRemoteUrlRefusedBeforeDialling();
    void insecurePlaintextRules_data();
    void insecurePlaintextRules();
    void plaintextLoopbackConnects();
    void aHostNameIsLookedUpAndEachAddressTried();
    void aRefusedUpgradeSaysWhyAndIsTriedAgain();
    void aForgedUpgradeNeverHearsTheCredential();
    void channelsOverRealTunnel();

    // Several hub URLs (the members of a hub cluster)
    void deadFirstUrlGivesWayToTheSecond();
    void nextRoundStartsWhereTheLastWelcomeCameFrom();
    void aStoppingHubSpreadsTheReturn();
    void permanentRefusalFromAnyUrlStops();
    void newUrlsAreDialledFromTheNextAttempt();
    void everyUrlIsCheckedBeforeDialling();

private:
    bool makeCaSignedIdentity(QString *problem);
    bool runOpenssl(const QStringList &arguments, QString *problem);

    QTemporaryDir m_dir;
    std::optional<hub::TlsIdentity> m_hubIdentity; // self-signed, 127.0.0.1 + localhost
    std::optional<hub::TlsIdentity> m_otherIdentity; // another key, same names
    std::optional<hub::TlsIdentity> m_wrongHostIdentity; // self-signed for hub.invalid only
    std::optional<hub::TlsIdentity> m_caSignedIdentity; // signed by m_ca, IP:127.0.0.1
    QList<QSslCertificate> m_ca;
    QString m_caProblem;
};

void TestTunnelClient::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    const QStringList loopbackNames { QStringLiteral("127.0.0.1"), QStringLiteral("localhost") };

    auto hubIdentity
        = testsupport::makeDevIdentity(m_dir.path(), QStringLiteral("hub"), loopbackNames);
    QVERIFY2(hubIdentity, qPrintable(hubIdentity.ok() ? QString() : hubIdentity.error().message));
    m_hubIdentity = *hubIdentity;
    auto otherIdentity
        = testsupport::makeDevIdentity(m_dir.path(), QStringLiteral("other"), loopbackNames);
    QVERIFY(otherIdentity);
    m_otherIdentity = *otherIdentity;
    auto wrongHost = testsupport::makeDevIdentity(
        m_dir.path(), QStringLiteral("wronghost"), { QStringLiteral("hub.invalid") });
    QVERIFY(wrongHost);
    m_wrongHostIdentity = *wrongHost;
    QVERIFY(m_hubIdentity->pin != m_otherIdentity->pin);

    if (!makeCaSignedIdentity(&m_caProblem))
        qWarning("private CA tests will be skipped: %s", qPrintable(m_caProblem));
}

bool TestTunnelClient::runOpenssl(const QStringList &arguments, QString *problem)
{
    QString program = qEnvironmentVariable("CLOOP_OPENSSL");
    if (program.isEmpty())
        program = QStandardPaths::findExecutable(QStringLiteral("openssl"));
    if (program.isEmpty()) {
        *problem = QStringLiteral("the openssl command line is not installed");
        return false;
    }
    QProcess process;
    process.setWorkingDirectory(m_dir.path());
    process.start(program, arguments);
    if (!process.waitForStarted() || !process.waitForFinished(60'000)
        || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        *problem = QStringLiteral("openssl %1 failed: %2 %3")
                       .arg(arguments.join(QLatin1Char(' ')), process.errorString(),
                           QString::fromLocal8Bit(process.readAllStandardError()));
        return false;
    }
    return true;
}

bool TestTunnelClient::makeCaSignedIdentity(QString *problem)
{
    // A CA, and a server certificate for IP:127.0.0.1 that it signs; the
    // server's certificate has no pin in these tests unless a row adds one.
    QFile extensions(m_dir.filePath(QStringLiteral("server.ext")));
    if (!extensions.open(QIODevice::WriteOnly)) {
        *problem = extensions.errorString();
        return false;
    }
    extensions.write("basicConstraints=critical,CA:FALSE\n"
                     "keyUsage=critical,digitalSignature\n"
                     "extendedKeyUsage=serverAuth\n"
                     "subjectAltName=IP:127.0.0.1\n");
    extensions.close();
    const QStringList ecKey { QStringLiteral("-newkey"), QStringLiteral("ec"),
        QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:P-256"),
        QStringLiteral("-nodes") };
    const bool made
        = runOpenssl(QStringList { QStringLiteral("req"), QStringLiteral("-x509") } + ecKey
                  + QStringList { QStringLiteral("-keyout"), QStringLiteral("ca.key"),
                      QStringLiteral("-out"), QStringLiteral("ca.pem"), QStringLiteral("-days"),
                      QStringLiteral("2"), QStringLiteral("-subj"),
                      QStringLiteral("/CN=cloop test CA"), QStringLiteral("-addext"),
                      QStringLiteral("basicConstraints=critical,CA:TRUE"),
                      QStringLiteral("-addext"),
                      QStringLiteral("keyUsage=critical,keyCertSign,cRLSign") },
              problem)
        && runOpenssl(QStringList { QStringLiteral("req"), QStringLiteral("-new") } + ecKey
                + QStringList { QStringLiteral("-keyout"), QStringLiteral("server.key"),
                    QStringLiteral("-out"), QStringLiteral("server.csr"), QStringLiteral("-subj"),
                    QStringLiteral("/CN=127.0.0.1") },
            problem)
        && runOpenssl({ QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"),
                          QStringLiteral("server.csr"), QStringLiteral("-CA"),
                          QStringLiteral("ca.pem"), QStringLiteral("-CAkey"),
                          QStringLiteral("ca.key"), QStringLiteral("-CAcreateserial"),
                          QStringLiteral("-sha256"), QStringLiteral("-days"), QStringLiteral("2"),
                          QStringLiteral("-extfile"), QStringLiteral("server.ext"),
                          QStringLiteral("-out"), QStringLiteral("server.pem") },
            problem);
    if (!made)
        return false;
    auto ca = net::HubTrust::loadAuthorities(m_dir.filePath(QStringLiteral("ca.pem")));
    auto identity = hub::TlsIdentity::load(
        m_dir.filePath(QStringLiteral("server.pem")), m_dir.filePath(QStringLiteral("server.key")));
    if (!ca || !identity) {
        *problem = !ca ? ca.error().message : identity.error().message;
        return false;
    }
    m_ca = *ca;
    m_caSignedIdentity = *identity;
    return true;
}

// --- Trust --------------------------------------------------------------------

void TestTunnelClient::pinnedSelfSignedConnects()
{
    // Given a hub with a self-signed certificate and a client pinned to its key,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);

    // when the client starts,
    client.start();

    // then it says hello with its credential on the forwarder endpoint, and
    // the hub's welcome makes it ready.
    QVERIFY(ready.wait(kEventTimeoutMs));
    QCOMPARE(client.state(), TunnelClient::State::Ready);
    QCOMPARE(log.ready.size(), 1);
    QCOMPARE(log.ready.first().id, FakeHub::welcome().id);
    QCOMPARE(log.ready.first().name, FakeHub::welcome().name);
    QVERIFY(log.disconnects.isEmpty());
    QCOMPARE(log.states,
        (QList<TunnelClient::State> { TunnelClient::State::Connecting,
            TunnelClient::State::Authenticating, TunnelClient::State::Ready }));

    QCOMPARE(hub.connectionCount(), 1);
    QCOMPARE(hub.requestPath(0), endpointPath());
    QCOMPARE(hub.texts(0).size(), 1);
    const QJsonObject hello = jsonOf(hub.texts(0).first());
    QCOMPARE(hello.value(QLatin1String("type")).toString(), QStringLiteral("hello"));
    QCOMPARE(hello.value(QLatin1String("credential")).toString(), QStringLiteral("cred-abc"));
    QCOMPARE(hello.value(QLatin1String("role")).toString(), QStringLiteral("forwarder"));
    QCOMPARE(hello.value(QLatin1String("protocol")).toInt(), cloop::protocol::kVersion);
    QCOMPARE(hello.value(QLatin1String("software")).toString(), software());
    QVERIFY(!hello.contains(QLatin1String("token")));
    QVERIFY(client.connection());
    QVERIFY(client.connection()->isOpen());
}

void TestTunnelClient::wrongPinNeverSendsSecret()
{
    // Given a client pinned to another key than the one the hub presents,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_otherIdentity), {})));
    client.setCredential(QStringLiteral("cred-must-not-leak"));
    ClientLog log(&client);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);

    // when it has tried several times (well over a second of retries at
    // 50..200 ms apart),
    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(disconnected.count() >= 6, 3 * kEventTimeoutMs);

    // then no attempt got past TLS, the hub never heard a word, every attempt
    // names both keys, and the client keeps trying.
    QCOMPARE(hub.connectionCount(), 0);
    QVERIFY(hub.allTexts().isEmpty());
    QVERIFY(log.ready.isEmpty());
    QVERIFY(log.refusals.isEmpty());
    QVERIFY(!log.states.contains(TunnelClient::State::Authenticating));
    QVERIFY(client.state() == TunnelClient::State::WaitingToRetry
        || client.state() == TunnelClient::State::Connecting);
    for (const auto &d : std::as_const(log.disconnects)) {
        QVERIFY2(d.reason.contains(QStringLiteral("expected ") + m_otherIdentity->pin),
            qPrintable(d.reason));
        QVERIFY2(d.reason.contains(QStringLiteral("presented ") + m_hubIdentity->pin),
            qPrintable(d.reason));
        QVERIFY(!d.reason.contains(QStringLiteral("cred-must-not-leak")));
    }
}

namespace {
// Dials `hub` with `trust` until two attempts have failed, and checks that
// no secret left: the hub saw no WebSocket and no message, and every attempt
// was refused as untrusted.
void expectUntrustedAndSilent(FakeHub &hub, const net::HubTrust &trust)
{
    TunnelClient client(clientOptions(hub.url(), trust));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);

    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(disconnected.count() >= 2, kEventTimeoutMs);

    QCOMPARE(hub.connectionCount(), 0);
    QVERIFY(hub.allTexts().isEmpty());
    QVERIFY(log.ready.isEmpty());
    for (const auto &d : std::as_const(log.disconnects))
        QVERIFY2(d.reason.contains(QStringLiteral("not trusted")), qPrintable(d.reason));
}
} // namespace

void TestTunnelClient::noPinSelfSignedRefused()
{
    // Given no pin and no CA, a self-signed hub is just an unknown server.
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    expectUntrustedAndSilent(hub, net::HubTrust(net::PinSet(), {}));
}

void TestTunnelClient::pinnedButWrongHostNameRefused()
{
    // A pin waives "no CA vouches for this key", never a certificate issued
    // for another host: the key matches, the name (hub.invalid) does not.
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_wrongHostIdentity));
    expectUntrustedAndSilent(hub, net::HubTrust(pinSetOf(*m_wrongHostIdentity), {}));
}

void TestTunnelClient::privateCaTrusted_data()
{
    QTest::addColumn<bool>("trustCa");
    QTest::addColumn<QString>("pin"); // "", "server" or "other"
    QTest::addColumn<bool>("expectReady");
    QTest::addColumn<bool>("expectWebSocket"); // did the hub get past TLS?
    QTest::addColumn<QString>("expectReason");

    QTest::newRow("CA trusted") << true << QString() << true << true << QString();
    QTest::newRow("CA trusted, server pinned")
        << true << QStringLiteral("server") << true << true << QString();
    // The pin is also checked when a CA vouched, and before any byte of
    // ours: not even the upgrade request reaches that server.
    QTest::newRow("CA trusted, other key pinned")
        << true << QStringLiteral("other") << false << false << QStringLiteral("expected ");
    QTest::newRow("CA not given") << false << QString() << false << false
                                  << QStringLiteral("not trusted");
}

void TestTunnelClient::privateCaTrusted()
{
    QFETCH(bool, trustCa);
    QFETCH(QString, pin);
    QFETCH(bool, expectReady);
    QFETCH(bool, expectWebSocket);
    QFETCH(QString, expectReason);
    if (!m_caSignedIdentity)
        QSKIP(qPrintable(m_caProblem));

    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_caSignedIdentity));
    net::PinSet pins;
    if (pin == QLatin1String("server"))
        pins = pinSetOf(*m_caSignedIdentity);
    else if (pin == QLatin1String("other"))
        pins = pinSetOf(*m_otherIdentity);
    TunnelClient client(
        clientOptions(hub.url(), net::HubTrust(pins, trustCa ? m_ca : QList<QSslCertificate>())));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);

    client.start();
    if (expectReady) {
        QVERIFY(ready.wait(kEventTimeoutMs));
        QCOMPARE(client.state(), TunnelClient::State::Ready);
        QCOMPARE(hub.texts(0).size(), 1);
        QCOMPARE(jsonOf(hub.texts(0).first()).value(QLatin1String("credential")).toString(),
            QStringLiteral("cred-abc"));
        return;
    }
    QTRY_VERIFY_WITH_TIMEOUT(disconnected.count() >= 2, kEventTimeoutMs);
    QVERIFY(log.ready.isEmpty());
    QVERIFY(hub.allTexts().isEmpty());
    QCOMPARE(hub.connectionCount() > 0, expectWebSocket);
    for (const auto &d : std::as_const(log.disconnects))
        QVERIFY2(d.reason.contains(expectReason), qPrintable(d.reason));
}

// --- Authentication ------------------------------------------------------------

void TestTunnelClient::redeemThenEnrolled()
{
    // Given a hub that trades the token for a credential once, then only
    // accepts that credential,
    const QString token = QStringLiteral("tok-0123456789");
    const QString credential = QStringLiteral("cred-from-hub");
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    hub.setResponder(
        [&](FakeHub &h, int, QWebSocket *socket, const protocol::ControlMessage &message) {
            if (const auto *redeem = std::get_if<protocol::Redeem>(&message)) {
                if (redeem->token != token) {
                    h.send(socket,
                        protocol::ErrorMessage {
                            QStringLiteral("token_unknown"), QStringLiteral("no"), true });
                    return;
                }
                h.send(socket, protocol::Enrolled { 7, QStringLiteral("bench-1"), credential });
                h.send(socket, FakeHub::welcome());
            } else if (const auto *hello = std::get_if<protocol::Hello>(&message)) {
                if (hello->credential == credential)
                    h.send(socket, FakeHub::welcome());
                else
                    h.send(socket,
                        protocol::ErrorMessage {
                            QStringLiteral("unknown_credential"), QStringLiteral("no"), true });
            }
        });
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setEnrollmentToken(token);
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);

    // when the client starts,
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));

    // then it redeemed the token, announced the credential before it was ready,
    const auto redeem = hubMessage<protocol::Redeem>(hub, 0, 0);
    QVERIFY2(redeem, qPrintable(hub.texts(0).join(QLatin1Char('\n'))));
    QCOMPARE(redeem->token, token);
    QCOMPARE(redeem->role, protocol::PeerRole::Forwarder);
    QCOMPARE(redeem->protocol, cloop::protocol::kVersion);
    QCOMPARE(log.events, (QStringList { QStringLiteral("enrolled"), QStringLiteral("ready") }));
    QCOMPARE(log.enrolled.first().credential, credential);
    QCOMPARE(log.enrolled.first().id, qint64(7));

    // and when the hub drops the link, it comes back saying hello with the
    // credential, not the spent token.
    QWebSocket *first = hub.socket(0);
    QVERIFY(first);
    first->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub restarting"));
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kEventTimeoutMs);
    QCOMPARE(hub.connectionCount(), 2);
    QCOMPARE(hub.texts(1).size(), 1);
    const auto hello = hubMessage<protocol::Hello>(hub, 1, 0);
    QVERIFY2(hello, qPrintable(hub.texts(1).first()));
    QCOMPARE(hello->credential, credential);
    QVERIFY(!hub.texts(1).first().contains(token));
    QCOMPARE(log.enrolled.size(), 1);
    QCOMPARE(log.disconnects.size(), 1);
    QVERIFY2(log.disconnects.first().reason.contains(QStringLiteral("hub restarting")),
        qPrintable(log.disconnects.first().reason));
}

void TestTunnelClient::permanentErrorStopsRetrying()
{
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    hub.setResponder(
        [](FakeHub &h, int, QWebSocket *socket, const protocol::ControlMessage &message) {
            if (std::holds_alternative<protocol::Hello>(message))
                h.send(socket,
                    protocol::ErrorMessage { QStringLiteral("revoked"),
                        QStringLiteral("this forwarder was revoked"), true });
        });
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-revoked"));
    ClientLog log(&client);
    QSignalSpy refused(&client, &TunnelClient::refused);
    QSignalSpy hubConnections(&hub, &FakeHub::clientConnected);
    QSignalSpy hubDisconnections(&hub, &FakeHub::clientDisconnected);

    client.start();
    QVERIFY(refused.wait(kEventTimeoutMs));
    QCOMPARE(log.refusals.size(), 1);
    QCOMPARE(log.refusals.first().code, QStringLiteral("revoked"));
    QCOMPARE(log.refusals.first().message, QStringLiteral("this forwarder was revoked"));
    QVERIFY(log.refusals.first().permanent);
    QCOMPARE(client.state(), TunnelClient::State::Stopped);
    // The client hung up; nothing else reaches the hub within a second (five
    // times the longest backoff).
    QTRY_COMPARE_WITH_TIMEOUT(hubDisconnections.count(), 1, kEventTimeoutMs);
    QVERIFY(!hubConnections.wait(1000));
    QCOMPARE(hub.connectionCount(), 1);
    QCOMPARE(log.refusals.size(), 1);
    QVERIFY(log.disconnects.isEmpty());
    QCOMPARE(log.states.last(), TunnelClient::State::Stopped);
    QCOMPARE(log.states.count(TunnelClient::State::Connecting), 1);
}

void TestTunnelClient::transientErrorRetriesWithBackoff_data()
{
    QTest::addColumn<bool>("closeInstead");
    QTest::addColumn<QString>("expectReason");
    QTest::newRow("transient error") << false << QStringLiteral("the hub is busy");
    QTest::newRow("hub closes") << true << QStringLiteral("hub restarting");
}

void TestTunnelClient::transientErrorRetriesWithBackoff()
{
    QFETCH(bool, closeInstead);
    QFETCH(QString, expectReason);

    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    hub.setResponder([closeInstead](FakeHub &h, int, QWebSocket *socket,
                         const protocol::ControlMessage &message) {
        if (!std::holds_alternative<protocol::Hello>(message))
            return;
        if (closeInstead)
            socket->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub restarting"));
        else
            h.send(socket,
                protocol::ErrorMessage {
                    QStringLiteral("busy"), QStringLiteral("the hub is busy"), false });
    });
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);

    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(
        hub.connectionCount() >= 3 && log.disconnects.size() >= 3, 2 * kEventTimeoutMs);

    QVERIFY(log.refusals.isEmpty());
    QVERIFY(log.ready.isEmpty());
    QVERIFY(log.states.contains(TunnelClient::State::WaitingToRetry));
    // Failed attempts do not reset the backoff: the n-th wait is drawn from
    // [c/2, c] with c = min(max, initial * 2^n), so always within [initial/2, max].
    for (int i = 0; i < log.disconnects.size(); ++i) {
        const auto &d = log.disconnects[i];
        QVERIFY2(d.reason.contains(expectReason), qPrintable(d.reason));
        const qint64 ceiling
            = std::min<qint64>(kMaxBackoff.count(), kInitialBackoff.count() << std::min(i, 20));
        QVERIFY2(d.retryInMs >= kInitialBackoff.count() / 2 && d.retryInMs <= kMaxBackoff.count(),
            qPrintable(QString::number(d.retryInMs)));
        QVERIFY2(d.retryInMs >= ceiling / 2 && d.retryInMs <= ceiling,
            qPrintable(QStringLiteral("attempt %1 waits %2 ms, expected %3..%4")
                           .arg(i)
                           .arg(d.retryInMs)
                           .arg(ceiling / 2)
                           .arg(ceiling)));
    }
}

void TestTunnelClient::authenticationTimeout_data()
{
    QTest::addColumn<bool>("withToken");
    QTest::addColumn<QString>("expectReason");
    QTest::newRow("hello") << false << QStringLiteral("did not answer the hello");
    QTest::newRow("redeem") << true << QStringLiteral("did not answer the enrollment");
}

void TestTunnelClient::authenticationTimeout()
{
    QFETCH(bool, withToken);
    QFETCH(QString, expectReason);

    // Given a hub that completes the WebSocket handshake but never answers,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    hub.setResponder({});
    auto options = clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {}));
    options.authenticationTimeout = 300ms;
    TunnelClient client(options);
    if (withToken)
        client.setEnrollmentToken(QStringLiteral("tok-abc"));
    else
        client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);
    QSignalSpy hubConnections(&hub, &FakeHub::clientConnected);

    client.start();
    QVERIFY(hubConnections.wait(kEventTimeoutMs));
    QElapsedTimer sinceConnected;
    sinceConnected.start();

    // then the client gives up on that attempt (well within 5 s) and retries.
    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY(sinceConnected.elapsed() < kEventTimeoutMs);
    const QString reason = log.disconnects.first().reason;
    QVERIFY2(reason.contains(expectReason), qPrintable(reason));
    QTRY_COMPARE_WITH_TIMEOUT(hub.texts(0).size(), 1, kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(hub.connectionCount() >= 2, kEventTimeoutMs);
    QVERIFY(log.ready.isEmpty());

    QVERIFY2(!reason.contains(QStringLiteral("within 0 s")), qPrintable(reason));
}

void TestTunnelClient::stalledHandshakeIsAbandoned()
{
    // Given something on the hub's address that accepts TCP and then stays
    // silent (a hung hub, a middlebox, a half-dead NAT), so neither TLS nor
    // the WebSocket upgrade ever completes,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TcpProxy proxy(hub.port());
    QVERIFY(proxy.listen());
    proxy.setBlackhole(true);
    QUrl url = hub.url();
    url.setPort(proxy.port());
    auto options = clientOptions(url, net::HubTrust(pinSetOf(*m_hubIdentity), {}));
    options.authenticationTimeout = 300ms;
    options.timing = tunnel::TunnelTiming { 100ms, 500ms };
    TunnelClient client(options);
    client.setCredential(QStringLiteral("cred-abc"));
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);
    QSignalSpy accepted(&proxy, &TcpProxy::accepted);

    client.start();
    QVERIFY(accepted.wait(kEventTimeoutMs));

    // then the attempt should be given up and retried, not wait forever: the
    // authentication timer and the heartbeat both start only once connected.
    const bool gaveUp = disconnected.wait(kEventTimeoutMs);
    QCOMPARE(hub.connectionCount(), 0);
    QVERIFY(gaveUp);
    QCOMPARE(client.state(), TunnelClient::State::WaitingToRetry);
}

void TestTunnelClient::stopEndsTheLoopAndStartResumes()
{
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    QSignalSpy hubConnections(&hub, &FakeHub::clientConnected);
    QSignalSpy hubDisconnections(&hub, &FakeHub::clientDisconnected);

    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));
    QPointer<QWebSocket> first = hub.socket(0);

    // stop() closes the link with a reason the hub sees, and does not retry.
    client.stop();
    QCOMPARE(client.state(), TunnelClient::State::Stopped);
    QVERIFY(hubDisconnections.wait(kEventTimeoutMs));
    QVERIFY(first);
    QCOMPARE(first->closeReason(), QStringLiteral("daemon stopping"));
    QVERIFY(!hubConnections.wait(600));
    QCOMPARE(hub.connectionCount(), 1);
    QVERIFY(log.disconnects.isEmpty());
    QVERIFY(log.refusals.isEmpty());

    // start() after stop() dials again.
    client.start();
    QCOMPARE(client.state(), TunnelClient::State::Connecting);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kEventTimeoutMs);
    QCOMPARE(hub.connectionCount(), 2);
}

// --- Liveness and transport -------------------------------------------------------

void TestTunnelClient::heartbeatDetectsDeadLink()
{
    // Given a ready client whose link runs through a proxy,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TcpProxy proxy(hub.port());
    QVERIFY(proxy.listen());
    QUrl url = hub.url();
    url.setPort(proxy.port());
    auto options = clientOptions(url, net::HubTrust(pinSetOf(*m_hubIdentity), {}));
    options.timing = tunnel::TunnelTiming { 100ms, 500ms };
    TunnelClient client(options);
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));

    // a healthy link stays up for twice the heartbeat timeout (pongs count),
    QVERIFY(!disconnected.wait(1000));

    // but when the proxy silently stops carrying bytes in both directions,
    // with both TCP connections still open,
    proxy.setBlackhole(true);
    QElapsedTimer sinceBlackhole;
    sinceBlackhole.start();

    // the client notices within 5 s and says why.
    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY(sinceBlackhole.elapsed() < kEventTimeoutMs);
    const QString reason = log.disconnects.first().reason;
    QVERIFY2(reason.contains(QStringLiteral("no sign of life")), qPrintable(reason));
    // The hub side never closed: it was the heartbeat, not a TCP close.
    QVERIFY(hub.socket(0));
    QCOMPARE(hub.socket(0)->state(), QAbstractSocket::ConnectedState);
    QVERIFY(proxy.droppedBytes() > 0); // the pings went into the hole
}

void TestTunnelClient::insecureRemoteUrlRefusedBeforeDialling()
{
    // Nothing may be dialled here: the refusal is synchronous, and every
    // check that could find an attempt under way comes before the event
    // loop runs (a failed check ends the test, and the client with it).
    const QUrl remote(QStringLiteral("ws://10.1.2.3:8080"));
    TunnelClient client(clientOptions(remote, net::HubTrust()));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);

    client.start();

    // Refused synchronously, before any socket exists.
    QVERIFY(log.attempts.isEmpty());
    QCOMPARE(log.refusals.size(), 1);
    QCOMPARE(log.refusals.first().code, QStringLiteral("insecure_url"));
    QVERIFY(log.refusals.first().permanent);
    QCOMPARE(client.state(), TunnelClient::State::Stopped);
    QVERIFY(!client.connection());
    QCOMPARE(log.states, QList<TunnelClient::State> { TunnelClient::State::Stopped });
    QTest::qWait(300);
    QVERIFY(log.attempts.isEmpty());
    QVERIFY(log.disconnects.isEmpty());
}

void TestTunnelClient::insecurePlaintextRules_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("allowInsecure");
    QTest::addColumn<QString>("expectError"); // empty: accepted
    QTest::addColumn<bool>("expectPlaintextRemote");

    QTest::newRow("ws remote") << QStringLiteral("ws://10.1.2.3:8080") << false
                               << QStringLiteral("insecure_url") << false;
    QTest::newRow("ws remote, flag")
        << QStringLiteral("ws://10.1.2.3:8080") << true << QString() << true;
    QTest::newRow("http remote, flag")
        << QStringLiteral("http://10.1.2.3:8080") << true << QString() << true;
    QTest::newRow("ws 127.0.0.1") << QStringLiteral("ws://127.0.0.1:8080") << false << QString()
                                  << false;
    QTest::newRow("ws name that starts like loopback")
        << QStringLiteral("ws://127.0.0.1.example.com") << false << QStringLiteral("insecure_url")
        << false;
    QTest::newRow("wss remote") << QStringLiteral("wss://10.1.2.3:8443") << false << QString()
                                << false;
}

void TestTunnelClient::insecurePlaintextRules()
{
    // Only net::checkHubUrl is asked about remote addresses; no client is
    // started towards them.
    QFETCH(QString, url);
    QFETCH(bool, allowInsecure);
    QFETCH(QString, expectError);
    QFETCH(bool, expectPlaintextRemote);

    const auto verdict = net::checkHubUrl(QUrl(url), allowInsecure);
    if (!expectError.isEmpty()) {
        QVERIFY(!verdict);
        QCOMPARE(verdict.error().code, expectError);
        QVERIFY(verdict.error().permanent);
        return;
    }
    QVERIFY2(verdict, qPrintable(verdict.ok() ? QString() : verdict.error().message));
    QCOMPARE(*verdict, expectPlaintextRemote);
}

void TestTunnelClient::plaintextLoopbackConnects()
{
    // ws:// to a loopback hub needs no insecure flag (hub and daemon on one machine).
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    QCOMPARE(hub.url().scheme(), QStringLiteral("ws"));
    auto options = clientOptions(hub.url(), net::HubTrust());
    QVERIFY(!options.allowInsecurePlaintext);
    TunnelClient client(options);
    client.setCredential(QStringLiteral("cred-abc"));
    QSignalSpy ready(&client, &TunnelClient::ready);

    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));
    QCOMPARE(client.state(), TunnelClient::State::Ready);
    const auto hello = hubMessage<protocol::Hello>(hub, 0, 0);
    QVERIFY(hello);
    QCOMPARE(hello->credential, QStringLiteral("cred-abc"));
}

void TestTunnelClient::aHostNameIsLookedUpAndEachAddressTried()
{
    // Given a hub on 127.0.0.1 alone, dialled as "localhost" (which may
    // name ::1 first, where nothing listens), with a certificate for that
    // name,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    QUrl url = hub.url();
    url.setHost(QStringLiteral("localhost"));
    TunnelClient client(clientOptions(url, net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    QSignalSpy ready(&client, &TunnelClient::ready);

    // then the name is looked up, an address that takes the connection is
    // found, the name matches the certificate, and the hello arrives.
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));
    const auto hello = hubMessage<protocol::Hello>(hub, 0, 0);
    QVERIFY(hello);
    QCOMPARE(hello->credential, QStringLiteral("cred-abc"));
}

void TestTunnelClient::aRefusedUpgradeSaysWhyAndIsTriedAgain()
{
    // Given a server that turns the upgrade down as a busy hub does,
    const QByteArray body = R"({"error":{"code":"starting","message":"the hub is starting"}})";
    CannedAnswerServer server("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 3\r\n"
                              "Content-Type: application/json\r\nContent-Length: "
        + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QVERIFY(server.listen());
    TunnelClient client(clientOptions(server.url(), net::HubTrust()));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);

    // then each attempt ends saying what the server said, and the daemon
    // keeps trying (a refusal of the upgrade is not one of the credential).
    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(disconnected.count() >= 2, kEventTimeoutMs);
    QVERIFY(log.refusals.isEmpty());
    for (const auto &d : std::as_const(log.disconnects)) {
        QVERIFY2(d.reason.contains(QStringLiteral("503 Service Unavailable: the hub is starting "
                                                  "(retry after 3 s)")),
            qPrintable(d.reason));
    }
    QVERIFY(server.received.size() >= 2);
    QVERIFY(server.received.first().startsWith("GET /api/forwarders/connect HTTP/1.1\r\n"));
}

void TestTunnelClient::aForgedUpgradeNeverHearsTheCredential()
{
    // Given a server that says 101 without having read our key (its accept
    // answers another),
    CannedAnswerServer server("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
    QVERIFY(server.listen());
    TunnelClient client(clientOptions(server.url(), net::HubTrust()));
    client.setCredential(QStringLiteral("cred-must-not-leak"));
    ClientLog log(&client);
    QSignalSpy disconnected(&client, &TunnelClient::disconnected);

    // then no WebSocket opens, the reason names the accept key, and the
    // server got the upgrade request and not a byte more.
    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(disconnected.count() >= 2, kEventTimeoutMs);
    QVERIFY(!log.states.contains(TunnelClient::State::Authenticating));
    for (const auto &d : std::as_const(log.disconnects))
        QVERIFY2(d.reason.contains(QStringLiteral("Sec-WebSocket-Accept")), qPrintable(d.reason));
    for (const QByteArray &bytes : std::as_const(server.received)) {
        QVERIFY(bytes.endsWith("\r\n\r\n"));
        QCOMPARE(bytes.count("\r\n\r\n"), 1);
        QVERIFY(!bytes.contains("cred-must-not-leak"));
    }
}

void TestTunnelClient::channelsOverRealTunnel()
{
    constexpr qsizetype kTotal = 8 * 1024 * 1024;
    constexpr qsizetype kWriteSize = 64 * 1024;
    QByteArray payload(kTotal, Qt::Uninitialized);
    {
        std::vector<quint32> words(static_cast<std::size_t>(kTotal / 4));
        QRandomGenerator(20240622).fillRange(words.data(), static_cast<qsizetype>(words.size()));
        std::memcpy(payload.data(), words.data(), static_cast<std::size_t>(kTotal));
    }
    QByteArray received;
    QPointer<Channel> daemonChannel;

    // Given a ready tunnel whose hub end is a TunnelConnection as well,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TunnelClient client(clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    QSignalSpy ready(&client, &TunnelClient::ready);
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));
    QVERIFY(hub.socket(0));
    // Takes the socket over from the server.
    auto hubConnection = std::make_unique<TunnelConnection>(
        new net::QtMessageSocket(hub.socket(0)), ChannelMultiplexer::Side::Hub);
    QVERIFY(client.connection());
    connect(client.connection()->channels(), &ChannelMultiplexer::channelRequested, &client,
        [&](Channel *channel) {
            daemonChannel = channel;
            connect(channel, &Channel::readyRead, channel,
                [&received, channel] { received += channel->readAll(); });
            channel->accept();
        });

    // when the hub opens a channel and streams 8 MiB honouring write()'s answer,
    auto opened = hubConnection->channels()->openChannel(
        QJsonObject { { QStringLiteral("purpose"), QStringLiteral("bulk") } });
    QVERIFY(opened);
    QPointer<Channel> hubChannel = *opened;
    QSignalSpy hubOpened(hubChannel.data(), &Channel::opened);
    QVERIFY(hubOpened.wait(kEventTimeoutMs));
    QVERIFY(daemonChannel);
    QCOMPARE(daemonChannel->metadata().value(QLatin1String("purpose")).toString(),
        QStringLiteral("bulk"));

    qsizetype offset = 0;
    auto pump = [&] {
        while (hubChannel && offset < kTotal) {
            const QByteArray chunk = payload.mid(offset, kWriteSize);
            if (!hubChannel->write(chunk))
                return; // writable() calls again
            offset += chunk.size();
        }
    };
    connect(hubChannel.data(), &Channel::writable, hubConnection.get(), pump);
    pump();

    // then every byte arrives, in order.
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), kTotal, 60'000);
    QCOMPARE(offset, kTotal);
    if (received != payload) {
        qsizetype at = 0;
        while (at < kTotal && received[at] == payload[at])
            ++at;
        QFAIL(qPrintable(QStringLiteral("first differing byte at %1").arg(at)));
    }
    QVERIFY(hubChannel);
    QVERIFY2(hubChannel->refusedWrites() > 0,
        "the writer never had to wait: flow control was not exercised");
    QCOMPARE(hubChannel->bytesWritten(), quint64(kTotal));
    QCOMPARE(daemonChannel->bytesReceived(), quint64(kTotal));
    QCOMPARE(client.state(), TunnelClient::State::Ready);
}

// --- Several hub URLs -----------------------------------------------------------

void TestTunnelClient::deadFirstUrlGivesWayToTheSecond()
{
    // Given a first hub URL nothing listens on and a live hub at the second,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    const QUrl dead = deadUrl();
    QVERIFY(dead.isValid());
    TunnelClient client(
        clientOptions({ dead, hub.url() }, net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);

    // when the client starts,
    client.start();

    // then it tries the dead URL, moves on after the short pause (not a
    // backoff), and is welcomed by the second.
    QVERIFY(ready.wait(kEventTimeoutMs));
    QCOMPARE(log.attempts, (QList<QUrl> { dead, hub.url() }));
    QCOMPARE(log.disconnects.size(), 1);
    QCOMPARE(log.disconnects.first().retryInMs, qint64(kNextUrlDelay.count()));
    QCOMPARE(client.currentUrl(), hub.url());
    QCOMPARE(client.state(), TunnelClient::State::Ready);
    QCOMPARE(hub.connectionCount(), 1);
    QVERIFY(log.refusals.isEmpty());
}

void TestTunnelClient::nextRoundStartsWhereTheLastWelcomeCameFrom()
{
    // Given a client welcomed by the second of two URLs (the first is dead),
    // and a hub that, once it dropped the session, turns the next two hellos
    // away as busy (a member coming back) before it welcomes again,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    int hellos = 0;
    hub.setResponder(
        [&hellos](FakeHub &h, int, QWebSocket *socket, const protocol::ControlMessage &message) {
            if (!std::holds_alternative<protocol::Hello>(message))
                return;
            ++hellos;
            if (hellos == 2 || hellos == 3)
                h.send(socket,
                    protocol::ErrorMessage {
                        QStringLiteral("busy"), QStringLiteral("the hub is starting"), false });
            else
                h.send(socket, FakeHub::welcome());
        });
    const QUrl dead = deadUrl();
    QVERIFY(dead.isValid());
    TunnelClient client(
        clientOptions({ dead, hub.url() }, net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));

    // when the hub drops the session,
    QVERIFY(hub.socket(0));
    hub.socket(0)->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub restarting"));

    // then every round starts with the URL that last welcomed the client,
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kEventTimeoutMs);
    QCOMPARE(log.attempts,
        (QList<QUrl> { dead, hub.url(), hub.url(), dead, hub.url(), dead, hub.url() }));
    QCOMPARE(hellos, 4);
    // and the waits are: the short pause within a round, the backoff
    // between rounds, growing from the welcome on (which reset it).
    QCOMPARE(log.disconnects.size(), 6);
    const auto waited = [&log](int i) { return log.disconnects.at(i).retryInMs; };
    QCOMPARE(waited(0), qint64(kNextUrlDelay.count())); // dead, then the second URL
    QVERIFY2(isBackoff(waited(1), 0), qPrintable(QString::number(waited(1)))); // session lost
    QCOMPARE(waited(2), qint64(kNextUrlDelay.count())); // busy, then the dead URL
    QVERIFY2(isBackoff(waited(3), 1), qPrintable(QString::number(waited(3)))); // round over
    QCOMPARE(waited(4), qint64(kNextUrlDelay.count()));
    QVERIFY2(isBackoff(waited(5), 2), qPrintable(QString::number(waited(5))));
    QVERIFY2(log.disconnects.at(1).reason.contains(QStringLiteral("hub restarting")),
        qPrintable(log.disconnects.at(1).reason));
    QVERIFY2(log.disconnects.at(2).reason.contains(QStringLiteral("the hub is starting")),
        qPrintable(log.disconnects.at(2).reason));
}

void TestTunnelClient::aStoppingHubSpreadsTheReturn()
{
    // Given a client welcomed by a hub (its default answer to a hello),
    // its jitter fixed at the middle,
    FakeHub hub;
    QVERIFY(hub.listenSecure(*m_hubIdentity));
    TunnelClientOptions options
        = clientOptions(hub.url(), net::HubTrust(pinSetOf(*m_hubIdentity), {}));
    options.maxBackoff = 10s;
    options.backoffRandom = [] { return 0.5; };
    TunnelClient client(options);
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));

    // when the hub stops, asking its daemons to spread their return over 2 s,
    QVERIFY(hub.socket(0));
    sendStopping(hub, 0, 2000);

    // then the client waits half of that window (its jitter), not the
    // 25..50 ms its own backoff would draw,
    QTRY_COMPARE_WITH_TIMEOUT(log.disconnects.size(), 1, kEventTimeoutMs);
    QCOMPARE(log.disconnects.at(0).retryInMs, qint64(1000));
    QVERIFY2(log.disconnects.at(0).reason.contains(QStringLiteral("the hub is stopping")),
        qPrintable(log.disconnects.at(0).reason));
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kEventTimeoutMs);

    // and a later loss without a window is its own backoff again.
    QVERIFY(hub.socket(1));
    hub.socket(1)->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub restarting"));
    QTRY_COMPARE_WITH_TIMEOUT(log.disconnects.size(), 2, kEventTimeoutMs);
    QCOMPARE(log.disconnects.at(1).retryInMs, qint64(37)); // the middle of [25, 50]

    // A window longer than the client's ceiling is the ceiling.
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 3, kEventTimeoutMs);
    QVERIFY(hub.socket(2));
    sendStopping(hub, 2, protocol::kMaxRetryWithinMs);
    QTRY_COMPARE_WITH_TIMEOUT(log.disconnects.size(), 3, kEventTimeoutMs);
    QCOMPARE(log.disconnects.at(2).retryInMs, qint64(5000));
    QVERIFY(log.refusals.isEmpty());
}

void TestTunnelClient::permanentRefusalFromAnyUrlStops()
{
    // Given three URLs: a dead one, a hub that says the credential is
    // revoked, and a hub that would welcome it,
    FakeHub revoking;
    QVERIFY(revoking.listenSecure(*m_hubIdentity));
    revoking.setResponder(
        [](FakeHub &h, int, QWebSocket *socket, const protocol::ControlMessage &message) {
            if (std::holds_alternative<protocol::Hello>(message))
                h.send(socket,
                    protocol::ErrorMessage { QStringLiteral("revoked"),
                        QStringLiteral("this forwarder was revoked"), true });
        });
    FakeHub welcoming;
    QVERIFY(welcoming.listenSecure(*m_hubIdentity));
    const QUrl dead = deadUrl();
    QVERIFY(dead.isValid());
    TunnelClient client(clientOptions(
        { dead, revoking.url(), welcoming.url() }, net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-revoked"));
    ClientLog log(&client);
    QSignalSpy refused(&client, &TunnelClient::refused);
    QSignalSpy attempts(&client, &TunnelClient::attemptStarted);

    client.start();

    // then the refusal stops the loop: the third URL is never tried.
    QVERIFY(refused.wait(kEventTimeoutMs));
    QCOMPARE(log.refusals.size(), 1);
    QCOMPARE(log.refusals.first().code, QStringLiteral("revoked"));
    QCOMPARE(client.state(), TunnelClient::State::Stopped);
    QCOMPARE(log.attempts, (QList<QUrl> { dead, revoking.url() }));
    // Nothing follows within 25 times the pause and twice the longest backoff.
    QVERIFY(!attempts.wait(500));
    QCOMPARE(welcoming.connectionCount(), 0);
    QCOMPARE(revoking.connectionCount(), 1);
    QVERIFY(log.ready.isEmpty());
}

void TestTunnelClient::newUrlsAreDialledFromTheNextAttempt()
{
    // Given a client welcomed at its one URL,
    FakeHub first;
    QVERIFY(first.listenSecure(*m_hubIdentity));
    FakeHub second;
    QVERIFY(second.listenSecure(*m_hubIdentity));
    TunnelClient client(
        clientOptions(QList<QUrl> { first.url() }, net::HubTrust(pinSetOf(*m_hubIdentity), {})));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);
    QSignalSpy ready(&client, &TunnelClient::ready);
    client.start();
    QVERIFY(ready.wait(kEventTimeoutMs));

    // when it is told other URLs while connected (the hub's cluster changed)
    // and the session then ends,
    const QUrl dead = deadUrl();
    QVERIFY(dead.isValid());
    client.setHubUrls({ dead, second.url() });
    QCOMPARE(client.options().hubUrls, (QList<QUrl> { dead, second.url() }));
    QVERIFY(first.socket(0));
    first.socket(0)->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub leaving"));

    // then the next attempts go to the new URLs, in their order.
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, kEventTimeoutMs);
    QCOMPARE(log.attempts, (QList<QUrl> { first.url(), dead, second.url() }));
    QCOMPARE(first.connectionCount(), 1);
    QCOMPARE(second.connectionCount(), 1);
    QCOMPARE(client.currentUrl(), second.url());
}

void TestTunnelClient::everyUrlIsCheckedBeforeDialling()
{
    // Given a loopback hub first and a plaintext URL to another host second,
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    TunnelClient client(
        clientOptions({ hub.url(), QUrl(QStringLiteral("ws://10.1.2.3:8080")) }, net::HubTrust()));
    client.setCredential(QStringLiteral("cred-abc"));
    ClientLog log(&client);

    client.start();

    // then the client refuses before dialling either.
    QCOMPARE(log.refusals.size(), 1);
    QCOMPARE(log.refusals.first().code, QStringLiteral("insecure_url"));
    QVERIFY2(log.refusals.first().message.contains(QStringLiteral("10.1.2.3")),
        qPrintable(log.refusals.first().message));
    QCOMPARE(client.state(), TunnelClient::State::Stopped);
    QVERIFY(log.attempts.isEmpty());
    QVERIFY(!client.connection());

    // And a client with no URL at all is refused for good as well.
    TunnelClient none(clientOptions(QList<QUrl> {}, net::HubTrust()));
    none.setCredential(QStringLiteral("cred-abc"));
    ClientLog noneLog(&none);
    none.start();
    QCOMPARE(noneLog.refusals.size(), 1);
    QVERIFY(noneLog.refusals.first().permanent);
    QCOMPARE(none.state(), TunnelClient::State::Stopped);
}

QTEST_GUILESS_MAIN(TestTunnelClient)
#include "tst_tunnelclient.moc"
