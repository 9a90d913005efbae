// ForwarderListModel: rows keyed by forwarder id, updated in place by
// refreshes and events, checked by QAbstractItemModelTester throughout.

#include "common/api/devicetest.h"

#include "app-dashboard/core/forwarderlistmodel.h"
#include "app-dashboard/core/forwardersclient.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QtTest>

using cloop::dashboard::ForwarderListModel;

namespace {

QJsonObject forwarder(
    qint64 id, const QString &name, const QString &state = QStringLiteral("disconnected"))
{
    return { { QStringLiteral("id"), id }, { QStringLiteral("name"), name },
        { QStringLiteral("device"),
            QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                { QStringLiteral("interface"), QStringLiteral("eth1") } } },
        { QStringLiteral("device_description"), QStringLiteral("l2 eth1") },
        { QStringLiteral("state"), state },
        { QStringLiteral("connected"), state == QLatin1String("connected") } };
}

QJsonObject binding(qint64 id, qint64 forwarderId, const QString &project,
    const QString &state = QStringLiteral("active"))
{
    return { { QStringLiteral("id"), id }, { QStringLiteral("forwarder_id"), forwarderId },
        { QStringLiteral("project"), project }, { QStringLiteral("state"), state },
        { QStringLiteral("created_by"), QStringLiteral("user:alice") },
        { QStringLiteral("expires_at"), QStringLiteral("2026-11-30T08:00:00.000Z") } };
}

} // namespace

class TestForwarderListModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void refreshesKeepRowsByIdAndDropTheGone();
    void bindingsLandOnTheirForwarder();
    void eventsUpdateTheRowInPlace();
    void anEventAboutAnUnknownForwarderAsksForARefresh();
    void testOutcomeIsKeptPerRow();
    void testReportsReadAsWords();
    void usbDevicesAreNamedFromTheIdDatabase();
    void trafficLandsOnEveryRowWithZerosForTheQuiet();
};

void TestForwarderListModel::refreshesKeepRowsByIdAndDropTheGone()
{
    ForwarderListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setForwarders(
        { forwarder(1, QStringLiteral("lab")), forwarder(2, QStringLiteral("hsm")) });
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(1).data(ForwarderListModel::NameRole).toString(), QStringLiteral("hsm"));
    QCOMPARE(model.index(0).data(ForwarderListModel::KindRole).toString(), QStringLiteral("l2"));

    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    // lab goes, hsm changes state, bench is new.
    model.setForwarders({ forwarder(2, QStringLiteral("hsm"), QStringLiteral("connected")),
        forwarder(3, QStringLiteral("bench")) });
    QCOMPARE(reset.count(), 0);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rowOf(1), -1);
    QCOMPARE(model.rowOf(2), 0);
    QCOMPARE(model.index(0).data(ForwarderListModel::ConnectedRole).toBool(), true);
    QCOMPARE(changed.count(), 1);
    // The same list again changes nothing.
    model.setForwarders({ forwarder(2, QStringLiteral("hsm"), QStringLiteral("connected")),
        forwarder(3, QStringLiteral("bench")) });
    QCOMPARE(changed.count(), 1);
    // An entry without an id is not a forwarder.
    model.setForwarders(
        { forwarder(2, QStringLiteral("hsm"), QStringLiteral("connected")), QJsonObject {} });
    QCOMPARE(model.rowCount(), 1);
}

void TestForwarderListModel::bindingsLandOnTheirForwarder()
{
    ForwarderListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setForwarders(
        { forwarder(1, QStringLiteral("lab")), forwarder(2, QStringLiteral("hsm")) });
    model.setBindings({ binding(7, 2, QStringLiteral("/srv/p")),
        binding(8, 1, QStringLiteral("/srv/q"), QStringLiteral("unbound")) });
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingIdRole).toLongLong(), 7);
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingProjectRole).toString(),
        QStringLiteral("/srv/p"));
    QVERIFY(model.index(1).data(ForwarderListModel::BindingExpiresRole).toDateTime().isValid());
    // An ended binding holds nothing.
    QCOMPARE(model.index(0).data(ForwarderListModel::BindingIdRole).toLongLong(), 0);
    model.setBindings({});
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingIdRole).toLongLong(), 0);
}

