// Unit tests of what a forwarder carries (daemon-forward/enrolleddevice.h):
// the device its credential records, whatever a hub's welcome or channel
// names. A refusal here comes before any socket or sysfs write.

#include "daemon-forward/enrolleddevice.h"

#include <QTest>

using namespace cloop;
using namespace cloop::forward;
using protocol::DeviceSpec;

namespace {
std::optional<DeviceSpec> spec(const QString &text)
{
    if (text.isEmpty())
        return std::nullopt;
    if (text.startsWith(QLatin1String("l2:")))
        return *DeviceSpec::parseInterface(text.mid(3));
    return *DeviceSpec::parseUsb(text.mid(4));
}
} // namespace

class TestEnrolledDevice final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void welcomes_data();
    void welcomes();
    void channels_data();
    void channels();
};

void TestEnrolledDevice::welcomes_data()
{
    // "l2:IF", "usb:VID:PID[:SERIAL]", or empty for none.
    QTest::addColumn<QString>("recorded");
    QTest::addColumn<QString>("welcomed");
    QTest::addColumn<QString>("carried"); // empty: nothing, "refused": a mismatch
    QTest::addColumn<bool>("toRecord");

    QTest::newRow("the recorded interface") << "l2:dummy1"
                                            << "l2:dummy1"
                                            << "l2:dummy1" << false;
    QTest::newRow("another interface") << "l2:dummy1"
                                       << "l2:eth7"
                                       << "refused" << false;
    QTest::newRow("a USB device instead") << "l2:dummy1"
                                          << "usb:1050:0407"
                                          << "refused" << false;
    QTest::newRow("the recorded USB device") << "usb:1050:0407:A1"
                                             << "usb:1050:0407:A1"
                                             << "usb:1050:0407:A1" << false;
    QTest::newRow("another product") << "usb:1050:0407"
                                     << "usb:1050:0408"
                                     << "refused" << false;
    QTest::newRow("another serial") << "usb:1050:0407:A1"
                                    << "usb:1050:0407:B2"
                                    << "refused" << false;
    // A serial narrows: dropping it would widen to every such device.
    QTest::newRow("the serial dropped") << "usb:1050:0407:A1"
                                        << "usb:1050:0407"
                                        << "refused" << false;
    QTest::newRow("a serial added") << "usb:1050:0407"
                                    << "usb:1050:0407:A1"
                                    << "refused" << false;
    QTest::newRow("an interface instead") << "usb:1050:0407"
                                          << "l2:eth0"
                                          << "refused" << false;
    // A welcome naming nothing cannot make the forwarder carry something else.
    QTest::newRow("the hub names nothing") << "l2:dummy1"
                                           << ""
                                           << "l2:dummy1" << false;
    // Files from before the record: the first welcome is recorded, once.
    QTest::newRow("no record yet") << ""
                                   << "l2:dummy1"
                                   << "l2:dummy1" << true;
    QTest::newRow("no record, USB") << ""
                                    << "usb:1d50:6089:HSM1"
                                    << "usb:1d50:6089:HSM1" << true;
    QTest::newRow("no record, nothing named") << ""
                                              << ""
                                              << "" << false;
}

void TestEnrolledDevice::welcomes()
{
    QFETCH(QString, recorded);
    QFETCH(QString, welcomed);
    QFETCH(QString, carried);
    QFETCH(bool, toRecord);

    const auto decided = deviceToCarry(spec(recorded), spec(welcomed));
    if (carried == QLatin1String("refused")) {
        QVERIFY2(!decided.ok(), "a welcome naming another device was accepted");
        QCOMPARE(decided.error().code, QStringLiteral("device_mismatch"));
        QVERIFY(decided.error().permanent);
        // Both devices are named, so the log line says what happened.
        QVERIFY2(decided.error().message.contains(spec(welcomed)->describe()),
            qPrintable(decided.error().message));
        QVERIFY2(decided.error().message.contains(spec(recorded)->describe()),
            qPrintable(decided.error().message));
        return;
    }
    QVERIFY2(decided.ok(), qPrintable(decided.ok() ? QString() : decided.error().message));
    QCOMPARE(decided->device, spec(carried));
    QCOMPARE(decided->toRecord, toRecord);
}

