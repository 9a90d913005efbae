// The hub's own WebSocket (common/net/streamwebsocket.h) behind its real
// front (hub/edge/httpfront.h): Qt's client and a raw TLS client on
// loopback upgrade, exchange every kind of message, close from either
// side, break the protocol, and the socket goes to another thread as the
// relay's device legs do.

#include "common/net/streamwebsocket.h"
#include "common/net/websocketframes.h"
#include "common/util/epolleventdispatcher.h"
#include "hub/edge/httpfront.h"
#include "hub/edge/httpservice.h"
#include "hub/tls/devcertificate.h"

#include <QSslSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QWebSocket>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub::edge;
using namespace Qt::StringLiterals;

namespace {

// Takes WebSockets at /ws and keeps them; answers no plain request.
class SocketKeeper final : public HttpService
{
public:
    HeadDecision examine(const HttpRequestHead &, const QHostAddress &) override
    {
        HeadDecision decision;
        decision.refusal = HttpAnswer::error(404, u"not_found"_s, u"no"_s);
        return decision;
    }
    bool takesWebSocket(const QByteArray &path) const override { return path == "/ws"; }
    void acceptWebSocket(std::unique_ptr<net::MessageSocket> socket, const QByteArray &path,
        PreAuthPool::Place) override
    {
        paths.append(path);
        sockets.push_back(std::move(socket));
    }

    QList<QByteArray> paths;
    std::vector<std::unique_ptr<net::MessageSocket>> sockets;
};

QByteArray patterned(qsizetype size)
{
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 37) % 253);
    return bytes;
}

constexpr int kWaitMs = 5000;

} // namespace

class TestStreamWebSocket final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void messagesCrossBothWaysThroughTheFront();
    void eachSideClosesWithItsReason();
    void anIdleSocketHoldsNoBuffer();
    void bytesSentWithTheUpgradeAreNotLost();
    void aClientThatBreaksTheProtocolIsToldHow();
    void badUpgradesAreRefused_data();
    void badUpgradesAreRefused();
    void theSocketWorksOnAnotherThread();

private:
    std::unique_ptr<QWebSocket> dial();
    net::MessageSocket *accepted(int index);
    // A raw TLS connection to the front, for what Qt's client never sends.
    std::unique_ptr<QSslSocket> rawClient();
    static QByteArray upgradeRequest(
        const QByteArray &key = "dGhlIHNhbXBsZSBub25jZQ==", const QByteArray &version = "13");

    QTemporaryDir m_dir;
    QSslConfiguration m_tls;
    SocketKeeper m_service;
    std::unique_ptr<HttpFront> m_front;
};

void TestStreamWebSocket::initTestCase()
{
    const QString cert = m_dir.filePath(u"cert.pem"_s);
    const QString key = m_dir.filePath(u"key.pem"_s);
    QVERIFY(hub::generateDevCertificate(
        hub::DevCertificateRequest { { u"127.0.0.1"_s }, 1 }, cert, key));
    auto identity = hub::TlsIdentity::load(cert, key);
    QVERIFY(identity);
    m_tls = QSslConfiguration::defaultConfiguration();
    m_tls.setLocalCertificateChain(identity->chain);
    m_tls.setPrivateKey(identity->key);
}

void TestStreamWebSocket::init()
{
    HttpFront::Options options;
    options.listen.address = QHostAddress::LocalHost;
    options.tls = m_tls;
    auto front = HttpFront::start(options, m_service);
    QVERIFY2(front, qPrintable(front ? QString() : front.error().message));
    m_front = std::move(*front);
}

void TestStreamWebSocket::cleanup()
{
    m_service.sockets.clear();
    m_service.paths.clear();
    m_front.reset();
}

std::unique_ptr<QWebSocket> TestStreamWebSocket::dial()
{
    auto client = std::make_unique<QWebSocket>();
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    client->setSslConfiguration(tls);
    client->open(QUrl(u"wss://127.0.0.1:%1/ws"_s.arg(m_front->port())));
    return client;
}

