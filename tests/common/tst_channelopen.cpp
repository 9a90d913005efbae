// Unit tests of the channel openings (common/protocol/channelopen.h): each
// kind against the metadata written out here as the hub and the daemons
// have always sent it, and the refusals a confused or hostile peer gets.

#include "common/protocol/channelopen.h"

#include <QJsonObject>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;

Q_DECLARE_METATYPE(cloop::protocol::ChannelOpen)

namespace {

const QString kTicket = QStringLiteral("dGhpcyBpcyBhIHRpY2tldCBvZiBmb3J0eS10aHJlZQx");

QJsonObject with(QJsonObject object, const QString &key, const QJsonValue &value)
{
    object.insert(key, value);
    return object;
}

QJsonObject without(QJsonObject object, const QString &key)
{
    object.remove(key);
    return object;
}

QJsonObject segment()
{
    return { { QStringLiteral("kind"), QStringLiteral("segment") },
        { QStringLiteral("run_id"), 12 }, { QStringLiteral("binding_id"), 3 } };
}

QJsonObject usbRun()
{
    return { { QStringLiteral("kind"), QStringLiteral("usb") }, { QStringLiteral("run_id"), 12 },
        { QStringLiteral("binding_id"), 3 } };
}

QJsonObject agentUsbDevice()
{
    return { { QStringLiteral("kind"), QStringLiteral("device") }, { QStringLiteral("run_id"), 12 },
        { QStringLiteral("binding_id"), 3 }, { QStringLiteral("name"), QStringLiteral("fwd-hsm") },
        { QStringLiteral("device_kind"), QStringLiteral("usb") },
        { QStringLiteral("busid"), QStringLiteral("1-1.4") } };
}

DeviceSpec eth1()
{
    return *DeviceSpec::parseInterface(QStringLiteral("eth1"));
}

} // namespace

class TestChannelOpen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsWhatIsSent_data();
    void readsWhatIsSent();
    void roundTrips_data();
    void roundTrips();
    void refuses_data();
    void refuses();
    void eachKindIsReadByItsOwnTypeOnly();
    void everyKindIsNamed();
};

void TestChannelOpen::readsWhatIsSent_data()
{
    QTest::addColumn<QJsonObject>("metadata");
    QTest::addColumn<ChannelOpen>("expected");

    QTest::newRow("run log") << QJsonObject { { QStringLiteral("kind"), QStringLiteral("run-log") },
        { QStringLiteral("run_id"), 41 } }
                             << ChannelOpen(RunLogOpen { 41 });
    QTest::newRow("segment") << segment() << ChannelOpen(SegmentOpen { 12, 3, {}, std::nullopt });
    QTest::newRow("segment naming its interface")
        << with(segment(), QStringLiteral("interface"), QStringLiteral("eth1"))
        << ChannelOpen(SegmentOpen { 12, 3, { QStringLiteral("eth1"), {}, {} }, std::nullopt });
    QTest::newRow("segment naming its device") << with(segment(), QStringLiteral("device"),
        eth1().toJson()) << ChannelOpen(SegmentOpen { 12, 3, { {}, {}, eth1() }, std::nullopt });
    QTest::newRow("usb for a run")
        << usbRun() << ChannelOpen(UsbOpen { UsbOpen::Purpose::Run, 12, 3, {}, std::nullopt });
    QTest::newRow("usb naming a bus id")
        << with(usbRun(), QStringLiteral("busid"), QStringLiteral("1-1"))
        << ChannelOpen(UsbOpen {
               UsbOpen::Purpose::Run, 12, 3, { {}, QStringLiteral("1-1"), {} }, std::nullopt });
    QTest::newRow("usb test") << QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
        { QStringLiteral("purpose"), QStringLiteral("test") } }
                              << ChannelOpen(
                                     UsbOpen { UsbOpen::Purpose::Test, 0, 0, {}, std::nullopt });
    QTest::newRow("segment test") << QJsonObject {
        { QStringLiteral("kind"), QStringLiteral("device-test") }
    } << ChannelOpen(DeviceTestOpen {});
    QTest::newRow("agent's segment")
        << with(without(agentUsbDevice(), QStringLiteral("busid")), QStringLiteral("device_kind"),
               QStringLiteral("l2"))
        << ChannelOpen(AgentDeviceOpen { 12, 3, QStringLiteral("fwd-hsm"),
               DeviceSpec::Kind::Segment, QString(), std::nullopt });
    // Hubs before USB devices named no device kind: a segment was meant.
    QTest::newRow("agent's segment from an older hub")
        << without(
               without(agentUsbDevice(), QStringLiteral("busid")), QStringLiteral("device_kind"))
        << ChannelOpen(AgentDeviceOpen { 12, 3, QStringLiteral("fwd-hsm"),
               DeviceSpec::Kind::Segment, QString(), std::nullopt });
    QTest::newRow("agent's USB device")
        << agentUsbDevice()
        << ChannelOpen(AgentDeviceOpen { 12, 3, QStringLiteral("fwd-hsm"), DeviceSpec::Kind::Usb,
               QStringLiteral("1-1.4"), std::nullopt });
}