void TestEnrolledDevice::channels_data()
{
    QTest::addColumn<QString>("carried");
    QTest::addColumn<QString>("busId"); // where the USB device is now
    QTest::addColumn<QJsonObject>("metadata");
    QTest::addColumn<bool>("accepted");

    const auto segment = [](QJsonObject extra) {
        extra.insert(QStringLiteral("kind"), QStringLiteral("segment"));
        extra.insert(QStringLiteral("run_id"), 5);
        extra.insert(QStringLiteral("binding_id"), 2);
        return extra;
    };
    const auto usb = [](QJsonObject extra) {
        extra.insert(QStringLiteral("kind"), QStringLiteral("usb"));
        return extra;
    };
    const QString l2 = QStringLiteral("l2:dummy1");
    const QString key = QStringLiteral("usb:1050:0407:A1");

    // What the hub sends today names nothing: the carried device is meant.
    QTest::newRow("segment naming nothing") << l2 << QString() << segment({}) << true;
    QTest::newRow("test naming nothing")
        << l2 << QString()
        << QJsonObject { { QStringLiteral("kind"), QStringLiteral("device-test") } } << true;
    QTest::newRow("usb naming nothing") << key << QStringLiteral("1-1") << usb({}) << true;
    QTest::newRow("the carried interface")
        << l2 << QString() << segment({ { QStringLiteral("interface"), QStringLiteral("dummy1") } })
        << true;
    QTest::newRow("another interface")
        << l2 << QString() << segment({ { QStringLiteral("interface"), QStringLiteral("eth7") } })
        << false;
    QTest::newRow("an interface that is no string")
        << l2 << QString() << segment({ { QStringLiteral("interface"), 7 } }) << false;
    QTest::newRow("an interface for a USB forwarder")
        << key << QStringLiteral("1-1")
        << usb({ { QStringLiteral("interface"), QStringLiteral("eth0") } }) << false;
    QTest::newRow("the carried bus id")
        << key << QStringLiteral("1-1")
        << usb({ { QStringLiteral("busid"), QStringLiteral("1-1") } }) << true;
    QTest::newRow("another bus id")
        << key << QStringLiteral("1-1")
        << usb({ { QStringLiteral("busid"), QStringLiteral("1-2") } }) << false;
    QTest::newRow("a bus id while unplugged")
        << key << QString() << usb({ { QStringLiteral("busid"), QStringLiteral("1-1") } }) << false;
    QTest::newRow("a bus id for a segment")
        << l2 << QString() << segment({ { QStringLiteral("busid"), QStringLiteral("1-1") } })
        << false;
    QTest::newRow("the carried device")
        << key << QStringLiteral("1-1")
        << usb({ { QStringLiteral("device"), spec(key)->toJson() } }) << true;
    QTest::newRow("another device")
        << key << QStringLiteral("1-1")
        << usb({ { QStringLiteral("device"), spec(QStringLiteral("usb:1050:0407:B2"))->toJson() } })
        << false;
    QTest::newRow("a device that is no object")
        << l2 << QString() << segment({ { QStringLiteral("device"), QStringLiteral("dummy1") } })
        << false;
    QTest::newRow("an unreadable device")
        << l2 << QString()
        << segment({ { QStringLiteral("device"),
               QJsonObject { { QStringLiteral("kind"), QStringLiteral("l3") } } } })
        << false;
}

void TestEnrolledDevice::channels()
{
    QFETCH(QString, carried);
    QFETCH(QString, busId);
    QFETCH(QJsonObject, metadata);
    QFETCH(bool, accepted);

    const Status checked = checkChannelNames(*spec(carried), busId, metadata);
    QCOMPARE(checked.ok(), accepted);
    if (!accepted) {
        QCOMPARE(checked.error().code, QStringLiteral("device_mismatch"));
        QVERIFY2(checked.error().message.contains(spec(carried)->describe()),
            qPrintable(checked.error().message));
    }
}

QTEST_GUILESS_MAIN(TestEnrolledDevice)
#include "tst_enrolleddevice.moc"
