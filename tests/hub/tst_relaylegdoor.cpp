// The legs of the device streams a hub relays (hub/relay/): the door that
// checks each leg's ticket, the stream that waits for both legs, and the
// relay threads that splice them. Each daemon's leg is a real WebSocket on
// loopback whose hub end the test hands to the door, as the gateway does
// once the daemon proved who it is.

#include "common/net/qtmessagesocket.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/tunneltestsupport.h"
#include "hub/relay/relayedstream.h"
#include "hub/relay/relaylegdoor.h"
#include "hub/relay/relaythreads.h"

#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSslConfiguration>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QWebSocket>
#include <QWebSocketServer>

#include <memory>

using namespace std::chrono_literals;
using namespace cloop;
using namespace cloop::hub;
using protocol::CloseCode;
using tunnel::Channel;
using tunnel::TunnelConnection;
using Side = RelayedStream::Side;

namespace {

constexpr int kWaitMs = 10'000;
constexpr qint64 kForwarder = 3;
constexpr qint64 kExecutor = 4;

RelayedStream::Plan planFor(bool agentResumable = false)
{
    return RelayedStream::Plan { kForwarder, kExecutor,
        LegJoin::Openings { protocol::SegmentOpen { 5, 6, {}, std::nullopt },
            protocol::AgentDeviceOpen { 5, 6, QStringLiteral("fwd-lab"),
                protocol::DeviceSpec::Kind::Segment, QString(), std::nullopt },
            agentResumable } };
}

// One daemon's leg: the hub's end for the door, the daemon's end taking
// the stream channel it is sent and keeping what comes on it.
class Leg final : public QObject
{
public:
    // Over TLS with `identity`, as a hub's legs are; plain without.
    explicit Leg(const hub::TlsIdentity *identity = nullptr)
        : server(QStringLiteral("tst_relaylegdoor"),
            identity ? QWebSocketServer::SecureMode : QWebSocketServer::NonSecureMode)
    {
        if (identity) {
            QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
            tls.setLocalCertificateChain(identity->chain);
            tls.setPrivateKey(identity->key);
            server.setSslConfiguration(tls);
        }
        server.listen(QHostAddress::LocalHost, 0);
        connect(&server, &QWebSocketServer::newConnection, this, [this] {
            QWebSocket *socket = server.nextPendingConnection();
            socket->setParent(nullptr);
            // As the hub's front does: the WebSocket owns its TCP socket,
            // and goes whole to a relay thread.
            for (QTcpSocket *tcp : server.findChildren<QTcpSocket *>())
                if (tcp->peerPort() == socket->peerPort())
                    tcp->setParent(socket);
            hub = new TunnelConnection(
                new net::QtMessageSocket(socket), tunnel::ChannelMultiplexer::Side::Hub);
            hub->startHeartbeat();
        });
        auto *socket = new QWebSocket;
        daemon = std::make_unique<TunnelConnection>(
            new net::QtMessageSocket(socket), tunnel::ChannelMultiplexer::Side::Daemon);
        connect(daemon->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
            [this](Channel *channel) {
                if (!refusal.isEmpty()) {
                    channel->refuse(refusal);
                    return;
                }
                channel->accept();
                stream = channel;
                connect(channel, &Channel::readyRead, this,
                    [this, channel] { received += channel->readAll(); });
                connect(
                    channel, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
                        closedWith = code;
                        closedBecause = reason;
                    });
            });
        if (identity) {
            QSslConfiguration trustAll = QSslConfiguration::defaultConfiguration();
            trustAll.setPeerVerifyMode(QSslSocket::VerifyNone);
            socket->setSslConfiguration(trustAll);
        }
        socket->open(QUrl(QStringLiteral("%1://127.0.0.1:%2/")
                              .arg(identity ? QStringLiteral("wss") : QStringLiteral("ws"))
                              .arg(server.serverPort())));
    }

    bool ready()
    {
        return QTest::qWaitFor([this] { return !hub.isNull(); }, kWaitMs);
    }
    // The connection, once: the door's from then on.
    std::function<TunnelConnection *()> opener()
    {
        return [this] {
            ++opened;
            return hub.data();
        };
    }

    QWebSocketServer server;
    QPointer<TunnelConnection> hub;
    std::unique_ptr<TunnelConnection> daemon;
    QPointer<Channel> stream;
    QByteArray received;
    std::optional<CloseCode> closedWith;
    QString closedBecause;
    int opened = 0;
    // Refuses the stream with this reason rather than taking it.
    QString refusal;
};

