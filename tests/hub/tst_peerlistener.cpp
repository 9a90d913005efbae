// The peer port on loopback (hub/cluster/peerlistener.h), met by plain
// clients: a member's certificate gets a tunnel, anything else is refused
// (a key that is not a live member's, none at all, this member's own, a
// member that died, another path); and before that, a connection costs no
// more than the deadline and the cap allow.

#include "hub/cluster/peerlistener.h"
#include "hub/peertestsupport.h"

#include <QPointer>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>

#include <memory>

using namespace cloop;
using namespace cloop::hub;

namespace {

constexpr int kWaitMs = 15'000;

// A WebSocket client with this certificate (or none), trusting whatever
// the server shows: the server is under test here, not the client.
std::unique_ptr<QWebSocket> dial(quint16 port, const TlsIdentity *identity,
    const QString &path = QStringLiteral("/cluster/peer"))
{
    auto socket = std::make_unique<QWebSocket>();
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    if (identity) {
        tls.setLocalCertificateChain(identity->chain);
        tls.setPrivateKey(identity->key);
    }
    socket->setSslConfiguration(tls);
    socket->open(QUrl(QStringLiteral("wss://127.0.0.1:%1%2").arg(port).arg(path)));
    return socket;
}

bool waitUnconnected(QAbstractSocket &socket)
{
    return QTest::qWaitFor(
        [&] { return socket.state() == QAbstractSocket::UnconnectedState; }, kWaitMs);
}

// Not waitForConnected(): the server runs in this thread and must be served.
bool waitConnected(QAbstractSocket &socket)
{
    return QTest::qWaitFor(
        [&] { return socket.state() == QAbstractSocket::ConnectedState; }, kWaitMs);
}

bool waitEncrypted(QSslSocket &socket)
{
    return QTest::qWaitFor([&] { return socket.isEncrypted(); }, kWaitMs);
}

// A member's TLS client without the WebSocket on top.
void connectTls(QSslSocket &client, const TlsIdentity &identity, quint16 port)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    tls.setLocalCertificateChain(identity.chain);
    tls.setPrivateKey(identity.key);
    client.setSslConfiguration(tls);
    client.connectToHostEncrypted(QStringLiteral("127.0.0.1"), port);
}

} // namespace

class TestPeerListener final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aLiveMemberGetsATunnel();
    void aKeyThatIsNoMembersIsRefused();
    void aClientWithoutCertificateIsRefused();
    void thisMembersOwnKeyIsRefused();
    void aMemberThatDiedCannotConnect();
    void anotherPathIsRefusedWith404();
    void anIdleConnectionIsClosedAtTheDeadline();
    void aMemberThatNeverUpgradesIsClosedAtTheDeadline();
    void theCapOnUnprovedConnectionsHolds();
    void aReloadedIdentityServesNewConnections();

private:
    void startListener(std::chrono::milliseconds deadline = std::chrono::milliseconds(10'000),
        int maxUnauthenticated = 64);

    QTemporaryDir m_dir;
    std::optional<TlsIdentity> m_a; // the listening member, 1
    std::optional<TlsIdentity> m_b; // another member, 2
    std::optional<TlsIdentity> m_stranger;
    testing::FakePeerDirectory m_directory;
    std::unique_ptr<PeerListener> m_listener;
};

void TestPeerListener::initTestCase()
{
    QVERIFY(m_dir.isValid());
    const auto make = [this](std::optional<TlsIdentity> &slot, const QString &name) {
        auto identity = testing::makeMemberIdentity(m_dir.path(), name);
        if (identity)
            slot = *identity;
        return identity ? QString() : identity.error().message;
    };
    for (const QString &error : { make(m_a, QStringLiteral("a")), make(m_b, QStringLiteral("b")),
             make(m_stranger, QStringLiteral("c")) })
        QVERIFY2(error.isEmpty(), qPrintable(error));
}

