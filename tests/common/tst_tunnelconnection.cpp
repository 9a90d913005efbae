// Tests of one tunnel over one real WebSocket (common/tunnel/tunnelconnection.h)
// on loopback: the daemon end is a TunnelConnection around a QWebSocket the
// test dials, the hub end is the fake hub's raw socket, so each test decides
// exactly what the peer sends. The promise under test is "exactly one
// disconnected() however the link ends", plus what goes back to a peer that
// sends garbage.

#include "common/net/qtmessagesocket.h"
#include "common/protocol/channelframe.h"
#include "common/protocol/controlmessage.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/tunneltestsupport.h"

#include "common/util/epolleventdispatcher.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QWebSocket>

#include <chrono>
#include <memory>
#include <thread>

using namespace std::chrono_literals;
using namespace cloop;
using cloop::testsupport::FakeHub;
using cloop::testsupport::TcpProxy;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;
using tunnel::TunnelConnection;

namespace {

// Qt's socket as the tunnel takes it (the connection owns both).
net::MessageSocket *wrapped(QWebSocket *socket)
{
    return new net::QtMessageSocket(socket);
}

constexpr int kEventTimeoutMs = 5000;
// After the one disconnected(), how long a second one gets to show up.
constexpr int kQuietMs = 300;

QUrl endpoint(QUrl url)
{
    url.setPath(QStringLiteral("/api/forwarders/connect"));
    return url;
}

} // namespace

class TestTunnelConnection final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void peerCloseEndsTunnelOnce();
    void refusedDialEndsTunnelOnce();
    void abortBeforeDialEndsTunnelOnce();
    void malformedControlIsAnsweredNotFatal();
    void garbageBinaryFrameDropsTunnel();
    void oversizedMessageDropsTunnel();
    void closeWithErrorSendsErrorThenCloses();
    void closeGivesUpOnSilentPeer();
    void silentLinkCarryingChannelsIsDroppedAtTheWatchfulPace();
    void silentIdleLinkIsDroppedAtItsOwnPace();
    void aSilenceBegunUnderAChannelIsJudgedWatchfullyAfterItEnds();
    void aLoopThatWasItselfBusyDoesNotBlameThePeer();
    void theHubPingsOnlyWhenTheDaemonFallsQuiet();
    void aLegIsWatchedWhateverItsSessionsPace();
    void deletingConnectionClosesChannels();
    void aConnectionMovedToAnotherThreadWorksWholeThere();

private:
    // Dials `url` with a daemon-side TunnelConnection; null on failure.
    std::unique_ptr<TunnelConnection> dial(const QUrl &url, tunnel::TunnelTiming timing = {});
    // The same at the scaled-down heartbeat pace, beating.
    std::unique_ptr<TunnelConnection> dialWithHeartbeat(const QUrl &url);
};

std::unique_ptr<TunnelConnection> TestTunnelConnection::dial(
    const QUrl &url, tunnel::TunnelTiming timing)
{
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest);
    auto connection = std::make_unique<TunnelConnection>(
        wrapped(socket), ChannelMultiplexer::Side::Daemon, ChannelMultiplexer::Limits {}, timing);
    QSignalSpy connected(socket, &QWebSocket::connected);
    socket->open(endpoint(url));
    if (!connected.wait(kEventTimeoutMs))
        return nullptr;
    return connection;
}

void TestTunnelConnection::peerCloseEndsTunnelOnce()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);

    // An open channel learns that the link is gone.
    auto opened = connection->channels()->openChannel(QJsonObject {});
    QVERIFY(opened);
    QPointer<Channel> channel = *opened;
    QList<protocol::CloseCode> channelClosed;
    connect(channel.data(), &Channel::closed, this,
        [&channelClosed](
            protocol::CloseCode code, const QString &) { channelClosed.append(code); });

    hub.socket(0)->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("hub restarting"));

    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QCOMPARE(disconnected.first().first().toString(), QStringLiteral("hub restarting"));
    QVERIFY(!connection->isOpen());
    QCOMPARE(channelClosed, QList<protocol::CloseCode> { protocol::CloseCode::ConnectionLost });
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);
}