net::MessageSocket *TestStreamWebSocket::accepted(int index)
{
    if (!QTest::qWaitFor([&] { return int(m_service.sockets.size()) > index; }, kWaitMs))
        return nullptr;
    return m_service.sockets.at(size_t(index)).get();
}

std::unique_ptr<QSslSocket> TestStreamWebSocket::rawClient()
{
    auto client = std::make_unique<QSslSocket>();
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    client->setSslConfiguration(tls);
    client->connectToHostEncrypted(u"127.0.0.1"_s, m_front->port());
    return client;
}

QByteArray TestStreamWebSocket::upgradeRequest(const QByteArray &key, const QByteArray &version)
{
    QByteArray request = "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
                         "Connection: Upgrade\r\n";
    if (!key.isEmpty())
        request += "Sec-WebSocket-Key: " + key + "\r\n";
    if (!version.isEmpty())
        request += "Sec-WebSocket-Version: " + version + "\r\n";
    return request + "\r\n";
}

void TestStreamWebSocket::messagesCrossBothWaysThroughTheFront()
{
    auto client = dial();
    QSignalSpy connected(client.get(), &QWebSocket::connected);
    net::MessageSocket *server = accepted(0);
    QVERIFY(server);
    QCOMPARE(m_service.paths.value(0), "/ws"_ba);
    QVERIFY(connected.size() == 1 || connected.wait(kWaitMs));
    QCOMPARE(server->peerAddress(), QHostAddress(QHostAddress::LocalHost));
    QCOMPARE(server->peerPort(), client->localPort());
    QVERIFY(server->isOpen());

    QSignalSpy texts(server, &net::MessageSocket::textReceived);
    QSignalSpy binaries(server, &net::MessageSocket::binaryReceived);
    QSignalSpy heard(server, &net::MessageSocket::activity);
    const QByteArray big = patterned(70000);
    client->sendTextMessage(u"hello, hub ✓"_s);
    client->sendBinaryMessage(big);
    QVERIFY(binaries.wait(kWaitMs) || binaries.size() == 1);
    QCOMPARE(texts.size(), 1);
    QCOMPARE(texts[0][0].toString(), u"hello, hub ✓"_s);
    QCOMPARE(binaries[0][0].toByteArray(), big);
    QVERIFY(heard.size() >= 1);

    // The client's ping is answered without a signal, but heard.
    heard.clear();
    QSignalSpy clientPongs(client.get(), &QWebSocket::pong);
    client->ping("beat");
    QVERIFY(clientPongs.wait(kWaitMs));
    QVERIFY(heard.size() >= 1);

    QSignalSpy serverPongs(server, &net::MessageSocket::pongReceived);
    server->ping();
    QVERIFY(serverPongs.wait(kWaitMs));

    QSignalSpy clientTexts(client.get(), &QWebSocket::textMessageReceived);
    QSignalSpy clientBinaries(client.get(), &QWebSocket::binaryMessageReceived);
    const QByteArray bigger = patterned(200000);
    server->sendText(u"welcome ✓"_s);
    server->sendBinary(bigger);
    QVERIFY(clientBinaries.wait(kWaitMs) || clientBinaries.size() == 1);
    QCOMPARE(clientTexts.size(), 1);
    QCOMPARE(clientTexts[0][0].toString(), u"welcome ✓"_s);
    QCOMPARE(clientBinaries[0][0].toByteArray(), bigger);
}