void TestPeerListener::startListener(std::chrono::milliseconds deadline, int maxUnauthenticated)
{
    PeerListener::Options options;
    options.address = QHostAddress::LocalHost;
    options.selfId = 1;
    options.handshakeTimeout = deadline;
    options.maxUnauthenticated = maxUnauthenticated;
    auto listener = PeerListener::listen(options, m_directory, m_a->chain, m_a->key);
    QVERIFY2(listener, qPrintable(listener ? QString() : listener.error().message));
    m_listener = std::move(*listener);
    QVERIFY(m_listener->port() != 0);
    m_directory.put(testing::memberOf(1, QStringLiteral("hub-a"), *m_a, m_listener->port()));
}

void TestPeerListener::init()
{
    m_directory = testing::FakePeerDirectory();
    m_directory.put(testing::memberOf(2, QStringLiteral("hub-b"), *m_b));
}

void TestPeerListener::cleanup()
{
    m_listener.reset();
}

void TestPeerListener::aLiveMemberGetsATunnel()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    auto client = dial(m_listener->port(), &*m_b);
    QVERIFY(connected.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::ConnectedState, kWaitMs);
    const auto member = connected[0][0].value<PeerMember>();
    QCOMPARE(member.id, 2);
    QCOMPARE(member.name, QStringLiteral("hub-b"));
    QPointer<tunnel::TunnelConnection> connection
        = connected[0][1].value<tunnel::TunnelConnection *>();
    QVERIFY(connection);
    QVERIFY(connection->isOpen());
    QCOMPARE(m_listener->connectionCount(), 1);
    QCOMPARE(m_listener->unauthenticatedCount(), 0);
    QCOMPARE(connection->channels()->limits().maxChannels, 4096);
    // The TLS socket under the WebSocket (and the plain one under that).
    const auto tcp = connection->socket()->findChildren<QAbstractSocket *>();
    QVERIFY(!tcp.isEmpty());
    for (QAbstractSocket *socket : tcp)
        QCOMPARE(socket->socketOption(QAbstractSocket::LowDelayOption).toInt(), 1);

    // Once the member goes, so does the connection.
    client->close();
    QTRY_VERIFY_WITH_TIMEOUT(connection.isNull(), kWaitMs);
    QCOMPARE(m_listener->connectionCount(), 0);
}

void TestPeerListener::aKeyThatIsNoMembersIsRefused()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    auto client = dial(m_listener->port(), &*m_stranger);
    QVERIFY(refused.wait(kWaitMs));
    const QString reason = refused[0][1].toString();
    QVERIFY2(
        reason.contains(QStringLiteral("%1 is not that of a live hub member").arg(m_stranger->pin)),
        qPrintable(reason));
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::UnconnectedState, kWaitMs);
    QCOMPARE(connected.size(), 0);
    QCOMPARE(m_listener->unauthenticatedCount(), 0);
    QCOMPARE(m_listener->refusedCount(), quint64(1));
}

void TestPeerListener::aClientWithoutCertificateIsRefused()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    auto client = dial(m_listener->port(), nullptr);
    QVERIFY(refused.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::UnconnectedState, kWaitMs);
    QCOMPARE(connected.size(), 0);
    QCOMPARE(m_listener->unauthenticatedCount(), 0);
}

void TestPeerListener::thisMembersOwnKeyIsRefused()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    auto client = dial(m_listener->port(), &*m_a);
    QVERIFY(refused.wait(kWaitMs));
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("this member's own key")),
        qPrintable(refused[0][1].toString()));
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::UnconnectedState, kWaitMs);
    QCOMPARE(connected.size(), 0);
}

void TestPeerListener::aMemberThatDiedCannotConnect()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    auto first = dial(m_listener->port(), &*m_b);
    QVERIFY(connected.wait(kWaitMs));

    // Its lease lapsed: its certificate is worth nothing from now on.
    m_directory.remove(2);
    const int reads = m_directory.pinReads;
    auto second = dial(m_listener->port(), &*m_b);
    QVERIFY(refused.wait(kWaitMs));
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("not that of a live hub member")),
        qPrintable(refused[0][1].toString()));
    QTRY_COMPARE_WITH_TIMEOUT(second->state(), QAbstractSocket::UnconnectedState, kWaitMs);
    QCOMPARE(connected.size(), 1);
    // The members were read again for this handshake.
    QVERIFY(m_directory.pinReads > reads);
}

