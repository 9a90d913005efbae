// The holder's door for direct legs (hub/cluster/directstreamdoor.h): the
// asking member's link and the forwarder's tunnel are multiplexers back to
// back (tests/support/multiplexerpair.h) behind a PeerRelay, as on a
// member; the agent's own connection is a real WebSocket on loopback.

#include "common/net/qtmessagesocket.h"
#include "common/tunnel/channelsplice.h"
#include "common/tunnel/tunnelconnection.h"
#include "hub/cluster/directstreamdoor.h"
#include "hub/cluster/peerrelay.h"
#include "hub/cluster/peerrelayopen.h"
#include "support/multiplexerpair.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

#include <memory>

using namespace cloop;
using namespace cloop::hub;
using protocol::CloseCode;
using tunnel::Channel;
using tunnel::TunnelConnection;

namespace {

constexpr int kWaitMs = 10'000;
constexpr qint64 kExecutor = 4;
constexpr qint64 kOtherExecutor = 9;

PeerDirectLeg legFor(const QString &ticket)
{
    return PeerDirectLeg { ticket, kExecutor,
        protocol::AgentDeviceOpen { 5, 6, QStringLiteral("fwd-lab"),
            protocol::DeviceSpec::Kind::Segment, QString(), std::nullopt } };
}

// An agent's connection to the holder: the hub's end for the door, the
// agent's end accepting the stream it is sent.
class AgentLink final : public QObject
{
public:
    AgentLink()
    {
        server.listen(QHostAddress::LocalHost, 0);
        connect(&server, &QWebSocketServer::newConnection, this, [this] {
            hub = new TunnelConnection(new net::QtMessageSocket(server.nextPendingConnection()),
                tunnel::ChannelMultiplexer::Side::Hub);
        });
        auto *socket = new QWebSocket;
        agent = std::make_unique<TunnelConnection>(
            new net::QtMessageSocket(socket), tunnel::ChannelMultiplexer::Side::Daemon);
        connect(agent->channels(), &tunnel::ChannelMultiplexer::channelRequested, this,
            [this](Channel *channel) {
                channel->accept();
                atAgent.append(channel);
            });
        socket->open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(server.serverPort())));
    }
    ~AgentLink() override { delete hub.data(); }

    bool ready()
    {
        return QTest::qWaitFor([this] { return !hub.isNull(); }, kWaitMs);
    }

    QWebSocketServer server { QStringLiteral("tst_directstreamdoor"),
        QWebSocketServer::NonSecureMode };
    QPointer<TunnelConnection> hub;
    std::unique_ptr<TunnelConnection> agent;
    QList<QPointer<Channel>> atAgent;
};

class Rig final : public QObject
{
public:
    explicit Rig(std::chrono::milliseconds lifetime = DirectStreamDoor::kTicketLifetime)
        : door(lifetime)
        , relay([this](qint64, const QJsonObject &open, const PeerMember &) -> Result<Channel *> {
            return forwarder.hub.openChannel(open);
        })
    {
        asking.id = 2;
        asking.name = QStringLiteral("hub-b");
        relay.setDirectStreamDoor(&door);
        relay.adopt(asking, &peer.hub);
        connect(&forwarder.daemon, &tunnel::ChannelMultiplexer::channelRequested, this,
            [this](Channel *channel) {
                channel->accept();
                atForwarder.append(channel);
            });
    }

    // The asking member's handle, once the holder accepted it.
    Channel *ask(const QString &ticket)
    {
        auto handle = peer.daemon.openChannel(
            PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }, legFor(ticket))
                .toMetadata());
        if (!handle
            || !QTest::qWaitFor(
                [&] {
                    return (*handle)->state() == Channel::State::Open && !atForwarder.isEmpty();
                },
                kWaitMs))
            return nullptr;
        return *handle;
    }

    // An agent authenticated as `executor` comes with `ticket` on `to`
    // (the rig's own link unless named); `opened` counts what the door took.
    Status admit(qint64 executor, const QString &ticket, AgentLink *to = nullptr)
    {
        AgentLink *target = to ? to : &link;
        return door.admit(executor, ticket, [this, target]() {
            ++opened;
            return target->hub.data();
        });
    }

    // A leg asked for and taken by its executor, streaming: its handle.
    Channel *streaming(const QString &ticket)
    {
        Channel *handle = ask(ticket);
        if (!handle || !link.ready() || !admit(kExecutor, ticket)
            || !QTest::qWaitFor([this] { return door.streamCount() == 1; }, kWaitMs))
            return nullptr;
        return handle;
    }

    DirectStreamDoor door;
    testing::MultiplexerPair peer;
    testing::MultiplexerPair forwarder;
    PeerRelay relay;
    PeerMember asking;
    QList<QPointer<Channel>> atForwarder;
    AgentLink link;
    int opened = 0;
};