void TestTunnelConnection::refusedDialEndsTunnelOnce()
{
    // A loopback port that nobody listens on (any more).
    quint16 closedPort = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        closedPort = probe.serverPort();
    }
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest);
    TunnelConnection connection(wrapped(socket), ChannelMultiplexer::Side::Daemon);
    QSignalSpy disconnected(&connection, &TunnelConnection::disconnected);
    QUrl url;
    url.setScheme(QStringLiteral("ws"));
    url.setHost(QStringLiteral("127.0.0.1"));
    url.setPort(closedPort);
    socket->open(endpoint(url));

    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY(!disconnected.first().first().toString().isEmpty());
    QVERIFY(!connection.isOpen());
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);
}

void TestTunnelConnection::abortBeforeDialEndsTunnelOnce()
{
    TunnelConnection connection(
        wrapped(new QWebSocket(QString(), QWebSocketProtocol::VersionLatest)),
        ChannelMultiplexer::Side::Daemon);
    QSignalSpy disconnected(&connection, &TunnelConnection::disconnected);

    connection.abort(QStringLiteral("shutting down"));

    QCOMPARE(disconnected.count(), 1);
    QCOMPARE(disconnected.first().first().toString(), QStringLiteral("shutting down"));
    QVERIFY(!connection.isOpen());
    connection.abort(QStringLiteral("again"));
    connection.close(QStringLiteral("and again"));
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);
}

void TestTunnelConnection::malformedControlIsAnsweredNotFatal()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    hub.setResponder({});
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    QSignalSpy hubText(&hub, &FakeHub::textReceived);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QSignalSpy control(connection.get(), &TunnelConnection::controlReceived);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);

    // Garbage gets a non-permanent protocol error back,
    hub.socket(0)->sendTextMessage(QStringLiteral("{not json"));
    QVERIFY(hubText.wait(kEventTimeoutMs));
    const auto answer = hub.message(0, 0);
    QVERIFY2(answer, qPrintable(hub.texts(0).value(0)));
    const auto *error = std::get_if<protocol::ErrorMessage>(&*answer);
    QVERIFY(error);
    QCOMPARE(error->code, QStringLiteral("protocol_error"));
    QVERIFY(!error->permanent);
    QCOMPARE(control.count(), 0);

    // and the tunnel carries on.
    hub.send(hub.socket(0), FakeHub::welcome());
    QVERIFY(control.wait(kEventTimeoutMs));
    QVERIFY(connection->isOpen());
    QCOMPARE(disconnected.count(), 0);
}

void TestTunnelConnection::garbageBinaryFrameDropsTunnel()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    hub.setResponder({});
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    QSignalSpy hubText(&hub, &FakeHub::textReceived);
    QSignalSpy hubDisconnected(&hub, &FakeHub::clientDisconnected);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);

    // A frame for a channel the hub may not open (odd ids are the daemon's)
    // is a protocol violation: the whole tunnel goes.
    const QByteArray violation
        = protocol::encodeFrame(protocol::ChannelFrame::open(1, 4096, QByteArrayLiteral("{}")));
    hub.socket(0)->sendBinaryMessage(violation);

    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY(!connection->isOpen());
    QVERIFY(hubDisconnected.count() == 1 || hubDisconnected.wait(kEventTimeoutMs));
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);

    // onBinary() means to tell the peer why (sendControl(error), then abort()).
    QCOMPARE(hub.texts(0).size(), 1);
    const auto told = hub.message(0, 0);
    QVERIFY(told && std::holds_alternative<protocol::ErrorMessage>(*told));
}

void TestTunnelConnection::oversizedMessageDropsTunnel()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    QSignalSpy control(connection.get(), &TunnelConnection::controlReceived);

    // Far beyond both the largest channel frame and the largest control message.
    hub.socket(0)->sendBinaryMessage(QByteArray(4 * 1024 * 1024, 'x'));

    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY(!disconnected.first().first().toString().isEmpty());
    QCOMPARE(control.count(), 0);
    QCOMPARE(disconnected.count(), 1);
}

void TestTunnelConnection::closeWithErrorSendsErrorThenCloses()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    hub.setResponder({});
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    QSignalSpy hubDisconnected(&hub, &FakeHub::clientDisconnected);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QPointer<QWebSocket> hubSocket = hub.socket(0);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);

    connection->closeWithError(protocol::ErrorMessage {
        QStringLiteral("going_away"), QStringLiteral("daemon shutting down"), false });

    QVERIFY(hubDisconnected.wait(kEventTimeoutMs));
    QCOMPARE(hub.texts(0).size(), 1);
    const auto told = hub.message(0, 0);
    QVERIFY(told);
    const auto *error = std::get_if<protocol::ErrorMessage>(&*told);
    QVERIFY(error);
    QCOMPARE(error->code, QStringLiteral("going_away"));
    QVERIFY(hubSocket);
    QCOMPARE(hubSocket->closeCode(), QWebSocketProtocol::CloseCodeNormal);
    QCOMPARE(hubSocket->closeReason(), QStringLiteral("daemon shutting down"));

    QVERIFY(disconnected.count() == 1 || disconnected.wait(kEventTimeoutMs));
    QCOMPARE(disconnected.first().first().toString(), QStringLiteral("daemon shutting down"));
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);
}