void TestForwarderListModel::eventsUpdateTheRowInPlace()
{
    ForwarderListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setForwarders(
        { forwarder(1, QStringLiteral("lab")), forwarder(2, QStringLiteral("hsm")) });
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    QVERIFY(
        model.applyEvent(QStringLiteral("forwarder.connected"), { { QStringLiteral("id"), 2 } }));
    QCOMPARE(
        model.index(1).data(ForwarderListModel::StateRole).toString(), QStringLiteral("connected"));
    QCOMPARE(changed.last().at(0).toModelIndex().row(), 1);

    QVERIFY(model.applyEvent(
        QStringLiteral("binding.created"), binding(9, 2, QStringLiteral("/srv/p"))));
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingIdRole).toLongLong(), 9);
    // The end of another binding leaves this one.
    QVERIFY(model.applyEvent(QStringLiteral("binding.ended"),
        binding(5, 2, QStringLiteral("/srv/p"), QStringLiteral("unbound"))));
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingIdRole).toLongLong(), 9);

    QJsonObject held = forwarder(2, QStringLiteral("hsm"), QStringLiteral("connected"));
    held.insert(QStringLiteral("hub_member"), QStringLiteral("hub-a:7443"));
    held.insert(QStringLiteral("connected"), true);
    held.insert(QStringLiteral("usb_busid"), QStringLiteral("1-1"));
    model.setForwarders({ forwarder(1, QStringLiteral("lab")), held });
    QCOMPARE(model.index(1).data(ForwarderListModel::HubMemberRole).toString(),
        QStringLiteral("hub-a:7443"));
    QCOMPARE(model.index(1).data(ForwarderListModel::DeviceUnpluggedRole).toBool(), false);
    // The forwarder says its USB device was pulled, then plugged in again.
    QVERIFY(model.applyEvent(QStringLiteral("forwarder.device"),
        { { QStringLiteral("id"), 2 }, { QStringLiteral("usb_busid"), QString() } }));
    QCOMPARE(model.index(1).data(ForwarderListModel::DeviceUnpluggedRole).toBool(), true);
    QVERIFY(model.applyEvent(QStringLiteral("forwarder.device"),
        { { QStringLiteral("id"), 2 }, { QStringLiteral("usb_busid"), QStringLiteral("1-2") } }));
    QCOMPARE(model.index(1).data(ForwarderListModel::DeviceUnpluggedRole).toBool(), false);
    QVERIFY(model.applyEvent(QStringLiteral("forwarder.device"),
        { { QStringLiteral("id"), 2 }, { QStringLiteral("usb_busid"), QString() } }));
    QVERIFY(model.applyEvent(
        QStringLiteral("forwarder.disconnected"), { { QStringLiteral("id"), 2 } }));
    // Offline, nobody knows where the device is: not "unplugged".
    QCOMPARE(model.index(1).data(ForwarderListModel::DeviceUnpluggedRole).toBool(), false);
    QCOMPARE(model.index(1).data(ForwarderListModel::ConnectedRole).toBool(), false);
    // No session, so no hub holds it, whatever the last list said.
    QCOMPARE(model.index(1).data(ForwarderListModel::HubMemberRole).toString(), QString());
    QVERIFY(model.index(1).data(ForwarderListModel::LastSeenRole).toDateTime().isValid());

    QVERIFY(model.applyEvent(QStringLiteral("forwarder.revoked"), { { QStringLiteral("id"), 2 } }));
    QCOMPARE(
        model.index(1).data(ForwarderListModel::StateRole).toString(), QStringLiteral("revoked"));
    QCOMPARE(model.index(1).data(ForwarderListModel::BindingIdRole).toLongLong(), 0);
    // Row 0 was never touched.
    QCOMPARE(model.index(0).data(ForwarderListModel::StateRole).toString(),
        QStringLiteral("disconnected"));
    // Events about other things are not this model's business.
    const int before = int(changed.count());
    QVERIFY(model.applyEvent(QStringLiteral("request.filed"), { { QStringLiteral("id"), 1 } }));
    QCOMPARE(changed.count(), before);
}