void TestPeerListener::anotherPathIsRefusedWith404()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    QSslSocket client;
    connectTls(client, *m_b, m_listener->port());
    QVERIFY(waitEncrypted(client));
    client.write(
        "GET /api/forwarders/connect HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    QVERIFY(refused.wait(kWaitMs));
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("no peer endpoint at "
                                                             "/api/forwarders/connect")),
        qPrintable(refused[0][1].toString()));
    QByteArray answer;
    QVERIFY(QTest::qWaitFor(
        [&] {
            answer += client.readAll();
            return client.state() == QAbstractSocket::UnconnectedState;
        },
        kWaitMs));
    answer += client.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 404 "), answer.constData());
    QCOMPARE(connected.size(), 0);
}

void TestPeerListener::anIdleConnectionIsClosedAtTheDeadline()
{
    startListener(std::chrono::milliseconds(300));
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    QTcpSocket idle;
    idle.connectToHost(QHostAddress::LocalHost, m_listener->port());
    QVERIFY(waitConnected(idle));
    QTRY_COMPARE_WITH_TIMEOUT(m_listener->unauthenticatedCount(), 1, kWaitMs);
    QVERIFY(waitUnconnected(idle));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, kWaitMs);
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("no TLS handshake within")),
        qPrintable(refused[0][1].toString()));
    QCOMPARE(m_listener->unauthenticatedCount(), 0);
}

void TestPeerListener::aMemberThatNeverUpgradesIsClosedAtTheDeadline()
{
    startListener(std::chrono::milliseconds(500));
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    QSslSocket client;
    connectTls(client, *m_b, m_listener->port());
    QVERIFY(waitEncrypted(client));
    QVERIFY(waitUnconnected(client));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, kWaitMs);
    QVERIFY2(
        refused[0][1].toString().contains(QLatin1String("no WebSocket upgrade request within")),
        qPrintable(refused[0][1].toString()));
    QCOMPARE(connected.size(), 0);
    QCOMPARE(m_listener->unauthenticatedCount(), 0);
}

void TestPeerListener::theCapOnUnprovedConnectionsHolds()
{
    startListener(std::chrono::milliseconds(60'000), 3);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    std::vector<std::unique_ptr<QTcpSocket>> waiting;
    for (int i = 0; i < 3; ++i) {
        waiting.push_back(std::make_unique<QTcpSocket>());
        waiting.back()->connectToHost(QHostAddress::LocalHost, m_listener->port());
        QVERIFY(waitConnected(*waiting.back()));
    }
    QTRY_COMPARE_WITH_TIMEOUT(m_listener->unauthenticatedCount(), 3, kWaitMs);

    QTcpSocket oneTooMany;
    oneTooMany.connectToHost(QHostAddress::LocalHost, m_listener->port());
    QVERIFY(waitUnconnected(oneTooMany));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, kWaitMs);
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("3 connections are already proving")),
        qPrintable(refused[0][1].toString()));
    QCOMPARE(m_listener->unauthenticatedCount(), 3);
    for (const auto &socket : waiting)
        QCOMPARE(socket->state(), QAbstractSocket::ConnectedState);

    // A place freed is a place for the next.
    waiting.front()->abort();
    QTRY_COMPARE_WITH_TIMEOUT(m_listener->unauthenticatedCount(), 2, kWaitMs);
    QTcpSocket next;
    next.connectToHost(QHostAddress::LocalHost, m_listener->port());
    QVERIFY(waitConnected(next));
    QTRY_COMPARE_WITH_TIMEOUT(m_listener->unauthenticatedCount(), 3, kWaitMs);
    QCOMPARE(next.state(), QAbstractSocket::ConnectedState);
}

void TestPeerListener::aReloadedIdentityServesNewConnections()
{
    startListener();
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    // The listener now shows the stranger's certificate (its new key).
    m_listener->setIdentity(m_stranger->chain, m_stranger->key);
    QSslSocket client;
    connectTls(client, *m_b, m_listener->port());
    QVERIFY(waitEncrypted(client));
    QCOMPARE(net::PinSet::pinOf(client.peerCertificate()), m_stranger->pin);
}

QTEST_GUILESS_MAIN(TestPeerListener)
#include "tst_peerlistener.moc"