void TestTunnelConnection::closeGivesUpOnSilentPeer()
{
    // A peer that never answers the close handshake (here: a link that went
    // silent) must not keep the tunnel half-closed.
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    TcpProxy proxy(hub.port());
    QVERIFY(proxy.listen());
    QUrl url = hub.url();
    url.setPort(proxy.port());
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    auto connection = dial(url);
    QVERIFY(connection);
    QVERIFY(hubConnected.count() == 1 || hubConnected.wait(kEventTimeoutMs));
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    proxy.setBlackhole(true);

    connection->close(QStringLiteral("daemon stopping"));

    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QCOMPARE(disconnected.first().first().toString(), QStringLiteral("daemon stopping"));
    QVERIFY(!connection->isOpen());
    QVERIFY(!disconnected.wait(kQuietMs));
    QCOMPARE(disconnected.count(), 1);
}

namespace {

// A fake hub reached through a proxy that can go silent.
struct ProxiedHub
{
    FakeHub hub;
    std::unique_ptr<TcpProxy> proxy;

    bool listen()
    {
        if (!hub.listenPlain())
            return false;
        proxy = std::make_unique<TcpProxy>(hub.port());
        return proxy->listen();
    }
    QUrl url() const
    {
        QUrl url = hub.url();
        url.setPort(proxy->port());
        return url;
    }
};

// The defaults scaled down: watched 100/400 ms, idle 1.5/5 s.
tunnel::TunnelTiming scaledTiming()
{
    tunnel::TunnelTiming timing;
    timing.heartbeatInterval = 1500ms;
    timing.heartbeatTimeout = 5000ms;
    timing.watchfulInterval = 100ms;
    timing.watchfulTimeout = 400ms;
    return timing;
}

// A real TLS WebSocket on loopback whose server end is left as the hub's
// front leaves it (edge::HttpFront): the QWebSocket owns its TCP socket.
struct TlsLoopback
{
    QTemporaryDir dir;
    QWebSocketServer server { QStringLiteral("tunnel test"), QWebSocketServer::SecureMode };
    QString error;

    bool listen()
    {
        auto identity = testsupport::makeDevIdentity(
            dir.path(), QStringLiteral("hub"), { QStringLiteral("127.0.0.1") });
        if (!identity) {
            error = identity.error().message;
            return false;
        }
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setLocalCertificateChain(identity->chain);
        tls.setPrivateKey(identity->key);
        server.setSslConfiguration(tls);
        if (!server.listen(QHostAddress::LocalHost, 0)) {
            error = server.errorString();
            return false;
        }
        return true;
    }

    static QWebSocket *client()
    {
        auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest);
        QSslConfiguration trustAll = QSslConfiguration::defaultConfiguration();
        trustAll.setPeerVerifyMode(QSslSocket::VerifyNone);
        socket->setSslConfiguration(trustAll);
        return socket;
    }

    // Dials with `client` and answers the server's end, or nullptr.
    QWebSocket *accept(QWebSocket *client)
    {
        QSignalSpy accepted(&server, &QWebSocketServer::newConnection);
        QSignalSpy connected(client, &QWebSocket::connected);
        client->open(QUrl(QStringLiteral("wss://127.0.0.1:%1/leg").arg(server.serverPort())));
        if (!accepted.wait(kEventTimeoutMs)
            || (connected.count() == 0 && !connected.wait(kEventTimeoutMs))) {
            error = QStringLiteral("the WebSocket did not connect");
            return nullptr;
        }
        QWebSocket *socket = server.nextPendingConnection();
        if (!socket) {
            error = QStringLiteral("no pending connection");
            return nullptr;
        }
        socket->setParent(nullptr);
        for (QSslSocket *tcp : server.findChildren<QSslSocket *>()) {
            if (tcp->peerPort() == socket->peerPort())
                tcp->setParent(socket);
        }
        if (socket->findChildren<QSslSocket *>().size() != 1) {
            error = QStringLiteral("the server's TCP socket was not found");
            delete socket;
            return nullptr;
        }
        return socket;
    }
};

} // namespace