void TestChannelOpen::readsWhatIsSent()
{
    QFETCH(QJsonObject, metadata);
    QFETCH(ChannelOpen, expected);
    const auto parsed = parseChannelOpen(metadata);
    QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
    QVERIFY(*parsed == expected);
    QCOMPARE(channelOpenKind(*parsed), metadata.value(QLatin1String("kind")).toString());
}

void TestChannelOpen::roundTrips_data()
{
    QTest::addColumn<ChannelOpen>("open");
    QTest::newRow("run log") << ChannelOpen(RunLogOpen { 9007199254740992 });
    QTest::newRow("segment") << ChannelOpen(SegmentOpen { 1, 2, {}, std::nullopt });
    QTest::newRow("segment with every name") << ChannelOpen(SegmentOpen {
        1, 2, { QStringLiteral("eth1"), QStringLiteral("1-1"), eth1() }, std::nullopt });
    QTest::newRow("usb run") << ChannelOpen(
        UsbOpen { UsbOpen::Purpose::Run, 5, 6, {}, std::nullopt });
    QTest::newRow("usb test") << ChannelOpen(
        UsbOpen { UsbOpen::Purpose::Test, 0, 0, {}, std::nullopt });
    QTest::newRow("device test") << ChannelOpen(
        DeviceTestOpen { { QStringLiteral("eth1"), {}, {} } });
    QTest::newRow("agent segment") << ChannelOpen(AgentDeviceOpen {
        7, 8, QStringLiteral("fwd-lab"), DeviceSpec::Kind::Segment, QString(), std::nullopt });
    QTest::newRow("agent usb") << ChannelOpen(AgentDeviceOpen { 7, 8, QStringLiteral("fwd-hsm"),
        DeviceSpec::Kind::Usb, QStringLiteral("3-2"), std::nullopt });
    QTest::newRow("agent usb with a direct leg") << ChannelOpen(AgentDeviceOpen { 7, 8,
        QStringLiteral("fwd-hsm"), DeviceSpec::Kind::Usb, QStringLiteral("3-2"),
        DirectLeg { QStringLiteral("wss://hub-a.example:8443"), kTicket } });
    // Without a URL: a leg to the hub the tunnel reaches.
    QTest::newRow("agent segment with a leg to its own hub")
        << ChannelOpen(AgentDeviceOpen { 7, 8, QStringLiteral("fwd-lab"), DeviceSpec::Kind::Segment,
               QString(), DirectLeg { QString(), kTicket } });
    QTest::newRow("segment with a leg")
        << ChannelOpen(SegmentOpen { 1, 2, {}, DirectLeg { QString(), kTicket } });
    QTest::newRow("usb run with a leg") << ChannelOpen(
        UsbOpen { UsbOpen::Purpose::Run, 5, 6, {}, DirectLeg { QString(), kTicket } });
}

void TestChannelOpen::roundTrips()
{
    QFETCH(ChannelOpen, open);
    const QJsonObject metadata = serializeChannelOpen(open);
    QCOMPARE(metadata.value(QLatin1String("kind")).toString(), channelOpenKind(open));
    const auto parsed = parseChannelOpen(metadata);
    QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
    QVERIFY(*parsed == open);
    QCOMPARE(serializeChannelOpen(*parsed), metadata);
}