void TestForwarderListModel::anEventAboutAnUnknownForwarderAsksForARefresh()
{
    ForwarderListModel model;
    model.setForwarders({ forwarder(1, QStringLiteral("lab")) });
    QVERIFY(
        !model.applyEvent(QStringLiteral("forwarder.enrolled"), { { QStringLiteral("id"), 4 } }));
    QVERIFY(!model.applyEvent(
        QStringLiteral("binding.created"), binding(3, 4, QStringLiteral("/srv/p"))));
    QCOMPARE(model.rowCount(), 1);
}

void TestForwarderListModel::testOutcomeIsKeptPerRow()
{
    ForwarderListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setForwarders(
        { forwarder(1, QStringLiteral("lab")), forwarder(2, QStringLiteral("hsm")) });
    model.setTestRunning(2, true);
    QCOMPARE(model.index(1).data(ForwarderListModel::TestRunningRole).toBool(), true);
    const cloop::dashboard::TestOutcome outcome { true,
        QDateTime(QDate(2026, 12, 1), QTime(10, 0), Qt::UTC), QStringLiteral("eth1 · link up"),
        QStringLiteral("eth1 · link up\nMAC address 02:00:00:00:00:01") };
    model.setTestOutcome(2, outcome);
    model.setTestRunning(2, false);
    const QModelIndex tested = model.index(1);
    QCOMPARE(tested.data(ForwarderListModel::TestSummaryRole).toString(),
        QStringLiteral("eth1 · link up"));
    QCOMPARE(tested.data(ForwarderListModel::TestDetailsRole).toString(), outcome.details);
    QCOMPARE(tested.data(ForwarderListModel::TestPassedRole).toBool(), true);
    QCOMPARE(tested.data(ForwarderListModel::TestFinishedAtRole).toDateTime(), outcome.finishedAt);
    QCOMPARE(model.index(0).data(ForwarderListModel::TestSummaryRole).toString(), QString());
    // An untested row says so: no verdict rather than a failure.
    QVERIFY(!model.index(0).data(ForwarderListModel::TestPassedRole).isValid());
    // A refresh keeps what the Test said.
    model.setForwarders({ forwarder(1, QStringLiteral("lab")),
        forwarder(2, QStringLiteral("hsm"), QStringLiteral("connected")) });
    QCOMPARE(model.index(1).data(ForwarderListModel::TestSummaryRole).toString(),
        QStringLiteral("eth1 · link up"));
    // Forgetting the outcome forgets all of it.
    model.setTestOutcome(2, std::nullopt);
    QVERIFY(!model.index(1).data(ForwarderListModel::TestPassedRole).isValid());
    QCOMPARE(model.index(1).data(ForwarderListModel::TestDetailsRole).toString(), QString());
}