std::unique_ptr<TunnelConnection> TestTunnelConnection::dialWithHeartbeat(const QUrl &url)
{
    auto connection = dial(url, scaledTiming());
    if (connection)
        connection->startHeartbeat();
    return connection;
}

void TestTunnelConnection::silentLinkCarryingChannelsIsDroppedAtTheWatchfulPace()
{
    ProxiedHub hub;
    QVERIFY(hub.listen());
    auto connection = dialWithHeartbeat(hub.url());
    QVERIFY(connection);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    QVERIFY(connection->channels()->openChannel(QJsonObject {}));

    // Alive for many watchful timeouts while the peer answers.
    QVERIFY(!disconnected.wait(1200));

    hub.proxy->setBlackhole(true);
    QElapsedTimer silentFor;
    silentFor.start();
    QVERIFY(disconnected.wait(kEventTimeoutMs));
    // The watchful bound (timeout + one interval), well short of the idle
    // timeout: the link was judged at the watchful pace.
    QVERIFY2(silentFor.elapsed() < 1500, qPrintable(QString::number(silentFor.elapsed())));
    QVERIFY(disconnected.first().first().toString().contains(QLatin1String("no sign of life")));
}

void TestTunnelConnection::silentIdleLinkIsDroppedAtItsOwnPace()
{
    ProxiedHub hub;
    QVERIFY(hub.listen());
    auto connection = dialWithHeartbeat(hub.url());
    QVERIFY(connection);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    // A channel that came and went leaves the link idle again.
    auto opened = connection->channels()->openChannel(QJsonObject {});
    QVERIFY(opened);
    (*opened)->close(protocol::CloseCode::DeviceGone, QStringLiteral("done"));
    QCOMPARE(connection->channels()->channelCount(), 0);
    // Past the watchful bound the link still lingers in after its channel.
    QVERIFY(!disconnected.wait(700));

    hub.proxy->setBlackhole(true);
    QVERIFY(!disconnected.wait(1500));
    QVERIFY(connection->isOpen());

    // Turning watchful judges the silence so far at once.
    QElapsedTimer sinceChannel;
    sinceChannel.start();
    QVERIFY(connection->channels()->openChannel(QJsonObject {}));
    QVERIFY(disconnected.wait(kEventTimeoutMs));
    QVERIFY2(sinceChannel.elapsed() < 1000, qPrintable(QString::number(sinceChannel.elapsed())));
}

void TestTunnelConnection::aSilenceBegunUnderAChannelIsJudgedWatchfullyAfterItEnds()
{
    ProxiedHub hub;
    QVERIFY(hub.listen());
    auto connection = dialWithHeartbeat(hub.url());
    QVERIFY(connection);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    auto opened = connection->channels()->openChannel(QJsonObject {});
    QVERIFY(opened);
    QVERIFY(!disconnected.wait(300));
    // The link dies under its only stream, which then ends (as when the
    // hub ended it on another connection, having judged this one dead).
    hub.proxy->setBlackhole(true);
    QElapsedTimer silentFor;
    silentFor.start();
    QVERIFY(!disconnected.wait(200));
    (*opened)->close(protocol::CloseCode::DeviceGone, QStringLiteral("done"));
    QCOMPARE(connection->channels()->channelCount(), 0);
    QVERIFY(disconnected.wait(kEventTimeoutMs));
    // The watchful bound, not the idle timeout (5 s).
    QVERIFY2(silentFor.elapsed() < 1500, qPrintable(QString::number(silentFor.elapsed())));
    QVERIFY(disconnected.first().first().toString().contains(QLatin1String("no sign of life")));
}

void TestTunnelConnection::aLoopThatWasItselfBusyDoesNotBlameThePeer()
{
    ProxiedHub hub;
    QVERIFY(hub.listen());
    auto connection = dialWithHeartbeat(hub.url());
    QVERIFY(connection);
    QSignalSpy disconnected(connection.get(), &TunnelConnection::disconnected);
    QVERIFY(connection->channels()->openChannel(QJsonObject {}));
    QVERIFY(!disconnected.wait(300));
    // This thread (which also runs the fake hub) does nothing for far
    // longer than the watchful timeout, as an agent importing an image on
    // a slow machine once did; the peer's answers wait unread.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    QVERIFY(!disconnected.wait(1500));
    QVERIFY(connection->isOpen());
    // A real silence is still judged afterwards.
    hub.proxy->setBlackhole(true);
    QVERIFY(disconnected.wait(kEventTimeoutMs));
}

