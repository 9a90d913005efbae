// Unit tests of the device a forwarder carries (common/protocol/devicespec.h):
// USB VID:PID[:SERIAL] and Linux interface names.

#include "common/protocol/devicespec.h"
#include "common/util/jsonwriter.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cloop;
using namespace cloop::protocol;

Q_DECLARE_METATYPE(cloop::protocol::DeviceSpec)

class TestDeviceSpec final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesUsb_data();
    void parsesUsb();
    void refusesUsb_data();
    void refusesUsb();
    void parsesInterface_data();
    void parsesInterface();
    void refusesInterface_data();
    void refusesInterface();
    void jsonRoundTrip_data();
    void jsonRoundTrip();
    void fromJsonRefuses_data();
    void fromJsonRefuses();
};

void TestDeviceSpec::parsesUsb_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("vendor");
    QTest::addColumn<int>("product");
    QTest::addColumn<QString>("serial");
    QTest::addColumn<QString>("described");

    QTest::newRow("vid:pid") << QStringLiteral("1050:0407") << 0x1050 << 0x0407 << QString()
                             << QStringLiteral("usb 1050:0407");
    QTest::newRow("vid:pid:serial")
        << QStringLiteral("1050:0407:ABC123") << 0x1050 << 0x0407 << QStringLiteral("ABC123")
        << QStringLiteral("usb 1050:0407:ABC123");
    QTest::newRow("upper-case hex") << QStringLiteral("ABCD:EF01") << 0xabcd << 0xef01 << QString()
                                    << QStringLiteral("usb abcd:ef01");
    QTest::newRow("extremes") << QStringLiteral("0000:ffff") << 0 << 0xffff << QString()
                              << QStringLiteral("usb 0000:ffff");
    QTest::newRow("serial with colon")
        << QStringLiteral("1050:0407:a:b") << 0x1050 << 0x0407 << QStringLiteral("a:b")
        << QStringLiteral("usb 1050:0407:a:b");
}

void TestDeviceSpec::parsesUsb()
{
    QFETCH(QString, text);
    QFETCH(int, vendor);
    QFETCH(int, product);
    QFETCH(QString, serial);
    QFETCH(QString, described);

    const auto spec = DeviceSpec::parseUsb(text);
    QVERIFY2(spec.ok(), qPrintable(spec.ok() ? QString() : spec.error().message));
    QCOMPARE(spec->kind, DeviceSpec::Kind::Usb);
    QCOMPARE(int(spec->vendorId), vendor);
    QCOMPARE(int(spec->productId), product);
    QCOMPARE(spec->serial, serial);
    QCOMPARE(spec->kindName(), QStringLiteral("usb"));
    QCOMPARE(spec->describe(), described);
}

void TestDeviceSpec::refusesUsb_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problem");

    const QString format = QStringLiteral("is not VID:PID[:SERIAL]");
    QTest::newRow("short vid") << QStringLiteral("105:0407") << format;
    QTest::newRow("long vid") << QStringLiteral("10500:0407") << format;
    QTest::newRow("non-hex vid") << QStringLiteral("zzzz:0407") << format;
    QTest::newRow("non-hex pid") << QStringLiteral("1050:04g7") << format;
    QTest::newRow("dash separator") << QStringLiteral("1050-0407") << format;
    QTest::newRow("empty") << QString() << format;
    QTest::newRow("only colon") << QStringLiteral(":") << format;
    QTest::newRow("0x prefix") << QStringLiteral("0x1050:0x0407") << format;
    QTest::newRow("sign") << QStringLiteral("+050:0407") << format;
    QTest::newRow("spaces around") << QStringLiteral(" 1050:0407") << format;
    QTest::newRow("serial with space")
        << QStringLiteral("1050:0407:ABC 123") << QStringLiteral("not printable");
    QTest::newRow("serial with tab")
        << QStringLiteral("1050:0407:ABC\t123") << QStringLiteral("not printable");
    QTest::newRow("serial with control char")
        << QStringLiteral("1050:0407:AB\u0001") << QStringLiteral("not printable");
    QTest::newRow("empty serial") << QStringLiteral("1050:0407:")
                                  << QStringLiteral("serial must be 1..126 characters");
    QTest::newRow("serial too long")
        << QStringLiteral("1050:0407:") + QString(127, QLatin1Char('s'))
        << QStringLiteral("serial must be 1..126 characters");
}

void TestDeviceSpec::refusesUsb()
{
    QFETCH(QString, text);
    QFETCH(QString, problem);
    const auto spec = DeviceSpec::parseUsb(text);
    QVERIFY(!spec.ok());
    QCOMPARE(spec.error().code, QStringLiteral("invalid_device"));
    QVERIFY(spec.error().permanent);
    QVERIFY2(spec.error().message.contains(problem), qPrintable(spec.error().message));
}

void TestDeviceSpec::parsesInterface_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("eth0") << QStringLiteral("eth0");
    QTest::newRow("enp0s31f6") << QStringLiteral("enp0s31f6");
    QTest::newRow("15 characters") << QStringLiteral("abcdefghijklmno");
    QTest::newRow("one character") << QStringLiteral("x");
    QTest::newRow("dots and dashes") << QStringLiteral("br-lan.10");
    QTest::newRow("three dots") << QStringLiteral("...");
}