void TestChannelOpen::refuses_data()
{
    QTest::addColumn<QJsonObject>("metadata");
    QTest::addColumn<QString>("problem");

    QTest::newRow("no kind") << QJsonObject { { QStringLiteral("run_id"), 1 } }
                             << QStringLiteral("needs a \"kind\"");
    QTest::newRow("unknown kind") << QJsonObject { { QStringLiteral("kind"),
        QStringLiteral("l2") } } << QStringLiteral("unknown channel kind \"l2\"");
    QTest::newRow("run log without a run")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("run-log") } }
        << QStringLiteral("run-log channel: \"run_id\" must be an integer");
    QTest::newRow("run log of run 0") << QJsonObject {
        { QStringLiteral("kind"), QStringLiteral("run-log") }, { QStringLiteral("run_id"), 0 }
    } << QStringLiteral("\"run_id\" = 0 is outside");
    QTest::newRow("segment without a binding")
        << without(segment(), QStringLiteral("binding_id"))
        << QStringLiteral("segment channel: \"binding_id\" must be an integer");
    QTest::newRow("segment with a fractional run")
        << with(segment(), QStringLiteral("run_id"), 1.5) << QStringLiteral("\"run_id\"");
    QTest::newRow("segment naming an interface that is no string") << with(segment(),
        QStringLiteral("interface"), 7) << QStringLiteral("\"interface\" must be a string");
    QTest::newRow("segment naming a device that is no object")
        << with(segment(), QStringLiteral("device"), QStringLiteral("eth1"))
        << QStringLiteral("\"device\" must be an object");
    QTest::newRow("segment naming an unreadable device")
        << with(segment(), QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("l3") } })
        << QStringLiteral("unknown device kind \"l3\"");
    QTest::newRow("usb of another purpose") << with(usbRun(), QStringLiteral("purpose"),
        QStringLiteral("flash")) << QStringLiteral("\"purpose\" must be \"test\"");
    QTest::newRow("usb run without a run") << without(usbRun(),
        QStringLiteral("run_id")) << QStringLiteral("usb channel: \"run_id\" must be an integer");
    QTest::newRow("agent device without a name") << without(agentUsbDevice(),
        QStringLiteral("name")) << QStringLiteral("device channel: \"name\" must be a string");
    QTest::newRow("agent device with a name no run start can have")
        << with(agentUsbDevice(), QStringLiteral("name"), QStringLiteral("../etc"))
        << QStringLiteral("\"name\" is not a device name");
    QTest::newRow("agent device of an unknown kind")
        << with(agentUsbDevice(), QStringLiteral("device_kind"), QStringLiteral("bluetooth"))
        << QStringLiteral("cannot attach \"bluetooth\" devices");
    QTest::newRow("agent USB device without a bus id") << without(
        agentUsbDevice(), QStringLiteral("busid")) << QStringLiteral("\"busid\" must be a string");
    QTest::newRow("agent USB device with a bad bus id")
        << with(agentUsbDevice(), QStringLiteral("busid"), QStringLiteral("../1-1"))
        << QStringLiteral("\"busid\" is not a USB bus id");
    const auto withLeg = [](const QJsonValue &leg) {
        return with(agentUsbDevice(), QStringLiteral("direct"), leg);
    };
    const QJsonObject leg { { QStringLiteral("url"), QStringLiteral("wss://hub-a:8443") },
        { QStringLiteral("ticket"), kTicket } };
    QTest::newRow("direct leg that is no object")
        << withLeg(QStringLiteral("wss://hub-a:8443")) << QStringLiteral("must be an object");
    QTest::newRow("direct leg without a ticket")
        << withLeg(without(leg, QStringLiteral("ticket")))
        << QStringLiteral("the direct leg: \"ticket\" must be a string");
    QTest::newRow("direct leg with a short ticket")
        << withLeg(with(leg, QStringLiteral("ticket"), QStringLiteral("abc")))
        << QStringLiteral("\"ticket\" is not a stream ticket");
    QTest::newRow("direct leg with a ticket of other characters")
        << withLeg(with(leg, QStringLiteral("ticket"), QString(kTicket).replace(0, 1, u'/')))
        << QStringLiteral("\"ticket\" is not a stream ticket");
    QTest::newRow("direct leg to something that is no hub URL")
        << withLeg(with(leg, QStringLiteral("url"), QStringLiteral("file:///etc/passwd")))
        << QStringLiteral("\"url\" is not a hub URL");
    const QJsonObject ownHubLeg { { QStringLiteral("ticket"), kTicket } };
    QTest::newRow("segment leg without a ticket") << with(segment(), QStringLiteral("leg"),
        QJsonObject {}) << QStringLiteral("the leg: \"ticket\" must be a string");
    QTest::newRow("segment leg with a short ticket")
        << with(segment(), QStringLiteral("leg"),
               with(ownHubLeg, QStringLiteral("ticket"), QStringLiteral("abc")))
        << QStringLiteral("\"ticket\" is not a stream ticket");
    QTest::newRow("usb leg that is no object")
        << with(usbRun(), QStringLiteral("leg"), kTicket) << QStringLiteral("must be an object");
    QTest::newRow("usb leg to plaintext elsewhere") << with(usbRun(), QStringLiteral("leg"),
        with(ownHubLeg, QStringLiteral("url"), QStringLiteral("ws://hub-a.example:80")))
                                                    << QStringLiteral("\"url\" is not a hub URL");
    // A test lists devices and imports none: nothing to carry on a leg.
    QTest::newRow("usb test with a leg")
        << with(QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
                    { QStringLiteral("purpose"), QStringLiteral("test") } },
               QStringLiteral("leg"), ownHubLeg)
        << QStringLiteral("a test's USB/IP connection has no leg");
}