// The daemon leads the heartbeat; the hub hears its pings (which its
// WebSocket answers without a signal) under the WebSocket, and pings only
// for a daemon that stopped: at ten thousand sessions every ping the hub
// does not send is a TLS record fewer each way. tst_heartbeat has when.
void TestTunnelConnection::theHubPingsOnlyWhenTheDaemonFallsQuiet()
{
    TlsLoopback loopback;
    QVERIFY2(loopback.listen(), qPrintable(loopback.error));

    // A daemon beating every 40 ms; a hub that would ping after 1.5 s of
    // silence. Each of the daemon's pings, answered by the hub's WebSocket
    // without a signal, keeps the hub from pinging.
    tunnel::TunnelTiming daemonTiming;
    daemonTiming.heartbeatInterval = 40ms;
    daemonTiming.heartbeatTimeout = 3000ms;
    tunnel::TunnelTiming hubTiming;
    hubTiming.heartbeatInterval = 1000ms;
    hubTiming.heartbeatTimeout = 10'000ms;
    auto *daemonSocket = TlsLoopback::client();
    TunnelConnection daemon(wrapped(daemonSocket), ChannelMultiplexer::Side::Daemon,
        ChannelMultiplexer::Limits {}, daemonTiming);
    QWebSocket *hubSocket = loopback.accept(daemonSocket);
    QVERIFY2(hubSocket, qPrintable(loopback.error));
    TunnelConnection hub(wrapped(hubSocket), ChannelMultiplexer::Side::Hub, {}, hubTiming);
    QSignalSpy hubHeardPong(hubSocket, &QWebSocket::pong);
    QSignalSpy daemonHeardPong(daemonSocket, &QWebSocket::pong);
    QSignalSpy hubGone(&hub, &TunnelConnection::disconnected);
    daemon.startHeartbeat();
    hub.startHeartbeat();
    QVERIFY(!hubGone.wait(3500));
    QVERIFY2(daemonHeardPong.count() >= 10, qPrintable(QString::number(daemonHeardPong.count())));
    QCOMPARE(hubHeardPong.count(), 0);

    // A daemon that does not beat (an old one, a stalled one): the hub
    // pings after an interval and a half of silence and keeps the link.
    QWebSocket *quietDaemonSocket = TlsLoopback::client();
    TunnelConnection quietDaemon(wrapped(quietDaemonSocket), ChannelMultiplexer::Side::Daemon);
    QWebSocket *quietHubSocket = loopback.accept(quietDaemonSocket);
    QVERIFY2(quietHubSocket, qPrintable(loopback.error));
    tunnel::TunnelTiming brisk;
    brisk.heartbeatInterval = 100ms;
    brisk.heartbeatTimeout = 3000ms;
    TunnelConnection hubOfQuiet(wrapped(quietHubSocket), ChannelMultiplexer::Side::Hub, {}, brisk);
    QSignalSpy pongsToHub(quietHubSocket, &QWebSocket::pong);
    QSignalSpy quietGone(&hubOfQuiet, &TunnelConnection::disconnected);
    hubOfQuiet.startHeartbeat();
    QTRY_VERIFY_WITH_TIMEOUT(pongsToHub.count() >= 3, kEventTimeoutMs);
    QCOMPARE(quietGone.count(), 0);
    QVERIFY(hubOfQuiet.isOpen());
}

void TestTunnelConnection::aLegIsWatchedWhateverItsSessionsPace()
{
    // A session set to keep the idle pace even while it carries channels;
    // its legs carry devices.
    tunnel::TunnelTiming lenient;
    lenient.watchfulInterval = lenient.heartbeatInterval;
    lenient.watchfulTimeout = lenient.heartbeatTimeout;
    const net::Heartbeat::Pace leg = lenient.forLegs().watchfulPace();
    QCOMPARE(leg.interval, net::Heartbeat::kWatchfulInterval);
    QCOMPARE(leg.timeout, net::Heartbeat::kWatchfulTimeout);
    QCOMPARE(lenient.forLegs().idlePace().interval, net::Heartbeat::kDefaultInterval);
    // A pace already closer is kept.
    const net::Heartbeat::Pace scaled = scaledTiming().forLegs().watchfulPace();
    QCOMPARE(scaled.interval, scaledTiming().watchfulInterval);
    QCOMPARE(scaled.timeout, scaledTiming().watchfulTimeout);
}

