// The relay on the member holding a forwarder's tunnel, without sockets:
// the asking member's link and the forwarder's tunnel are each a pair of
// multiplexers back to back (tests/support/multiplexerpair.h), and the
// forwarder accepts whatever it is asked. Also the relay's opening read
// and written (hub/cluster/peerrelayopen.h).

#include "hub/cluster/peerrelay.h"
#include "hub/cluster/peerrelayopen.h"
#include "support/multiplexerpair.h"

#include <QJsonArray>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace cloop;
using namespace cloop::hub;
using protocol::CloseCode;
using tunnel::Channel;

namespace {

constexpr int kWaitMs = 10'000;

PeerDirectLeg directLeg()
{
    return PeerDirectLeg { QString(43, u't'), 4,
        protocol::AgentDeviceOpen { 5, 6, QStringLiteral("fwd-lab"),
            protocol::DeviceSpec::Kind::Segment, QString(), std::nullopt } };
}

QJsonObject segmentOpening()
{
    return protocol::serializeChannelOpen(protocol::SegmentOpen { 5, 6, {}, std::nullopt });
}

// The holder (peer.hub, forwarder.hub) between an asking member
// (peer.daemon) and a forwarder (forwarder.daemon).
class Rig final : public QObject
{
public:
    Rig()
        : relay([this](qint64 forwarderId, const QJsonObject &open,
                    const PeerMember &from) -> Result<Channel *> {
            asked.append({ forwarderId, open, from.id });
            if (refusal)
                return *refusal;
            return forwarder.hub.openChannel(open);
        })
    {
        asking.id = 2;
        asking.name = QStringLiteral("hub-b");
        relay.adopt(asking, &peer.hub);
        connect(&forwarder.daemon, &tunnel::ChannelMultiplexer::channelRequested, this,
            [this](Channel *channel) {
                channel->accept();
                atForwarder.append(channel);
            });
    }

    struct Asked
    {
        qint64 forwarderId;
        QJsonObject open;
        qint64 from;
    };

    // A relay channel from the asking member, once the forwarder has its end.
    Channel *open(qint64 forwarderId = 7)
    {
        auto channel = peer.daemon.openChannel(
            PeerRelayOpen::of(forwarderId, protocol::SegmentOpen { 5, 6, {}, std::nullopt })
                .toMetadata());
        if (!channel)
            return nullptr;
        const qsizetype before = atForwarder.size();
        if (!QTest::qWaitFor(
                [&] {
                    return atForwarder.size() > before
                        && (*channel)->state() == Channel::State::Open;
                },
                kWaitMs))
            return nullptr;
        return *channel;
    }

    testing::MultiplexerPair peer;
    testing::MultiplexerPair forwarder;
    PeerMember asking;
    std::optional<Error> refusal;
    QList<Asked> asked;
    QList<QPointer<Channel>> atForwarder;
    PeerRelay relay;
};

} // namespace

class TestPeerRelay final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void openingRoundTrips();
    void openingRefusesWhatIsMalformed_data();
    void openingRefusesWhatIsMalformed();
    void openingIgnoresFieldsItDoesNotKnow();
    void aDirectLegThatIsMalformedIsRefused_data();
    void aDirectLegThatIsMalformedIsRefused();

    void carriesBytesBothWaysAndCountsThem();
    void refusesMalformedMetadataSayingWhy();
    void refusesOtherKindsOfChannel();
    void passesTheForwardersRefusalOn();
    void endsWhenTheAskingMembersLinkGoes();
    void endsWhenTheForwardersTunnelGoes();

private:
    // Reads the row's metadata and checks the refusal names what is wrong.
    void refusedOpening();

    std::unique_ptr<Rig> m_rig;
};

void TestPeerRelay::init()
{
    m_rig = std::make_unique<Rig>();
}

void TestPeerRelay::cleanup()
{
    m_rig.reset();
}

void TestPeerRelay::openingRoundTrips()
{
    const auto usbTest = PeerRelayOpen::of(
        12, protocol::UsbOpen { protocol::UsbOpen::Purpose::Test, 0, 0, {}, std::nullopt });
    const QJsonObject metadata = usbTest.toMetadata();
    QCOMPARE(metadata.value(QLatin1String("kind")).toString(), QStringLiteral("peer.relay"));
    QCOMPARE(metadata.value(QLatin1String("forwarder_id")).toInteger(), 12);
    const auto parsed = PeerRelayOpen::fromMetadata(metadata);
    QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
    QCOMPARE(*parsed, usbTest);

    const auto segment = PeerRelayOpen::of(3, protocol::SegmentOpen { 5, 6, {}, std::nullopt });
    const auto parsedSegment = PeerRelayOpen::fromMetadata(segment.toMetadata());
    QVERIFY(parsedSegment);
    QCOMPARE(parsedSegment->open, segmentOpening());
    QVERIFY(!parsedSegment->direct);

    const auto direct
        = PeerRelayOpen::of(3, protocol::SegmentOpen { 5, 6, {}, std::nullopt }, directLeg());
    const auto parsedDirect = PeerRelayOpen::fromMetadata(direct.toMetadata());
    QVERIFY2(parsedDirect, qPrintable(parsedDirect ? QString() : parsedDirect.error().message));
    QCOMPARE(*parsedDirect, direct);
}