QString ticket(QChar fill)
{
    return QString(43, fill);
}

bool isClosed(const QPointer<Channel> &channel)
{
    const Channel *alive = channel.data();
    return !alive || alive->state() == Channel::State::Closed;
}

} // namespace

class TestDirectStreamDoor final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theAgentsBytesGoStraightToTheForwarderAndBack();
    void aTicketIsGoodOnce();
    void anotherExecutorShowingTheTicketEndsTheLeg();
    void aTicketNobodyCameForExpires();
    void theAskingMemberEndingTheHandleEndsTheStream();
    void theForwarderEndingTheStreamEndsTheHandle();
    void aRelayWithoutADoorRefusesALeg();
};

void TestDirectStreamDoor::theAgentsBytesGoStraightToTheForwarderAndBack()
{
    Rig rig;
    QVERIFY(rig.link.ready());
    Channel *handle = rig.ask(ticket(u'a'));
    QVERIFY(handle);
    QCOMPARE(rig.door.waitingCount(), 1);

    const Status admitted = rig.admit(kExecutor, ticket(u'a'));
    QVERIFY2(admitted, qPrintable(admitted ? QString() : admitted.error().message));
    QCOMPARE(rig.opened, 1);
    AgentLink &link = rig.link;
    QTRY_COMPARE_WITH_TIMEOUT(link.atAgent.size(), 1, kWaitMs);
    const auto open = protocol::AgentDeviceOpen::fromMetadata(link.atAgent.first()->metadata());
    QVERIFY(open);
    QCOMPARE(*open, legFor(ticket(u'a')).agentOpen);
    QTRY_COMPARE_WITH_TIMEOUT(rig.door.streamCount(), 1, kWaitMs);
    QCOMPARE(rig.door.waitingCount(), 0);

    Channel *agent = link.atAgent.first();
    Channel *forwarder = rig.atForwarder.first();
    QByteArray fromForwarder;
    QByteArray fromAgent;
    connect(agent, &Channel::readyRead, this, [&] { fromForwarder += agent->readAll(); });
    connect(forwarder, &Channel::readyRead, this, [&] { fromAgent += forwarder->readAll(); });
    const QByteArray up(200'000, 'u');
    const QByteArray down(150'000, 'd');
    QVERIFY(agent->write(up.left(60'000)));
    QVERIFY(forwarder->write(down.left(60'000)));
    QTRY_COMPARE_WITH_TIMEOUT(fromAgent.size(), 60'000, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(fromForwarder.size(), 60'000, kWaitMs);
    QCOMPARE(fromAgent, up.left(60'000));
    QCOMPARE(fromForwarder, down.left(60'000));
    // Nothing went over the asking member's link.
    QCOMPARE(handle->bytesReceived(), 0u);
    QCOMPARE(rig.door.bytesToForwarders(), 60'000u);
    QCOMPARE(rig.door.bytesToAgents(), 60'000u);
    // Counted for the binding, here: the asking member carried none of it.
    const auto byBinding = rig.door.carriedByBinding();
    QCOMPARE(byBinding.size(), std::size_t(1));
    QCOMPARE(byBinding.at(6).toAgent, 60'000u);
    QCOMPARE(byBinding.at(6).toForwarder, 60'000u);
}

void TestDirectStreamDoor::aTicketIsGoodOnce()
{
    Rig rig;
    QVERIFY(rig.streaming(ticket(u'b')));

    // The same ticket again, by the same executor: refused, nothing opened.
    AgentLink again;
    QVERIFY(again.ready());
    const Status reused = rig.admit(kExecutor, ticket(u'b'), &again);
    QVERIFY(!reused);
    QCOMPARE(reused.error().code, QStringLiteral("stream_ticket_refused"));
    QVERIFY(reused.error().message.contains(QStringLiteral("unknown, used or expired")));
    QCOMPARE(rig.opened, 1);
    // A ticket never issued is refused the same way.
    QVERIFY(!rig.admit(kExecutor, ticket(u'z'), &again));
    QCOMPARE(rig.opened, 1);
    QCOMPARE(rig.door.streamCount(), 1);
}

void TestDirectStreamDoor::anotherExecutorShowingTheTicketEndsTheLeg()
{
    Rig rig;
    QVERIFY(rig.link.ready());
    QPointer<Channel> handle = rig.ask(ticket(u'c'));
    QVERIFY(handle);
    QPointer<Channel> forwarder = rig.atForwarder.first();
    QSignalSpy handleClosed(handle.data(), &Channel::closed);

    const Status stolen = rig.admit(kOtherExecutor, ticket(u'c'));
    QVERIFY(!stolen);
    QVERIFY(stolen.error().message.contains(QStringLiteral("not this executor's")));
    QCOMPARE(rig.opened, 0);

    // Its secret is out: the leg is over for its own executor too, and the
    // asking member hears why.
    QVERIFY(!rig.admit(kExecutor, ticket(u'c')));
    QCOMPARE(rig.opened, 0);
    QTRY_VERIFY_WITH_TIMEOUT(!handleClosed.isEmpty(), kWaitMs);
    QCOMPARE(handleClosed.first().at(0).value<CloseCode>(), CloseCode::Refused);
    QVERIFY(handleClosed.first().at(1).toString().contains(QStringLiteral("executor 9")));
    QTRY_VERIFY_WITH_TIMEOUT(isClosed(forwarder), kWaitMs);
    QCOMPARE(rig.door.waitingCount(), 0);
}

void TestDirectStreamDoor::aTicketNobodyCameForExpires()
{
    Rig rig(std::chrono::milliseconds(200));
    QPointer<Channel> handle = rig.ask(ticket(u'd'));
    QVERIFY(handle);
    QSignalSpy handleClosed(handle.data(), &Channel::closed);
    QTRY_VERIFY_WITH_TIMEOUT(!handleClosed.isEmpty(), kWaitMs);
    QVERIFY(handleClosed.first().at(1).toString().contains(QStringLiteral("did not come")));
    QTRY_VERIFY_WITH_TIMEOUT(isClosed(rig.atForwarder.first()), kWaitMs);

    QVERIFY(rig.link.ready());
    QVERIFY(!rig.admit(kExecutor, ticket(u'd')));
    QCOMPARE(rig.opened, 0);
}

void TestDirectStreamDoor::theAskingMemberEndingTheHandleEndsTheStream()
{
    Rig rig;
    Channel *handle = rig.streaming(ticket(u'e'));
    QVERIFY(handle);
    QTRY_COMPARE_WITH_TIMEOUT(rig.link.atAgent.size(), 1, kWaitMs);
    QPointer<Channel> agent = rig.link.atAgent.first();
    QSignalSpy agentClosed(agent.data(), &Channel::closed);

    handle->close(CloseCode::Normal, QStringLiteral("the run ended"));

    QTRY_VERIFY_WITH_TIMEOUT(!agentClosed.isEmpty(), kWaitMs);
    QCOMPARE(agentClosed.first().at(1).toString(), QStringLiteral("the run ended"));
    QTRY_VERIFY_WITH_TIMEOUT(isClosed(rig.atForwarder.first()), kWaitMs);
    QCOMPARE(rig.door.streamCount(), 0);
    // The agent's connection goes with its only stream.
    QTRY_VERIFY_WITH_TIMEOUT(!rig.link.agent->isOpen(), kWaitMs);
}

void TestDirectStreamDoor::theForwarderEndingTheStreamEndsTheHandle()
{
    Rig rig;
    QPointer<Channel> handle = rig.streaming(ticket(u'f'));
    QVERIFY(handle);
    QSignalSpy handleClosed(handle.data(), &Channel::closed);
    QTRY_COMPARE_WITH_TIMEOUT(rig.link.atAgent.size(), 1, kWaitMs);

    rig.atForwarder.first()->close(CloseCode::DeviceGone, QStringLiteral("unplugged"));

    QTRY_VERIFY_WITH_TIMEOUT(!handleClosed.isEmpty(), kWaitMs);
    QCOMPARE(handleClosed.first().at(0).value<CloseCode>(), CloseCode::DeviceGone);
    QCOMPARE(handleClosed.first().at(1).toString(), QStringLiteral("unplugged"));
    QTRY_VERIFY_WITH_TIMEOUT(isClosed(rig.link.atAgent.first()), kWaitMs);
}

void TestDirectStreamDoor::aRelayWithoutADoorRefusesALeg()
{
    testing::MultiplexerPair peer;
    int asked = 0;
    PeerRelay relay([&asked](qint64, const QJsonObject &, const PeerMember &) -> Result<Channel *> {
        ++asked;
        return Error::make(QStringLiteral("x"), QStringLiteral("never"));
    });
    relay.adopt(PeerMember {}, &peer.hub);
    auto handle = peer.daemon.openChannel(
        PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }, legFor(ticket(u'g')))
            .toMetadata());
    QVERIFY(handle);
    QSignalSpy closed(*handle, &Channel::closed);
    QTRY_VERIFY_WITH_TIMEOUT(!closed.isEmpty(), kWaitMs);
    QVERIFY(closed.first().at(1).toString().contains(QStringLiteral("no direct legs")));
    QCOMPARE(asked, 0);
}

QTEST_GUILESS_MAIN(TestDirectStreamDoor)
#include "tst_directstreamdoor.moc"