void TestTunnelConnection::deletingConnectionClosesChannels()
{
    FakeHub hub;
    QVERIFY(hub.listenPlain());
    QSignalSpy hubConnected(&hub, &FakeHub::clientConnected);
    auto connection = dial(hub.url());
    QVERIFY(connection);
    auto opened = connection->channels()->openChannel(QJsonObject {});
    QVERIFY(opened);
    QPointer<Channel> channel = *opened;
    QList<protocol::CloseCode> codes;
    connect(channel.data(), &Channel::closed, this,
        [&codes](protocol::CloseCode code, const QString &) { codes.append(code); });

    connection.reset();

    QCOMPARE(codes, QList<protocol::CloseCode> { protocol::CloseCode::ConnectionLost });
    QVERIFY(!channel);
}

// The hub's relay threads take a device's legs after the main thread
// authenticated them: a TLS WebSocket connection, its multiplexer, channels
// and heartbeat must all move, and then run on the new thread only.
void TestTunnelConnection::aConnectionMovedToAnotherThreadWorksWholeThere()
{
    // Anything left behind on the main thread says so in a warning.
    QTest::failOnWarning(QRegularExpression(
        QStringLiteral("thread|timer|notifier"), QRegularExpression::CaseInsensitiveOption));
    TlsLoopback loopback;
    QVERIFY2(loopback.listen(), qPrintable(loopback.error));
    auto *clientSocket = TlsLoopback::client();
    TunnelConnection daemon(wrapped(clientSocket), ChannelMultiplexer::Side::Daemon);
    QWebSocket *hubSocket = loopback.accept(clientSocket);
    QVERIFY2(hubSocket, qPrintable(loopback.error));

    tunnel::TunnelTiming fast;
    fast.heartbeatInterval = 40ms;
    fast.heartbeatTimeout = 2000ms;
    fast.watchfulInterval = 40ms;
    fast.watchfulTimeout = 2000ms;
    auto *hub = new TunnelConnection(wrapped(hubSocket), ChannelMultiplexer::Side::Hub, {}, fast);
    QThread relay;
    relay.setEventDispatcher(new util::EpollEventDispatcher);
    relay.start();
    hub->moveToThread(&relay);

    // On the relay thread: beat, open a channel, echo what comes on it.
    std::atomic<bool> everyCallOnRelay { true };
    const auto onRelay = [&everyCallOnRelay, &relay] {
        if (QThread::currentThread() != &relay)
            everyCallOnRelay = false;
    };
    QMetaObject::invokeMethod(hub, [hub, onRelay] {
        onRelay();
        hub->startHeartbeat();
        auto opened = hub->channels()->openChannel(QJsonObject { { QStringLiteral("n"), 1 } });
        if (!opened)
            return;
        Channel *channel = *opened;
        QObject::connect(channel, &Channel::readyRead, channel, [channel, onRelay] {
            onRelay();
            channel->write(channel->readAll());
        });
    });

    QSignalSpy requested(daemon.channels(), &ChannelMultiplexer::channelRequested);
    QVERIFY(requested.wait(kEventTimeoutMs));
    auto *channel = requested.first().first().value<Channel *>();
    channel->accept();
    QByteArray echoed;
    connect(
        channel, &Channel::readyRead, this, [&echoed, channel] { echoed += channel->readAll(); });
    const QByteArray sent(300'000, 'x');
    channel->write(sent);
    QTRY_COMPARE_WITH_TIMEOUT(echoed.size(), sent.size(), kEventTimeoutMs);
    QCOMPARE(echoed, sent);
    // Several heartbeats went by on the relay thread, answered here.
    QSignalSpy daemonGone(&daemon, &TunnelConnection::disconnected);
    QVERIFY(!daemonGone.wait(300));

    QMetaObject::invokeMethod(hub, [hub, onRelay] {
        onRelay();
        QObject::connect(hub, &TunnelConnection::disconnected, hub, &QObject::deleteLater);
        hub->close(QStringLiteral("the run is over"));
    });
    QVERIFY(daemonGone.wait(kEventTimeoutMs));
    QCOMPARE(daemonGone.first().first().toString(), QStringLiteral("the run is over"));
    relay.quit();
    QVERIFY(relay.wait(kEventTimeoutMs));
    QVERIFY(everyCallOnRelay);
}

QTEST_GUILESS_MAIN(TestTunnelConnection)
#include "tst_tunnelconnection.moc"