// A stream whose two legs are in, on one relay thread.
struct JoinedPair
{
    RelayThreads threads { 1 };
    RelayLegDoor door { threads };
    Leg forwarder;
    Leg agent;
    std::unique_ptr<RelayedStream> stream;
};

// A stream the door expects, both ways of its ending watched.
struct ExpectedStream
{
    explicit ExpectedStream(
        std::chrono::milliseconds ticketLifetime = RelayLegDoor::kTicketLifetime)
        : door(threads, ticketLifetime)
        , expected(door.expect(planFor()))
        , stream(expected.stream)
        , ended(stream.get(), &RelayedStream::ended)
        , failed(stream.get(), &RelayedStream::legsFailed)
    { }

    RelayThreads threads { 1 };
    RelayLegDoor door;
    RelayLegDoor::Expected expected;
    std::unique_ptr<RelayedStream> stream;
    QSignalSpy ended;
    QSignalSpy failed;
};

} // namespace

class TestRelayLegDoor final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bothLegsAreSplicedOnARelayThread();
    void streamsSpreadOverTheThreads();
    void aTicketIsGoodOnceAtItsOwnSideOnly();
    void anotherDaemonsTicketEndsTheStream();
    void aLegThatDoesNotComeEndsTheStream();
    void aStreamRefusedOnALegBeforeItJoinedIsAFailureOfTheLegs();
    void aLegLostBeforeTheOtherCameIsAFailureOfTheLegs();
    void aLostLegEndsTheStreamAsLost();
    void aResumableAgentHearsTheForwardersEndAsLost();
    void endingTheStreamClosesBothLegs();
    void aLegAdmittedInTheMidstOfItsOwnReadMovesWhole();

private:
    // Both legs in, the stream joined: the stream (the test's to delete).
    RelayedStream *joined(
        RelayLegDoor &door, Leg &forwarder, Leg &agent, bool agentResumable = false);
    bool join(JoinedPair &pair, bool agentResumable = false)
    {
        pair.stream.reset(joined(pair.door, pair.forwarder, pair.agent, agentResumable));
        return pair.stream != nullptr;
    }
};

RelayedStream *TestRelayLegDoor::joined(
    RelayLegDoor &door, Leg &forwarder, Leg &agent, bool agentResumable)
{
    const RelayLegDoor::Expected expected = door.expect(planFor(agentResumable));
    std::unique_ptr<RelayedStream> stream(expected.stream);
    QSignalSpy joinedSpy(stream.get(), &RelayedStream::joined);
    if (!forwarder.ready() || !agent.ready())
        return nullptr;
    if (!door.admit(Side::Forwarder, kForwarder, expected.forwarderLeg.ticket, forwarder.opener())
        || !door.admit(Side::Agent, kExecutor, expected.agentLeg.ticket, agent.opener()))
        return nullptr;
    if (joinedSpy.isEmpty() && !joinedSpy.wait(kWaitMs))
        return nullptr;
    return stream.release();
}