void TestStreamWebSocket::eachSideClosesWithItsReason()
{
    auto first = dial();
    net::MessageSocket *firstServer = accepted(0);
    QVERIFY(firstServer);
    QTRY_VERIFY_WITH_TIMEOUT(first->state() == QAbstractSocket::ConnectedState, kWaitMs);
    QSignalSpy firstGone(firstServer, &net::MessageSocket::disconnected);
    first->close(QWebSocketProtocol::CloseCodeGoingAway, u"daemon stopping"_s);
    QVERIFY(firstGone.wait(kWaitMs));
    QCOMPARE(firstServer->closeReason(), u"daemon stopping"_s);
    QVERIFY(firstServer->errorString().isEmpty());
    QVERIFY(!firstServer->isOpen());
    QTRY_COMPARE_WITH_TIMEOUT(first->state(), QAbstractSocket::UnconnectedState, kWaitMs);

    auto second = dial();
    net::MessageSocket *secondServer = accepted(1);
    QVERIFY(secondServer);
    QTRY_VERIFY_WITH_TIMEOUT(second->state() == QAbstractSocket::ConnectedState, kWaitMs);
    QSignalSpy secondGone(secondServer, &net::MessageSocket::disconnected);
    QSignalSpy clientGone(second.get(), &QWebSocket::disconnected);
    secondServer->close(net::websocket::CloseCode::PolicyViolated, u"the hub is stopping"_s);
    QVERIFY(!secondServer->isOpen());
    QVERIFY(clientGone.wait(kWaitMs));
    QCOMPARE(second->closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QCOMPARE(second->closeReason(), u"the hub is stopping"_s);
    QTRY_COMPARE_WITH_TIMEOUT(secondGone.size(), 1, kWaitMs);
}

void TestStreamWebSocket::anIdleSocketHoldsNoBuffer()
{
    auto client = dial();
    auto *server = qobject_cast<net::StreamWebSocket *>(accepted(0));
    QVERIFY(server);
    QTRY_VERIFY_WITH_TIMEOUT(client->state() == QAbstractSocket::ConnectedState, kWaitMs);
    QSignalSpy binaries(server, &net::MessageSocket::binaryReceived);
    QSignalSpy clientBinaries(client.get(), &QWebSocket::binaryMessageReceived);
    for (int round = 0; round < 20; ++round) {
        client->sendBinaryMessage(patterned(30000 + round));
        server->sendBinary(patterned(50000 + round));
    }
    QTRY_COMPARE_WITH_TIMEOUT(binaries.size(), 20, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(clientBinaries.size(), 20, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(server->bytesToWrite(), 0, kWaitMs);
    QCOMPARE(server->bufferedBytes(), 0);
}

void TestStreamWebSocket::bytesSentWithTheUpgradeAreNotLost()
{
    auto client = rawClient();
    QTRY_VERIFY_WITH_TIMEOUT(client->isEncrypted(), kWaitMs);
    const net::websocket::MaskKey key { 1, 2, 3, 4 };
    QByteArray frame;
    net::websocket::appendFrame(frame, net::websocket::Opcode::Text, "early hello", &key);
    client->write(upgradeRequest() + frame);
    net::MessageSocket *server = accepted(0);
    QVERIFY(server);
    QSignalSpy texts(server, &net::MessageSocket::textReceived);
    QVERIFY(texts.wait(kWaitMs) || texts.size() == 1);
    QCOMPARE(texts[0][0].toString(), u"early hello"_s);
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += client->readAll(), answer.contains("\r\n\r\n")), kWaitMs);
    QVERIFY2(answer.startsWith("HTTP/1.1 101 "), answer.constData());
    QVERIFY(answer.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
}

void TestStreamWebSocket::aClientThatBreaksTheProtocolIsToldHow()
{
    auto client = rawClient();
    QTRY_VERIFY_WITH_TIMEOUT(client->isEncrypted(), kWaitMs);
    client->write(upgradeRequest());
    net::MessageSocket *server = accepted(0);
    QVERIFY(server);
    QSignalSpy gone(server, &net::MessageSocket::disconnected);
    QSignalSpy texts(server, &net::MessageSocket::textReceived);
    // A client must mask; this one does not.
    QByteArray frame;
    net::websocket::appendFrame(frame, net::websocket::Opcode::Text, "unmasked");
    client->write(frame);
    QVERIFY(gone.wait(kWaitMs));
    QCOMPARE(texts.size(), 0);
    QVERIFY2(server->errorString().contains(u"unmasked"_s), qPrintable(server->errorString()));

    QByteArray received;
    QTRY_VERIFY_WITH_TIMEOUT(
        (received += client->readAll(),
            client->state() == QAbstractSocket::UnconnectedState || received.count("\x88") > 0),
        kWaitMs);
    received += client->readAll();
    const qsizetype body = received.indexOf("\r\n\r\n") + 4;
    net::websocket::MessageReader reader({ 1024, false });
    std::vector<net::websocket::Message> messages;
    QVERIFY(!reader.feed(QByteArrayView(received).sliced(body), messages));
    QCOMPARE(messages.size(), 1u);
    QCOMPARE(messages[0].opcode, net::websocket::Opcode::Close);
    QCOMPARE(messages[0].closeCode, net::websocket::CloseCode::ProtocolError);
}

void TestStreamWebSocket::badUpgradesAreRefused_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addRow("no key") << upgradeRequest(QByteArray());
    QTest::addRow("a key of 8 bytes") << upgradeRequest("AAAAAAAAAAA=");
    QTest::addRow("a key that is not base64") << upgradeRequest("!!!!!!!!!!!!!!!!!!!!!!==");
    QTest::addRow("version 8") << upgradeRequest("dGhlIHNhbXBsZSBub25jZQ==", "8");
    QTest::addRow("no version") << upgradeRequest("dGhlIHNhbXBsZSBub25jZQ==", QByteArray());
}

void TestStreamWebSocket::badUpgradesAreRefused()
{
    QFETCH(QByteArray, request);
    auto client = rawClient();
    QTRY_VERIFY_WITH_TIMEOUT(client->isEncrypted(), kWaitMs);
    client->write(request);
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += client->readAll(), answer.contains("\r\n\r\n")), kWaitMs);
    QVERIFY2(answer.startsWith("HTTP/1.1 400 "), answer.constData());
    QVERIFY(answer.contains("Sec-WebSocket-Version: 13"));
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::UnconnectedState, kWaitMs);
    QVERIFY(m_service.sockets.empty());
}