void TestPeerRelay::openingRefusesWhatIsMalformed_data()
{
    QTest::addColumn<QJsonObject>("metadata");
    QTest::addColumn<QString>("expected");

    const QJsonObject open = segmentOpening();
    const auto relay = [&](const QJsonValue &id, const QJsonValue &opening) {
        QJsonObject metadata { { QStringLiteral("kind"), QStringLiteral("peer.relay") } };
        if (!id.isUndefined())
            metadata.insert(QStringLiteral("forwarder_id"), id);
        if (!opening.isUndefined())
            metadata.insert(QStringLiteral("open"), opening);
        return metadata;
    };

    QJsonObject otherKind = relay(7, open);
    otherKind.insert(QStringLiteral("kind"), QStringLiteral("usb"));
    QTest::newRow("another kind") << otherKind << "a peer.relay channel was expected, not \"usb\"";
    QJsonObject noKind = relay(7, open);
    noKind.remove(QStringLiteral("kind"));
    QTest::newRow("no kind") << noKind << "the opening has no \"kind\"";
    QTest::newRow("no forwarder") << relay(QJsonValue::Undefined, open)
                                  << "\"forwarder_id\" must be an integer";
    QTest::newRow("negative forwarder") << relay(-4, open) << "\"forwarder_id\" = -4 is outside";
    QTest::newRow("forwarder zero") << relay(0, open) << "\"forwarder_id\" = 0 is outside";
    QTest::newRow("fractional forwarder")
        << relay(1.5, open) << "\"forwarder_id\" must be an integer";
    QTest::newRow("forwarder as text")
        << relay(QStringLiteral("7"), open) << "\"forwarder_id\" must be an integer";
    QTest::newRow("no open") << relay(7, QJsonValue::Undefined) << "\"open\" must be an object";
    QTest::newRow("open not an object")
        << relay(7, QJsonArray { open }) << "\"open\" must be an object";
    QTest::newRow("open of no known kind")
        << relay(7, QJsonObject { { QStringLiteral("kind"), QStringLiteral("nope") } })
        << "unknown channel kind \"nope\"";
    QTest::newRow("open for an agent")
        << relay(7, protocol::serializeChannelOpen(protocol::RunLogOpen { 9 }))
        << "a forwarder is never opened for \"run-log\"";
    QTest::newRow("open malformed") << relay(7,
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") },
            { QStringLiteral("run_id"), -1 }, { QStringLiteral("binding_id"), 6 } })
                                    << "\"run_id\" = -1 is outside";
}

void TestPeerRelay::openingRefusesWhatIsMalformed()
{
    refusedOpening();
}

void TestPeerRelay::aDirectLegThatIsMalformedIsRefused_data()
{
    QTest::addColumn<QJsonObject>("metadata");
    QTest::addColumn<QString>("expected");
    const auto withLeg = [](const QJsonValue &leg,
                             const protocol::ChannelOpen &open
                             = protocol::SegmentOpen { 5, 6, {}, std::nullopt }) {
        QJsonObject metadata = PeerRelayOpen::of(7, open).toMetadata();
        metadata.insert(QStringLiteral("direct"), leg);
        return metadata;
    };
    const QJsonObject leg
        = PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }, directLeg())
              .toMetadata()
              .value(QLatin1String("direct"))
              .toObject();
    const auto changed = [&leg](const QString &key, const QJsonValue &value) {
        QJsonObject copy = leg;
        copy.insert(key, value);
        return copy;
    };
    QJsonObject agentOf = directLeg().agentOpen.toMetadata();
    QTest::newRow("leg not an object") << withLeg(QStringLiteral("yes")) << "must be an object";
    QTest::newRow("ticket too short")
        << withLeg(changed(QStringLiteral("ticket"), QStringLiteral("abc")))
        << "is not a stream ticket";
    QTest::newRow("executor zero")
        << withLeg(changed(QStringLiteral("executor_id"), 0)) << "\"executor_id\" = 0 is outside";
    QTest::newRow("agent not an object")
        << withLeg(changed(QStringLiteral("agent"), 3)) << "\"agent\" must be an object";
    agentOf.insert(QStringLiteral("run_id"), 99);
    QTest::newRow("agent of another run")
        << withLeg(changed(QStringLiteral("agent"), agentOf)) << "another run or binding";
    QJsonObject agentWithLeg = directLeg().agentOpen.toMetadata();
    agentWithLeg.insert(QStringLiteral("direct"),
        QJsonObject { { QStringLiteral("url"), QStringLiteral("wss://x:1") },
            { QStringLiteral("ticket"), directLeg().ticket } });
    QTest::newRow("agent with a leg of its own")
        << withLeg(changed(QStringLiteral("agent"), agentWithLeg)) << "a direct leg of its own";
    QTest::newRow("agent's USB device for a segment") << withLeg(changed(QStringLiteral("agent"),
        protocol::AgentDeviceOpen { 5, 6, QStringLiteral("fwd-lab"),
            protocol::DeviceSpec::Kind::Usb, QStringLiteral("1-1"), std::nullopt }
            .toMetadata())) << "another kind of device";
    QTest::newRow("a Test with a leg")
        << withLeg(leg, protocol::DeviceTestOpen {}) << "only a run's device stream";
}