void TestChannelOpen::refuses()
{
    QFETCH(QJsonObject, metadata);
    QFETCH(QString, problem);
    const auto parsed = parseChannelOpen(metadata);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY2(parsed.error().message.contains(problem), qPrintable(parsed.error().message));
}

void TestChannelOpen::eachKindIsReadByItsOwnTypeOnly()
{
    // Given an opening of one kind, when a receiver that takes only another
    // kind reads it, then it is refused naming both.
    const auto asLog = RunLogOpen::fromMetadata(segment());
    QVERIFY(!asLog);
    QVERIFY2(asLog.error().message.contains(QLatin1String("run-log"))
            && asLog.error().message.contains(QLatin1String("\"segment\"")),
        qPrintable(asLog.error().message));
    const auto asDevice = AgentDeviceOpen::fromMetadata(usbRun());
    QVERIFY(!asDevice);
    QVERIFY2(asDevice.error().message.contains(QLatin1String("device channel was expected")),
        qPrintable(asDevice.error().message));
    QVERIFY(!SegmentOpen::fromMetadata(QJsonObject {}));
    QVERIFY(UsbOpen::fromMetadata(usbRun()));
}

void TestChannelOpen::everyKindIsNamed()
{
    // channelkind::kAll lists the kinds parseChannelOpen knows, in the
    // order of the ChannelOpen alternatives.
    QCOMPARE(channelkind::kAll.size(), std::variant_size_v<ChannelOpen>);
    QCOMPARE(channelOpenKind(RunLogOpen {}), channelkind::kAll[0]);
    QCOMPARE(channelOpenKind(SegmentOpen {}), channelkind::kAll[1]);
    QCOMPARE(channelOpenKind(UsbOpen {}), channelkind::kAll[2]);
    QCOMPARE(channelOpenKind(DeviceTestOpen {}), channelkind::kAll[3]);
    QCOMPARE(channelOpenKind(AgentDeviceOpen {}), channelkind::kAll[4]);
    QCOMPARE(claimedChannelKind(QJsonObject { { QStringLiteral("kind"), QString(100, u'x') } }),
        QString(40, u'x'));
}

QTEST_GUILESS_MAIN(TestChannelOpen)
#include "tst_channelopen.moc"