void TestForwarderListModel::testReportsReadAsWords()
{
    using cloop::dashboard::describeTestReport;
    const QJsonObject segment { { QStringLiteral("kind"), QStringLiteral("l2") },
        { QStringLiteral("interface"), QStringLiteral("eth1") }, { QStringLiteral("ok"), true },
        { QStringLiteral("link"),
            QJsonObject { { QStringLiteral("up"), true }, { QStringLiteral("carrier"), true },
                { QStringLiteral("mtu"), 1500 } } },
        { QStringLiteral("listened_ms"), 1500 }, { QStringLiteral("frames_seen"), 12 },
        { QStringLiteral("frames"),
            QJsonArray { QJsonObject {
                { QStringLiteral("summary"), QStringLiteral("ARP who-has 192.0.2.1") } } } } };
    const auto segmentReport = cloop::api::DeviceTestReport::fromJson(segment);
    QVERIFY2(segmentReport, qPrintable(segmentReport ? QString() : segmentReport.error().message));
    const auto outcome = describeTestReport(*segmentReport, 1'260);
    QVERIFY2(outcome.summary.startsWith(QStringLiteral(u"eth1 · link up · MTU 1500 · untagged"))
            // (the plural is the English translation's, which this test does not load)
            && outcome.summary.contains(QLatin1String("12 frame"))
            && outcome.summary.contains(QLatin1String(" in 1.5 s"))
            && outcome.summary.contains(QLatin1String("hub round trip 1.3 ms")),
        qPrintable(outcome.summary));
    QVERIFY(outcome.passed);
    // The summary is one line; every frame is in the details.
    QVERIFY(!outcome.summary.contains(QLatin1Char('\n')));
    QVERIFY2(outcome.details.startsWith(outcome.summary)
            && outcome.details.contains(QLatin1String("ARP who-has 192.0.2.1")),
        qPrintable(outcome.details));
    // Tagged frames name their VLANs, each once and in order.
    QJsonObject tagged = segment;
    tagged.insert(QStringLiteral("frames"),
        QJsonArray { QJsonObject { { QStringLiteral("vlan"), 20 } },
            QJsonObject { { QStringLiteral("vlan"), 10 } },
            QJsonObject { { QStringLiteral("vlan"), 20 } } });
    const QString taggedWords = describeTestReport(tagged).summary;
    QVERIFY2(taggedWords.contains(QLatin1String("VLAN 10, 20")), qPrintable(taggedWords));
    QJsonObject noCarrier = segment;
    noCarrier.insert(QStringLiteral("link"),
        QJsonObject { { QStringLiteral("up"), true }, { QStringLiteral("carrier"), false } });
    QVERIFY(describeTestReport(noCarrier).summary.contains(QLatin1String("no carrier")));
    QVERIFY(!describeTestReport(noCarrier).passed);
    const QJsonObject problem { { QStringLiteral("kind"), QStringLiteral("l2") },
        { QStringLiteral("ok"), false },
        { QStringLiteral("problem"), QStringLiteral("no interface eth9") } };
    QCOMPARE(describeTestReport(problem).summary,
        QStringLiteral("Problem on the forwarder: no interface eth9"));
    QVERIFY(!describeTestReport(problem).passed);
    // A report that does not parse fails the Test and says why.
    const auto unreadable = describeTestReport(QJsonObject { { QStringLiteral("ok"), 7 } });
    QVERIFY(!unreadable.passed);
    QVERIFY2(unreadable.summary.startsWith(QLatin1String("Test failed: ")),
        qPrintable(unreadable.summary));

    // A USB forwarder's report is the USB/IP device list the hub read.
    const QJsonObject usb { { QStringLiteral("kind"), QStringLiteral("usb") },
        { QStringLiteral("ok"), true },
        { QStringLiteral("devices"),
            QJsonArray { QJsonObject { { QStringLiteral("busid"), QStringLiteral("1-1") },
                { QStringLiteral("vendor_id"), QStringLiteral("1d6b") },
                { QStringLiteral("product_id"), QStringLiteral("0002") },
                { QStringLiteral("speed"), QStringLiteral("high speed (480 Mbit/s)") },
                { QStringLiteral("interfaces"),
                    QJsonArray { QJsonObject {}, QJsonObject {} } } } } } };
    const auto usbOutcome = describeTestReport(usb);
    QVERIFY(usbOutcome.passed);
    const QString usbWords = usbOutcome.summary;
    QVERIFY2(usbWords.startsWith(QStringLiteral(u"Exports 1-1 · 1d6b:0002"))
            && usbWords.contains(QLatin1String("high speed"))
            && usbWords.contains(QLatin1String("2 interface")),
        qPrintable(usbWords));
    // Named from the system's USB ID database, where there is one.
    const auto &system = cloop::device::usb::UsbIdDatabase::system();
    if (!system.isEmpty())
        QVERIFY2(usbWords.contains(system.productName(0x1d6b, 0x0002)), qPrintable(usbWords));
    // One that exports nothing fails: nothing could be imported.
    QJsonObject none = usb;
    none.insert(QStringLiteral("devices"), QJsonArray {});
    QCOMPARE(describeTestReport(none).summary, QStringLiteral("Exports no device"));
    QVERIFY(!describeTestReport(none).passed);
}

void TestForwarderListModel::usbDevicesAreNamedFromTheIdDatabase()
{
    const auto ids = cloop::device::usb::UsbIdDatabase::parse(
        "1050  Yubico.com\n\t0407  Yubikey 4/5 OTP+U2F+CCID\n"
        "0bda  Realtek\n");
    ForwarderListModel model;
    model.setUsbIds(&ids);
    QJsonObject key = forwarder(1, QStringLiteral("hsm"));
    key.insert(QStringLiteral("device"),
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
            { QStringLiteral("vendor"), QStringLiteral("1050") },
            { QStringLiteral("product"), QStringLiteral("0407") } });
    QJsonObject unknownProduct = forwarder(2, QStringLiteral("nic"));
    unknownProduct.insert(QStringLiteral("device"),
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
            { QStringLiteral("vendor"), QStringLiteral("0bda") },
            { QStringLiteral("product"), QStringLiteral("ffff") } });
    QJsonObject garbage = forwarder(3, QStringLiteral("odd"));
    garbage.insert(QStringLiteral("device"),
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") },
            { QStringLiteral("vendor"), QStringLiteral("zz") } });
    model.setForwarders({ key, unknownProduct, garbage, forwarder(4, QStringLiteral("lab")) });
    QCOMPARE(model.index(0).data(ForwarderListModel::DeviceNameRole).toString(),
        QStringLiteral(u"Yubico.com · Yubikey 4/5 OTP+U2F+CCID"));
    QCOMPARE(model.index(1).data(ForwarderListModel::DeviceNameRole).toString(),
        QStringLiteral("Realtek"));
    QCOMPARE(model.index(2).data(ForwarderListModel::DeviceNameRole).toString(), QString());
    QCOMPARE(model.index(3).data(ForwarderListModel::DeviceNameRole).toString(), QString());
}