void TestPeerRelay::aDirectLegThatIsMalformedIsRefused()
{
    refusedOpening();
}

void TestPeerRelay::refusedOpening()
{
    QFETCH(QJsonObject, metadata);
    QFETCH(QString, expected);
    const auto parsed = PeerRelayOpen::fromMetadata(metadata);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY2(parsed.error().message.contains(expected), qPrintable(parsed.error().message));
}

void TestPeerRelay::openingIgnoresFieldsItDoesNotKnow()
{
    QJsonObject metadata
        = PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }).toMetadata();
    metadata.insert(QStringLiteral("trace"), QStringLiteral("from a newer member"));
    QJsonObject open = segmentOpening();
    open.insert(QStringLiteral("hint"), 1);
    metadata.insert(QStringLiteral("open"), open);
    const auto parsed = PeerRelayOpen::fromMetadata(metadata);
    QVERIFY(parsed);
    QCOMPARE(parsed->forwarderId, 7);
    // What reaches the forwarder is the opening as the protocol writes it.
    QCOMPARE(parsed->open, segmentOpening());
}

void TestPeerRelay::carriesBytesBothWaysAndCountsThem()
{
    QSignalSpy started(&m_rig->relay, &PeerRelay::relayStarted);
    QSignalSpy ended(&m_rig->relay, &PeerRelay::relayEnded);
    QPointer<Channel> asking = m_rig->open(7);
    QVERIFY(asking);
    QCOMPARE(m_rig->asked.size(), 1);
    QCOMPARE(m_rig->asked[0].forwarderId, 7);
    QCOMPARE(m_rig->asked[0].from, 2);
    QCOMPARE(m_rig->asked[0].open, segmentOpening());
    QCOMPARE(started.size(), 1);
    QCOMPARE(m_rig->relay.relayCount(), 1);
    QPointer<Channel> device = m_rig->atForwarder.constLast();
    QCOMPARE(device->metadata(), segmentOpening());

    QVERIFY(asking->write("to the device"));
    QTRY_COMPARE_WITH_TIMEOUT(device->bytesAvailable(), 13, kWaitMs);
    QCOMPARE(device->readAll(), QByteArray("to the device"));
    QVERIFY(device->write("from the device"));
    QTRY_COMPARE_WITH_TIMEOUT(asking->bytesAvailable(), 15, kWaitMs);
    QCOMPARE(asking->readAll(), QByteArray("from the device"));
    QCOMPARE(m_rig->relay.bytesToForwarders(), quint64(13));
    QCOMPARE(m_rig->relay.bytesToPeers(), quint64(15));

    QSignalSpy deviceClosed(device.data(), &Channel::closed);
    asking->close();
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(deviceClosed.size(), 1, kWaitMs);
    QCOMPARE(deviceClosed[0][0].value<CloseCode>(), CloseCode::Normal);
    QCOMPARE(m_rig->relay.relayCount(), 0);
    // Counted still, once ended.
    QCOMPARE(m_rig->relay.bytesToForwarders(), quint64(13));
    QCOMPARE(m_rig->relay.bytesToPeers(), quint64(15));
}

void TestPeerRelay::refusesMalformedMetadataSayingWhy()
{
    QSignalSpy refused(&m_rig->relay, &PeerRelay::relayRefused);
    QJsonObject metadata
        = PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }).toMetadata();
    metadata.insert(QStringLiteral("forwarder_id"), -1);
    auto channel = m_rig->peer.daemon.openChannel(metadata);
    QVERIFY(channel);
    QSignalSpy closed(*channel, &Channel::closed);
    QVERIFY(closed.wait(kWaitMs));
    QCOMPARE(closed[0][0].value<CloseCode>(), CloseCode::Refused);
    QVERIFY2(closed[0][1].toString().contains(QLatin1String("\"forwarder_id\" = -1 is outside")),
        qPrintable(closed[0][1].toString()));
    QCOMPARE(refused.size(), 1);
    QCOMPARE(m_rig->relay.refusedCount(), quint64(1));
    // The forwarder was never asked.
    QVERIFY(m_rig->asked.isEmpty());
    QVERIFY(m_rig->atForwarder.isEmpty());
}