void TestStreamWebSocket::theSocketWorksOnAnotherThread()
{
    auto client = dial();
    net::MessageSocket *server = accepted(0);
    QVERIFY(server);
    QTRY_VERIFY_WITH_TIMEOUT(client->state() == QAbstractSocket::ConnectedState, kWaitMs);

    QThread relay;
    relay.setEventDispatcher(new util::EpollEventDispatcher);
    relay.start();
    std::unique_ptr<net::MessageSocket> moved = std::move(m_service.sockets.front());
    moved->moveToThread(&relay);
    // On the relay thread: every binary message comes back reversed.
    connect(moved.get(), &net::MessageSocket::binaryReceived, moved.get(),
        [socket = moved.get()](const QByteArray &bytes) {
            QByteArray reversed = bytes;
            std::reverse(reversed.begin(), reversed.end());
            socket->sendBinary(reversed);
        });
    QSignalSpy echoes(client.get(), &QWebSocket::binaryMessageReceived);
    for (int i = 0; i < 50; ++i)
        client->sendBinaryMessage(patterned(1000 + i * 100));
    QTRY_COMPARE_WITH_TIMEOUT(echoes.size(), 50, kWaitMs);
    for (int i = 0; i < 50; ++i) {
        QByteArray expected = patterned(1000 + i * 100);
        std::reverse(expected.begin(), expected.end());
        QCOMPARE(echoes[i][0].toByteArray(), expected);
    }
    // It ends on its thread, which is stopped only then.
    QMetaObject::invokeMethod(
        moved.get(), [socket = moved.release()] { delete socket; }, Qt::BlockingQueuedConnection);
    relay.quit();
    relay.wait();
}

QTEST_MAIN(TestStreamWebSocket)
#include "tst_streamwebsocket.moc"