void TestRelayLegDoor::bothLegsAreSplicedOnARelayThread()
{
    RelayThreads threads(2);
    RelayLegDoor door(threads);
    Leg forwarder;
    Leg agent;
    const RelayLegDoor::Expected expected = door.expect(planFor());
    QVERIFY(expected.forwarderLeg.url.isEmpty());
    QVERIFY(expected.agentLeg.url.isEmpty());
    QVERIFY(protocol::isValidStreamTicket(expected.forwarderLeg.ticket));
    QVERIFY(expected.forwarderLeg.ticket != expected.agentLeg.ticket);
    QVERIFY(door.knows(expected.agentLeg.ticket));
    std::unique_ptr<RelayedStream> stream(expected.stream);
    QSignalSpy joinedSpy(stream.get(), &RelayedStream::joined);
    QVERIFY(forwarder.ready() && agent.ready());
    QVERIFY(
        door.admit(Side::Forwarder, kForwarder, expected.forwarderLeg.ticket, forwarder.opener()));
    // One leg in: nothing opened yet.
    QTest::qWait(50);
    QVERIFY(!forwarder.stream);
    QVERIFY(door.admit(Side::Agent, kExecutor, expected.agentLeg.ticket, agent.opener()));
    QVERIFY(joinedSpy.wait(kWaitMs));
    QVERIFY(stream->isJoined());

    // Each daemon got its own opening, without a leg.
    QVERIFY(forwarder.stream && agent.stream);
    QCOMPARE(forwarder.stream->metadata(),
        protocol::serializeChannelOpen(protocol::SegmentOpen { 5, 6, {}, std::nullopt }));
    QCOMPARE(agent.stream->metadata(),
        protocol::serializeChannelOpen(protocol::AgentDeviceOpen { 5, 6, QStringLiteral("fwd-lab"),
            protocol::DeviceSpec::Kind::Segment, QString(), std::nullopt }));
    // Spliced there, not here.
    QVERIFY(forwarder.hub.isNull() || forwarder.hub->thread() != QThread::currentThread());
    const std::vector<int> carried = threads.carried();
    QCOMPARE(carried.at(0) + carried.at(1), 1);

    const QByteArray frames(200'000, 'f');
    const QByteArray answers(150'000, 'a');
    forwarder.stream->write(frames);
    agent.stream->write(answers);
    QTRY_COMPARE_WITH_TIMEOUT(agent.received.size(), frames.size(), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(forwarder.received.size(), answers.size(), kWaitMs);
    QCOMPARE(agent.received, frames);
    QCOMPARE(forwarder.received, answers);
    QTRY_COMPARE_WITH_TIMEOUT(stream->bytesToAgent(), quint64(frames.size()), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(stream->bytesToForwarder(), quint64(answers.size()), kWaitMs);
    // Used tickets are forgotten.
    QVERIFY(!door.knows(expected.agentLeg.ticket));
    QCOMPARE(door.waitingCount(), 0);
}

void TestRelayLegDoor::streamsSpreadOverTheThreads()
{
    RelayThreads threads(2);
    RelayLegDoor door(threads);
    Leg forwarderA, agentA, forwarderB, agentB;
    std::unique_ptr<RelayedStream> a(joined(door, forwarderA, agentA));
    std::unique_ptr<RelayedStream> b(joined(door, forwarderB, agentB));
    QVERIFY(a && b);
    QCOMPARE(threads.carried(), (std::vector<int> { 1, 1 }));
    QVERIFY(forwarderA.hub && forwarderB.hub);
    // Reading a QObject's thread from here is fine; it only changes here.
    QVERIFY(forwarderA.hub->thread() != forwarderB.hub->thread());
    // An ended stream's join goes, and its thread counts it no more.
    a->end(CloseCode::Normal, QStringLiteral("the run is over"));
    QTRY_COMPARE_WITH_TIMEOUT(threads.carried().at(0) + threads.carried().at(1), 1, kWaitMs);
}

void TestRelayLegDoor::aTicketIsGoodOnceAtItsOwnSideOnly()
{
    RelayThreads threads(1);
    RelayLegDoor door(threads);
    Leg forwarder;
    Leg stranger;
    const RelayLegDoor::Expected expected = door.expect(planFor());
    std::unique_ptr<RelayedStream> stream(expected.stream);
    QSignalSpy ended(stream.get(), &RelayedStream::ended);
    QVERIFY(forwarder.ready() && stranger.ready());

    // Unknown: refused, nothing opened.
    const QString unknown(43, u'x');
    const Status refused = door.admit(Side::Forwarder, kForwarder, unknown, stranger.opener());
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("stream_ticket_refused"));
    QCOMPARE(stranger.opened, 0);

    QVERIFY(
        door.admit(Side::Forwarder, kForwarder, expected.forwarderLeg.ticket, forwarder.opener()));
    // Again: used.
    QVERIFY(
        !door.admit(Side::Forwarder, kForwarder, expected.forwarderLeg.ticket, stranger.opener()));
    QCOMPARE(stranger.opened, 0);

    // The agent's ticket at the forwarders' endpoint, by the forwarder
    // itself: its secret is out, and the legs carry nothing (the hub's
    // authenticated tunnels carry the stream instead).
    QSignalSpy failed(stream.get(), &RelayedStream::legsFailed);
    const Status crossed
        = door.admit(Side::Forwarder, kForwarder, expected.agentLeg.ticket, stranger.opener());
    QVERIFY(!crossed);
    QCOMPARE(stranger.opened, 0);
    QCOMPARE(ended.count(), 0);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.first().at(0).toString().contains(QStringLiteral("was shown by forwarder 3")));
    QVERIFY(!door.knows(expected.agentLeg.ticket));
    // The leg that had come is closed.
    QSignalSpy gone(forwarder.daemon.get(), &TunnelConnection::disconnected);
    QVERIFY(gone.wait(kWaitMs));
}

void TestRelayLegDoor::anotherDaemonsTicketEndsTheStream()
{
    ExpectedStream awaited;
    Leg thief;
    QVERIFY(thief.ready());
    QVERIFY(!awaited.door.admit(Side::Agent, 9, awaited.expected.agentLeg.ticket, thief.opener()));
    QCOMPARE(thief.opened, 0);
    // Its legs carry nothing: the hub carries the stream on the tunnels.
    QCOMPARE(awaited.ended.count(), 0);
    QCOMPARE(awaited.failed.count(), 1);
    QVERIFY(awaited.failed.first().at(0).toString().contains(
        QStringLiteral("the ticket for executor 4's leg was shown by executor 9")));
    QVERIFY(awaited.stream->isOver());
    // The rightful forwarder comes too late: nothing for it either.
    QVERIFY(!awaited.door.knows(awaited.expected.forwarderLeg.ticket));
}

void TestRelayLegDoor::aLegThatDoesNotComeEndsTheStream()
{
    ExpectedStream awaited(300ms);
    Leg forwarder;
    QVERIFY(forwarder.ready());
    QVERIFY(awaited.door.admit(
        Side::Forwarder, kForwarder, awaited.expected.forwarderLeg.ticket, forwarder.opener()));
    QSignalSpy gone(forwarder.daemon.get(), &TunnelConnection::disconnected);
    QVERIFY(awaited.failed.wait(kWaitMs));
    QCOMPARE(awaited.failed.first().at(0).toString(),
        QStringLiteral("executor 4 did not come for its leg of the stream within 300 ms"));
    QCOMPARE(awaited.ended.count(), 0);
    QVERIFY(awaited.stream->isOver());
    QVERIFY(gone.wait(kWaitMs));
    QVERIFY(!awaited.door.knows(awaited.expected.agentLeg.ticket));
}

void TestRelayLegDoor::aStreamRefusedOnALegBeforeItJoinedIsAFailureOfTheLegs()
{
    ExpectedStream awaited;
    Leg forwarder;
    Leg agent;
    // As a daemon whose dial gave up just before its stream came refuses it.
    forwarder.refusal = QStringLiteral("this leg carries run 5's fwd-lab (binding 6) only");
    QSignalSpy joinedSpy(awaited.stream.get(), &RelayedStream::joined);
    QVERIFY(forwarder.ready() && agent.ready());
    QVERIFY(awaited.door.admit(
        Side::Forwarder, kForwarder, awaited.expected.forwarderLeg.ticket, forwarder.opener()));
    QVERIFY(awaited.door.admit(
        Side::Agent, kExecutor, awaited.expected.agentLeg.ticket, agent.opener()));
    QVERIFY(awaited.failed.wait(kWaitMs));
    QVERIFY2(awaited.failed.first().at(0).toString().contains(forwarder.refusal),
        qPrintable(awaited.failed.first().at(0).toString()));
    QCOMPARE(awaited.ended.count(), 0);
    QCOMPARE(joinedSpy.count(), 0);
    QVERIFY(awaited.stream->isOver());
}

void TestRelayLegDoor::aLegLostBeforeTheOtherCameIsAFailureOfTheLegs()
{
    ExpectedStream awaited;
    Leg forwarder;
    QVERIFY(forwarder.ready());
    QVERIFY(awaited.door.admit(
        Side::Forwarder, kForwarder, awaited.expected.forwarderLeg.ticket, forwarder.opener()));
    forwarder.daemon->abort(QStringLiteral("the forwarder's machine lost its network"));
    QVERIFY(awaited.failed.wait(kWaitMs));
    const QString reason = awaited.failed.first().at(0).toString();
    QVERIFY2(reason.startsWith(QStringLiteral("the forwarder's leg was lost")), qPrintable(reason));
    QCOMPARE(awaited.ended.count(), 0);
    // The agent's ticket went with the stream.
    QVERIFY(!awaited.door.knows(awaited.expected.agentLeg.ticket));
}

void TestRelayLegDoor::aLostLegEndsTheStreamAsLost()
{
    JoinedPair pair;
    QVERIFY(join(pair));
    auto &[threads, door, forwarder, agent, stream] = pair;
    QSignalSpy ended(stream.get(), &RelayedStream::ended);
    agent.daemon->abort(QStringLiteral("the agent's machine lost its network"));
    QVERIFY(ended.wait(kWaitMs));
    QCOMPARE(ended.first().at(0).value<CloseCode>(), CloseCode::ConnectionLost);
    QVERIFY2(ended.first().at(1).toString().startsWith(QStringLiteral("the agent's leg was lost")),
        qPrintable(ended.first().at(1).toString()));
    QTRY_VERIFY_WITH_TIMEOUT(forwarder.closedWith.has_value(), kWaitMs);
    QCOMPARE(*forwarder.closedWith, CloseCode::ConnectionLost);
}

void TestRelayLegDoor::aResumableAgentHearsTheForwardersEndAsLost()
{
    JoinedPair pair;
    QVERIFY(join(pair, true));
    auto &[threads, door, forwarder, agent, stream] = pair;
    forwarder.stream->close(CloseCode::Normal, QStringLiteral("the forwarder is restarting"));
    QTRY_VERIFY_WITH_TIMEOUT(agent.closedWith.has_value(), kWaitMs);
    QCOMPARE(*agent.closedWith, CloseCode::ConnectionLost);
}

void TestRelayLegDoor::endingTheStreamClosesBothLegs()
{
    JoinedPair pair;
    QVERIFY(join(pair));
    auto &[threads, door, forwarder, agent, stream] = pair;
    QSignalSpy ended(stream.get(), &RelayedStream::ended);
    QSignalSpy forwarderGone(forwarder.daemon.get(), &TunnelConnection::disconnected);
    QSignalSpy agentGone(agent.daemon.get(), &TunnelConnection::disconnected);
    stream->end(CloseCode::Normal, QStringLiteral("binding 6 ended"));
    QVERIFY(forwarderGone.count() == 1 || forwarderGone.wait(kWaitMs));
    QVERIFY(agentGone.count() == 1 || agentGone.wait(kWaitMs));
    // Each daemon read why before its leg went.
    QCOMPARE(forwarder.closedWith, CloseCode::Normal);
    QCOMPARE(agent.closedWith, CloseCode::Normal);
    QCOMPARE(agent.closedBecause, QStringLiteral("binding 6 ended"));
    // Ended here: no ended().
    QCOMPARE(ended.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(threads.carried().at(0), 0, kWaitMs);
}

void TestRelayLegDoor::aLegAdmittedInTheMidstOfItsOwnReadMovesWhole()
{
    // The gateway admits a leg from the handler of its hello, deep in its
    // TLS socket's read, after writing the welcome: the TLS layer still
    // writes to the socket as that read unwinds, so the leg may not have
    // moved to its relay thread by then.
    QTemporaryDir folder;
    auto identity = testsupport::makeDevIdentity(
        folder.path(), QStringLiteral("hub"), { QStringLiteral("127.0.0.1") });
    QVERIFY2(identity, qPrintable(identity ? QString() : identity.error().message));
    QTest::failOnWarning(QRegularExpression(QStringLiteral("thread")));
    RelayThreads threads(1);
    RelayLegDoor door(threads);
    Leg forwarder(&*identity);
    Leg agent(&*identity);
    const RelayLegDoor::Expected expected = door.expect(planFor());
    QVERIFY(forwarder.ready() && agent.ready());
    QVERIFY(
        door.admit(Side::Forwarder, kForwarder, expected.forwarderLeg.ticket, forwarder.opener()));
    std::unique_ptr<RelayedStream> stream(expected.stream);
    QSignalSpy joined(stream.get(), &RelayedStream::joined);
    auto *agentEnd = static_cast<net::QtMessageSocket *>(agent.hub->socket())->webSocket();
    std::optional<Status> admitted;
    connect(agentEnd, &QWebSocket::pong, this, [&] {
        if (admitted)
            return;
        agentEnd->ping(QByteArrayLiteral("welcome"));
        admitted = door.admit(Side::Agent, kExecutor, expected.agentLeg.ticket, agent.opener());
    });
    agentEnd->ping();
    QVERIFY(QTest::qWaitFor([&] { return admitted.has_value(); }, kWaitMs));
    QVERIFY2(*admitted, qPrintable(admitted->error().message));
    QVERIFY(joined.count() == 1 || joined.wait(kWaitMs));

    // Bytes cross both ways on the relay thread.
    QTRY_VERIFY_WITH_TIMEOUT(forwarder.stream && agent.stream, kWaitMs);
    forwarder.stream->write(QByteArrayLiteral("to the agent"));
    agent.stream->write(QByteArrayLiteral("to the forwarder"));
    QTRY_COMPARE_WITH_TIMEOUT(agent.received, QByteArrayLiteral("to the agent"), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(forwarder.received, QByteArrayLiteral("to the forwarder"), kWaitMs);
}

QTEST_GUILESS_MAIN(TestRelayLegDoor)
#include "tst_relaylegdoor.moc"