void TestPeerRelay::refusesOtherKindsOfChannel()
{
    auto channel = m_rig->peer.daemon.openChannel(
        protocol::serializeChannelOpen(protocol::SegmentOpen { 5, 6, {}, std::nullopt }));
    QVERIFY(channel);
    QSignalSpy closed(*channel, &Channel::closed);
    QVERIFY(closed.wait(kWaitMs));
    QCOMPARE(closed[0][0].value<CloseCode>(), CloseCode::Refused);
    QVERIFY2(closed[0][1].toString().contains(
                 QLatin1String("a peer.relay channel was expected, not \"segment\"")),
        qPrintable(closed[0][1].toString()));
    QVERIFY(m_rig->asked.isEmpty());
}

void TestPeerRelay::passesTheForwardersRefusalOn()
{
    m_rig->refusal = Error::make(
        QStringLiteral("forwarder_offline"), QStringLiteral("forwarder 7 is not connected here"));
    auto channel = m_rig->peer.daemon.openChannel(
        PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }).toMetadata());
    QVERIFY(channel);
    QSignalSpy closed(*channel, &Channel::closed);
    QVERIFY(closed.wait(kWaitMs));
    QCOMPARE(closed[0][0].value<CloseCode>(), CloseCode::Refused);
    QCOMPARE(closed[0][1].toString(), QStringLiteral("forwarder 7 is not connected here"));
    QCOMPARE(m_rig->asked.size(), 1);
    QCOMPARE(m_rig->relay.relayCount(), 0);

    // A forwarder that takes the channel and then refuses it: the refusal
    // reaches the asking member as it was said.
    m_rig->refusal.reset();
    disconnect(&m_rig->forwarder.daemon, nullptr, m_rig.get(), nullptr);
    connect(&m_rig->forwarder.daemon, &tunnel::ChannelMultiplexer::channelRequested, m_rig.get(),
        [](Channel *request) { request->refuse(QStringLiteral("the device is busy")); });
    auto second = m_rig->peer.daemon.openChannel(
        PeerRelayOpen::of(7, protocol::SegmentOpen { 5, 6, {}, std::nullopt }).toMetadata());
    QVERIFY(second);
    QSignalSpy secondClosed(*second, &Channel::closed);
    QVERIFY(secondClosed.wait(kWaitMs));
    QCOMPARE(secondClosed[0][0].value<CloseCode>(), CloseCode::Refused);
    QCOMPARE(secondClosed[0][1].toString(), QStringLiteral("the device is busy"));
    QTRY_COMPARE_WITH_TIMEOUT(m_rig->relay.relayCount(), 0, kWaitMs);
}

void TestPeerRelay::endsWhenTheAskingMembersLinkGoes()
{
    QSignalSpy ended(&m_rig->relay, &PeerRelay::relayEnded);
    QPointer<Channel> asking = m_rig->open();
    QVERIFY(asking);
    QPointer<Channel> device = m_rig->atForwarder.constLast();
    QSignalSpy deviceClosed(device.data(), &Channel::closed);

    m_rig->peer.hub.closeAll(QStringLiteral("the link to hub member 2 was lost"));
    QTRY_COMPARE_WITH_TIMEOUT(deviceClosed.size(), 1, kWaitMs);
    QCOMPARE(deviceClosed[0][0].value<CloseCode>(), CloseCode::ConnectionLost);
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended[0][2].value<CloseCode>(), CloseCode::ConnectionLost);
    QCOMPARE(m_rig->relay.relayCount(), 0);
}

void TestPeerRelay::endsWhenTheForwardersTunnelGoes()
{
    QSignalSpy ended(&m_rig->relay, &PeerRelay::relayEnded);
    QPointer<Channel> asking = m_rig->open();
    QVERIFY(asking);
    QSignalSpy askingClosed(asking.data(), &Channel::closed);

    m_rig->forwarder.hub.closeAll(QStringLiteral("forwarder 7's tunnel was lost"));
    QTRY_COMPARE_WITH_TIMEOUT(askingClosed.size(), 1, kWaitMs);
    QCOMPARE(askingClosed[0][0].value<CloseCode>(), CloseCode::ConnectionLost);
    QVERIFY2(askingClosed[0][1].toString().contains(QLatin1String("forwarder 7's tunnel was lost")),
        qPrintable(askingClosed[0][1].toString()));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(m_rig->relay.relayCount(), 0);
}

QTEST_GUILESS_MAIN(TestPeerRelay)
#include "tst_peerrelay.moc"