void TestForwarderListModel::trafficLandsOnEveryRowWithZerosForTheQuiet()
{
    using cloop::dashboard::TrafficHistory;
    ForwarderListModel model;
    QAbstractItemModelTester tester(&model);
    model.setForwarders(QJsonArray { forwarder(1, QStringLiteral("a"), QStringLiteral("connected")),
        forwarder(2, QStringLiteral("b"), QStringLiteral("connected")) });
    const auto traffic = [&](int stepsOfA) {
        QJsonArray carried;
        QJsonArray back;
        for (int step = 0; step < 3; ++step) {
            carried.append(step < stepsOfA ? 1000 * (step + 1) : 0);
            back.append(step < stepsOfA ? 10 : 0);
        }
        return *cloop::api::ForwarderTraffic::fromJson(
            { { QStringLiteral("step_seconds"), 5 }, { QStringLiteral("steps"), 3 },
                { QStringLiteral("until"), QStringLiteral("2026-12-06T10:00:00.000Z") },
                { QStringLiteral("items"),
                    QJsonArray { QJsonObject { { QStringLiteral("forwarder_id"), 1 },
                        { QStringLiteral("to_agent_bytes"), carried },
                        { QStringLiteral("to_forwarder_bytes"), back } } } } });
    };
    // Before any answer a row has no traffic to draw.
    QVERIFY(model.index(0).data(ForwarderListModel::TrafficRole).value<TrafficHistory>().isEmpty());
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setTraffic(traffic(3));
    const auto a = model.index(0).data(ForwarderListModel::TrafficRole).value<TrafficHistory>();
    QCOMPARE(a.stepSeconds, 5);
    QCOMPARE(a.toRun, (QList<qint64> { 1000, 2000, 3000 }));
    QCOMPARE(a.fromRun, (QList<qint64> { 10, 10, 10 }));
    // The answer leaves b out: it carried nothing, each step.
    const auto b = model.index(1).data(ForwarderListModel::TrafficRole).value<TrafficHistory>();
    QCOMPARE(b.toRun, (QList<qint64> { 0, 0, 0 }));
    QCOMPARE(b.until, a.until);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(
        changed.at(0).at(2).value<QList<int>>(), QList<int> { ForwarderListModel::TrafficRole });
    // The same answer again changes nothing; another changes only the row it moved.
    changed.clear();
    model.setTraffic(traffic(3));
    QCOMPARE(changed.count(), 0);
    model.setTraffic(traffic(1));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 0);
}

QTEST_GUILESS_MAIN(TestForwarderListModel)
#include "tst_forwarderlistmodel.moc"