void TestDeviceSpec::parsesInterface()
{
    QFETCH(QString, name);
    QVERIFY(isValidInterfaceName(name));
    const auto spec = DeviceSpec::parseInterface(name);
    QVERIFY2(spec.ok(), qPrintable(spec.ok() ? QString() : spec.error().message));
    QCOMPARE(spec->kind, DeviceSpec::Kind::Segment);
    QCOMPARE(spec->interfaceName, name);
    QCOMPARE(spec->kindName(), QStringLiteral("l2"));
    QCOMPARE(spec->describe(), QStringLiteral("l2 ") + name);
}

void TestDeviceSpec::refusesInterface_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << QString();
    QTest::newRow("16 characters") << QStringLiteral("abcdefghijklmnop");
    QTest::newRow("slash") << QStringLiteral("a/b");
    QTest::newRow("colon") << QStringLiteral("a:b");
    QTest::newRow("space") << QStringLiteral("a b");
    QTest::newRow("tab") << QStringLiteral("a\tb");
    QTest::newRow("newline") << QStringLiteral("eth0\n");
    QTest::newRow("dot") << QStringLiteral(".");
    QTest::newRow("dot dot") << QStringLiteral("..");
    QTest::newRow("DEL") << QStringLiteral("a\u007f");
    QTest::newRow("non-ASCII") << QStringLiteral("eth\u00e9");
    // 8 characters but 16 UTF-8 bytes: the kernel limit is in bytes.
    QTest::newRow("16 UTF-8 bytes") << QString(8, QChar(0x00e9));
}

void TestDeviceSpec::refusesInterface()
{
    QFETCH(QString, name);
    QVERIFY(!isValidInterfaceName(name));
    const auto spec = DeviceSpec::parseInterface(name);
    QVERIFY(!spec.ok());
    QCOMPARE(spec.error().code, QStringLiteral("invalid_device"));
    QVERIFY2(spec.error().message.contains(QStringLiteral("is not a valid network interface name")),
        qPrintable(spec.error().message));
}

void TestDeviceSpec::jsonRoundTrip_data()
{
    QTest::addColumn<QString>("text"); // usb:... or l2:...
    QTest::addColumn<QJsonObject>("json");

    QTest::newRow("usb") << QStringLiteral("usb:1050:0407")
                         << QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
                                { QStringLiteral("vendor"), QStringLiteral("1050") },
                                { QStringLiteral("product"), QStringLiteral("0407") } };
    QTest::newRow("usb with serial, hex lower-cased")
        << QStringLiteral("usb:ABCD:00EF:Serial-9")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
               { QStringLiteral("vendor"), QStringLiteral("abcd") },
               { QStringLiteral("product"), QStringLiteral("00ef") },
               { QStringLiteral("serial"), QStringLiteral("Serial-9") } };
    QTest::newRow("l2") << QStringLiteral("l2:enp0s31f6")
                        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                               { QStringLiteral("interface"), QStringLiteral("enp0s31f6") } };
}

void TestDeviceSpec::jsonRoundTrip()
{
    QFETCH(QString, text);
    QFETCH(QJsonObject, json);

    const bool usb = text.startsWith(QStringLiteral("usb:"));
    const auto spec
        = usb ? DeviceSpec::parseUsb(text.mid(4)) : DeviceSpec::parseInterface(text.mid(3));
    QVERIFY(spec.ok());
    // When written as JSON, then the object is the documented one,
    QCOMPARE(spec->toJson(), json);
    // and reading it back gives an equal spec.
    const auto back = DeviceSpec::fromJson(json);
    QVERIFY2(back.ok(), qPrintable(back.ok() ? QString() : back.error().message));
    QCOMPARE(*back, *spec);
    // Written straight into a listing, it is the same bytes.
    QByteArray written;
    util::JsonWriter out(written);
    spec->writeJson(out);
    QCOMPARE(written, QJsonDocument(json).toJson(QJsonDocument::Compact));
}

void TestDeviceSpec::fromJsonRefuses_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::newRow("no kind") << QJsonObject { { QStringLiteral("interface"),
        QStringLiteral("eth0") } };
    QTest::newRow("unknown kind") << QJsonObject { { QStringLiteral("kind"),
        QStringLiteral("pci") } };
    QTest::newRow("usb without vendor")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
               { QStringLiteral("product"), QStringLiteral("0407") } };
    QTest::newRow("usb vendor as number") << QJsonObject { { QStringLiteral("kind"),
                                                               QStringLiteral("usb") },
        { QStringLiteral("vendor"), 4176 }, { QStringLiteral("product"), QStringLiteral("0407") } };
    QTest::newRow("usb bad serial")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
               { QStringLiteral("vendor"), QStringLiteral("1050") },
               { QStringLiteral("product"), QStringLiteral("0407") },
               { QStringLiteral("serial"), QStringLiteral("a b") } };
    QTest::newRow("l2 without interface")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") } };
    QTest::newRow("l2 bad interface")
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
               { QStringLiteral("interface"), QStringLiteral("../etc") } };
}

void TestDeviceSpec::fromJsonRefuses()
{
    QFETCH(QJsonObject, json);
    const auto spec = DeviceSpec::fromJson(json);
    QVERIFY(!spec.ok());
    QCOMPARE(spec.error().code, QStringLiteral("invalid_device"));
    QVERIFY(!spec.error().message.isEmpty());
}

QTEST_GUILESS_MAIN(TestDeviceSpec)
#include "tst_devicespec.moc"
