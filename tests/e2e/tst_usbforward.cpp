// End to end through the whole chain, as root: a run of a bound project gets
// a forwarded USB device. A real hub, the real forwarder and agent programs
// (their *-usbstandin builds: the same code with an in-process stand-in for
// the kernel's usbip-host and vhci_hcd behind fixture /sys trees, since this
// kernel has no USB), and a podman sandbox given the device's node. The
// test is the USB host the sandbox would be: it submits transfers to the
// agent's vhci stand-in, which go agent → hub → forwarder → simulated device
// and back. Skipped, saying why, without root or podman.

#include "support/metricstext.h"
#include "support/testrig.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop::testing;
using namespace cloop::testsupport::usb;

namespace {

const QString kProject = QStringLiteral("/srv/projects/hsm");
constexpr quint16 kVendor = 0x1d50;
constexpr quint16 kProduct = 0x6089;

// Lists the USB nodes the sandbox has and what it was told, then waits.
const QString kShowTheDevice = QStringLiteral(
    "for n in /dev/bus/usb/*/*; do [ -c \"$n\" ] && echo node=$n; done; "
    "[ -r /dev/bus/usb ] && ls /dev/bus/usb | tr '\\n' ' ' | sed 's/^/buses=/'; echo; "
    "echo devices=$CLOOP_FORWARDED_DEVICES; echo ready; sleep 120");

QJsonObject transfer(
    const QString &node, const QString &direction, const QByteArray &data, int length = 0)
{
    QJsonObject request { { QStringLiteral("op"), QStringLiteral("bulk") },
        { QStringLiteral("node"), node }, { QStringLiteral("endpoint"), 1 },
        { QStringLiteral("direction"), direction } };
    if (direction == QLatin1String("out"))
        request.insert(QStringLiteral("data"), QString::fromLatin1(data.toBase64()));
    else
        request.insert(QStringLiteral("length"), length);
    return request;
}

QByteArray dataOf(const QJsonObject &answer)
{
    return QByteArray::fromBase64(answer.value(QLatin1String("data")).toString().toLatin1());
}

} // namespace

class TestUsbForward final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aBoundRunGetsTheNodeAndTransfersArriveByteExact_data();
    void aBoundRunGetsTheNodeAndTransfersArriveByteExact();
    void theTestReadsTheExportedDeviceList();
    void unplugDuringATransferEndsTheRunsDeviceSayingWhy();
    void everyDetachFreesThePort_data();
    void everyDetachFreesThePort();
    void aRunOfAnUnboundProjectGetsNoNode();
    void aSecondRunWaitsForTheDevice();
    void aRestartedForwarderGivesTheRunningSandboxItsDeviceBack();

private:
    qint64 queue(const QString &project, const QString &script);
    QString logOf(qint64 id);
    bool waitForLog(qint64 id, const QString &needle, int timeoutMs = kLongWaitMs);
    // Waits for the run's sandbox to show its node; the node, or empty.
    QString awaitNode(qint64 id);
    QJsonObject agentPorts();
    QJsonObject forwarderDevices();
    QString driverOf(const QString &busId);
    // Cancels the run; its vhci port is free and the device on its own
    // driver again.
    void cancelAndAwaitTheDeviceBack(qint64 id);

    std::unique_ptr<QTemporaryDir> m_forwarderRoot;
    std::unique_ptr<QTemporaryDir> m_agentRoot;
    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_forwarder = nullptr;
    ForwarderProcess *m_agent = nullptr;
    qint64 m_forwarderId = 0;
    qint64 m_bindingId = 0;
};

void TestUsbForward::initTestCase()
{
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

void TestUsbForward::init()
{
    m_forwarderRoot = std::make_unique<QTemporaryDir>();
    m_agentRoot = std::make_unique<QTemporaryDir>();
    QVERIFY(m_forwarderRoot->isValid() && m_agentRoot->isValid());
    FixtureDevice key;
    key.busId = QStringLiteral("1-1");
    key.vendorId = kVendor;
    key.productId = kProduct;
    key.serial = QStringLiteral("HSM0001");
    QVERIFY(UsbFixture::makeForwarderMachine(m_forwarderRoot->path(), { key }));
    QVERIFY(UsbFixture::makeAgentMachine(m_agentRoot->path()));

    m_rig = std::make_unique<TestRig>();
    // Traffic in one-second steps, so that the graphs' source is read soon.
    QStringList serve { QStringLiteral("--traffic-step"), QStringLiteral("1s") };
    // The same chain with the device's bytes on the daemons' tunnels.
    if (QByteArray(QTest::currentDataTag()).startsWith("on the tunnels"))
        serve << QStringLiteral("--relay-threads") << QStringLiteral("0");
    m_rig->hub().setServeArguments(serve);
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);

    const Enrollment forwarder = hub.enroll(
        QStringLiteral("hsm"), { QStringLiteral("--usb"), QStringLiteral("1d50:6089:HSM0001") });
    QVERIFY2(forwarder.ok, qPrintable(forwarder.error));
    m_forwarderId = forwarder.id;
    m_forwarder = &m_rig->addForwarder({ QStringLiteral("--bundle"), forwarder.bundle }, {},
        ForwarderProcess::Program::ForwarderUsbStandIn);
    m_forwarder->setEnvironmentVariable(
        QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
    m_forwarder->setEnvironmentVariable(
        QStringLiteral("CLOOP_SYSFS_ROOT"), m_forwarderRoot->path());
    QVERIFY(m_rig->startAndAwaitConnection(*m_forwarder, forwarder.id));
    QVERIFY2(m_forwarder->waitForStderr(QStringLiteral("is present as 1-1")),
        qPrintable(m_forwarder->describe()));

    const QJsonObject agent = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                              QStringLiteral("--name"), QStringLiteral("bench"),
                                              QStringLiteral("--json") })
                                  .toObject();
    m_agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), agent.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--max-concurrent"), QStringLiteral("2") },
        m_rig->newHome(), ForwarderProcess::Program::AgentUsbStandIn);
    m_agent->setEnvironmentVariable(QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("agent"));
    m_agent->setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), m_agentRoot->path());
    m_agent->setEnvironmentVariable(QStringLiteral("CLOOP_DEV_ROOT"), m_agentRoot->path());
    QVERIFY(m_agent->start());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(m_agent->describe()));

    m_bindingId = hub.bind(m_forwarderId, kProject);
    QVERIFY2(m_bindingId > 0, qPrintable(hub.transcript()));
}

void TestUsbForward::cleanup()
{
    // A race Qt noticed is a failure even when the test's checks passed.
    const QStringList races = m_rig ? m_rig->crossThreadComplaints() : QStringList();
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_forwarder = nullptr;
    m_agent = nullptr;
    m_rig.reset();
    m_agentRoot.reset();
    m_forwarderRoot.reset();
    QVERIFY2(races.isEmpty(), qPrintable(races.join(u'\n')));
}

qint64 TestUsbForward::queue(const QString &project, const QString &script)
{
    const CliResult queued = m_rig->hub().cli(
        { QStringLiteral("run"), QStringLiteral("--project"), project, QStringLiteral("--no-wait"),
            QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), script });
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

QString TestUsbForward::logOf(qint64 id)
{
    return m_rig->hub()
        .cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) })
        .stdoutText();
}

bool TestUsbForward::waitForLog(qint64 id, const QString &needle, int timeoutMs)
{
    return waitUntil([&] { return logOf(id).contains(needle); }, timeoutMs);
}

QString TestUsbForward::awaitNode(qint64 id)
{
    if (!waitForLog(id, QStringLiteral("ready")))
        return {};
    const QRegularExpressionMatch node
        = QRegularExpression(QStringLiteral("node=(/dev/bus/usb/\\d{3}/\\d{3})")).match(logOf(id));
    return node.hasMatch() ? node.captured(1) : QString();
}

QJsonObject TestUsbForward::agentPorts()
{
    auto answer = StandInControl(m_agentRoot->path())
                      .call({ { QStringLiteral("op"), QStringLiteral("ports") } });
    return answer ? *answer : QJsonObject {};
}

QJsonObject TestUsbForward::forwarderDevices()
{
    auto answer = StandInControl(m_forwarderRoot->path())
                      .call({ { QStringLiteral("op"), QStringLiteral("status") } });
    return answer ? *answer : QJsonObject {};
}

QString TestUsbForward::driverOf(const QString &busId)
{
    // As the forwarder machine's /sys shows it: readable after the
    // forwarder (and the stand-in inside it) has gone too.
    return UsbFixture::driverOf(cloop::device::SysfsRoot(m_forwarderRoot->path()), busId);
}

int usedPorts(const QJsonObject &ports);

void TestUsbForward::cancelAndAwaitTheDeviceBack(qint64 id)
{
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) }),
        0);
    QVERIFY2(
        waitUntil([&] { return usedPorts(agentPorts()) == 0; }), qPrintable(m_agent->stderrText()));
    QVERIFY2(waitUntil([&] { return driverOf(QStringLiteral("1-1")) == QLatin1String("usb"); }),
        qPrintable(m_forwarder->stderrText()));
}

int usedPorts(const QJsonObject &ports)
{
    int used = 0;
    for (const QJsonValue &port : ports.value(QLatin1String("ports")).toArray())
        used += port.toObject().value(QLatin1String("status")).toInt() != 4;
    return used;
}

void TestUsbForward::aBoundRunGetsTheNodeAndTransfersArriveByteExact_data()
{
    // What the hub says of the run's stream.
    QTest::addColumn<bool>("onLegs");
    QTest::newRow("on legs") << true;
    QTest::newRow("on the tunnels (--relay-threads 0)") << false;
}

void TestUsbForward::aBoundRunGetsTheNodeAndTransfersArriveByteExact()
{
    QFETCH(bool, onLegs);
    const qint64 id = queue(kProject, kShowTheDevice);
    QVERIFY(id > 0);
    const QString node = awaitNode(id);
    QVERIFY2(!node.isEmpty(), qPrintable(logOf(id) + m_agent->stderrText()));
    const QString log = logOf(id);
    // The sandbox holds that one node and is told where it is.
    QCOMPARE(log.count(QLatin1String("node=")), 1);
    QVERIFY2(log.contains(QStringLiteral("devices=fwd-hsm=usb:%1").arg(node)), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("buses=%1 \n").arg(node.section(QLatin1Char('/'), 4, 4))),
        qPrintable(log));
    // The device is bound to usbip-host on the forwarder's machine and on a
    // high-speed vhci port on the agent's.
    QCOMPARE(driverOf(QStringLiteral("1-1")), QStringLiteral("usbip-host"));
    QCOMPARE(usedPorts(agentPorts()), 1);
    // The hub says which way the bytes go.
    const QString stream = QStringLiteral("run %1 gets fwd-hsm from forwarder %2 on binding %3")
                               .arg(id)
                               .arg(m_forwarderId)
                               .arg(m_bindingId);
    const QString way
        = onLegs ? QStringLiteral(" (on legs, relayed on a relay thread)\n") : QStringLiteral("\n");
    QVERIFY2(m_rig->hub().log().contains(stream + way), qPrintable(m_rig->hub().log()));

    StandInControl host(m_agentRoot->path());
    // Control: the device descriptor, from the simulated device behind the chain.
    auto descriptor = host.call(
        { { QStringLiteral("op"), QStringLiteral("control") }, { QStringLiteral("node"), node },
            { QStringLiteral("setup"), QStringLiteral("8006000100001200") } });
    QVERIFY2(descriptor, qPrintable(descriptor ? QString() : descriptor.error().message));
    const QByteArray device = dataOf(*descriptor);
    QCOMPARE(device.size(), 18);
    QCOMPARE(quint8(device[8]) | quint8(device[9]) << 8, int(kVendor));
    QCOMPARE(quint8(device[10]) | quint8(device[11]) << 8, int(kProduct));
    // A vendor OUT request's data comes back with the vendor IN request.
    QByteArray stored(4096, Qt::Uninitialized);
    QRandomGenerator(7).fillRange(reinterpret_cast<quint32 *>(stored.data()), stored.size() / 4);
    auto written = host.call(
        { { QStringLiteral("op"), QStringLiteral("control") }, { QStringLiteral("node"), node },
            { QStringLiteral("setup"), QStringLiteral("4001000000000010") },
            { QStringLiteral("data"), QString::fromLatin1(stored.toBase64()) } });
    QVERIFY2(written && written->value(QLatin1String("status")).toInt() == 0,
        qPrintable(m_agent->stderrText()));
    auto readBack = host.call(
        { { QStringLiteral("op"), QStringLiteral("control") }, { QStringLiteral("node"), node },
            { QStringLiteral("setup"), QStringLiteral("c002000000000010") } });
    QVERIFY(readBack);
    QCOMPARE(dataOf(*readBack), stored);

    // Bulk: 8 MiB out through the loopback endpoint and back, byte-exact.
    QByteArray sent(8 * 1024 * 1024, Qt::Uninitialized);
    QRandomGenerator(11).fillRange(reinterpret_cast<quint32 *>(sent.data()), sent.size() / 4);
    constexpr qsizetype kChunk = 512 * 1024;
    QElapsedTimer clock;
    clock.start();
    for (qsizetype at = 0; at < sent.size(); at += kChunk) {
        auto out = host.call(transfer(node, QStringLiteral("out"), sent.mid(at, kChunk)));
        QVERIFY2(out && out->value(QLatin1String("actual")).toInt() == kChunk,
            qPrintable(out ? QString::number(out->value(QLatin1String("actual")).toInt())
                           : out.error().message));
    }
    QByteArray received;
    while (received.size() < sent.size()) {
        auto in = host.call(transfer(node, QStringLiteral("in"), {}, int(kChunk)));
        QVERIFY2(in, qPrintable(in ? QString() : in.error().message));
        const QByteArray chunk = dataOf(*in);
        QVERIFY2(!chunk.isEmpty(), "the loopback ran dry before everything came back");
        received += chunk;
    }
    QCOMPARE(received.size(), sent.size());
    QVERIFY(received == sent);
    qInfo("16 MiB of bulk transfers (8 out, 8 in) through the chain in %lld ms",
        qlonglong(clock.elapsed()));

    // The hub's /metrics counts what it relayed for the binding, each way:
    // at least the 8 MiB and their USB/IP framing.
    const HttpResult scraped = plainHttp(m_rig->hub().metricsUrl());
    QCOMPARE(scraped.status, 200);
    for (const QString &direction :
        { QStringLiteral("to_agent"), QStringLiteral("to_forwarder") }) {
        const auto relayed = metricValue(scraped.body, QStringLiteral("cloop_relayed_bytes_total"),
            { { QStringLiteral("binding"), QString::number(m_bindingId) },
                { QStringLiteral("direction"), direction } });
        QVERIFY2(relayed && *relayed >= double(sent.size()), scraped.body.constData());
    }
    QCOMPARE(metricValue(scraped.body, QStringLiteral("cloop_device_streams_open")), 1.0);
    // The dashboard's traffic graph of the forwarder shows the same bytes,
    // spread over the steps they moved in.
    HubProcess &hub = m_rig->hub();
    QTRY_VERIFY_WITH_TIMEOUT(
        hub.trafficTotal(m_forwarderId, QLatin1StringView("to_agent_bytes")) >= sent.size()
            && hub.trafficTotal(m_forwarderId, QLatin1StringView("to_forwarder_bytes"))
                >= sent.size(),
        kLongWaitMs);
    // A USB forwarder counts URBs: at least the three control transfers and
    // the 32 bulk ones each way (the kernel may split them further).
    QTRY_VERIFY_WITH_TIMEOUT(
        hub.trafficTotal(m_forwarderId, QLatin1StringView("to_agent_frames")) >= 35
            && hub.trafficTotal(m_forwarderId, QLatin1StringView("to_forwarder_frames")) >= 35,
        kLongWaitMs);
    QCOMPARE(hub.trafficOf(m_forwarderId).value(QLatin1String("unit")).toString(),
        QStringLiteral("urbs"));
    qInfo("URBs the forwarder counted: %lld answered towards the run, %lld submitted by it",
        hub.trafficTotal(m_forwarderId, QLatin1StringView("to_agent_frames")),
        hub.trafficTotal(m_forwarderId, QLatin1StringView("to_forwarder_frames")));
    QCOMPARE(hub.trafficTotal(m_forwarderId, QLatin1StringView("dropped_to_agent")), 0);

    // The run ends: port freed, device back with its driver, nothing recorded.
    cancelAndAwaitTheDeviceBack(id);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(!QFileInfo::exists(m_agentRoot->path() + node), qPrintable(node));
}

void TestUsbForward::theTestReadsTheExportedDeviceList()
{
    const QJsonObject answer = m_rig->hub()
                                   .cliJson({ QStringLiteral("forward"), QStringLiteral("test"),
                                       QString::number(m_forwarderId), QStringLiteral("--json") })
                                   .toObject();
    const QJsonObject report = answer.value(QLatin1String("report")).toObject();
    QVERIFY2(report.value(QLatin1String("ok")).toBool(), qPrintable(m_rig->hub().transcript()));
    const QJsonArray devices = report.value(QLatin1String("devices")).toArray();
    QCOMPARE(devices.size(), 1);
    QCOMPARE(
        devices.first().toObject().value(QLatin1String("busid")).toString(), QStringLiteral("1-1"));
    QCOMPARE(devices.first().toObject().value(QLatin1String("vendor_id")).toString(),
        QStringLiteral("1d50"));
    // Testing hands the device to nothing.
    QCOMPARE(driverOf(QStringLiteral("1-1")), QStringLiteral("usb"));
    const CliResult words = m_rig->hub().cli(
        { QStringLiteral("forward"), QStringLiteral("test"), QString::number(m_forwarderId) });
    CLOOP_COMPARE_EXIT(words, 0);
    QVERIFY2(words.stdoutText().contains(QLatin1String("exports 1-1  1d50:6089")),
        qPrintable(words.describe()));
}

void TestUsbForward::unplugDuringATransferEndsTheRunsDeviceSayingWhy()
{
    const qint64 id = queue(kProject, kShowTheDevice);
    QVERIFY(id > 0);
    const QString node = awaitNode(id);
    QVERIFY2(!node.isEmpty(), qPrintable(logOf(id) + m_agent->stderrText()));
    StandInControl host(m_agentRoot->path());
    // Data in flight on the loopback when the device is pulled.
    QVERIFY(host.call(transfer(node, QStringLiteral("out"), QByteArray(256 * 1024, 'x'))));
    auto unplugged = StandInControl(m_forwarderRoot->path())
                         .call({ { QStringLiteral("op"), QStringLiteral("unplug") },
                             { QStringLiteral("busid"), QStringLiteral("1-1") } });
    QVERIFY2(unplugged, qPrintable(unplugged ? QString() : unplugged.error().message));
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-hsm")), qPrintable(m_agent->describe()));
    QVERIFY2(m_agent->stderrText().contains(QRegularExpression(
                 QStringLiteral("lost fwd-hsm: .*the USB device was unplugged"))),
        qPrintable(m_agent->stderrText()));
    QVERIFY2(!m_agent->stderrText().contains(QLatin1String("cannot detach")),
        qPrintable(m_agent->stderrText()));
    // The hub's record says so while the forwarder stays connected.
    const auto busIdOnRecord = [this] {
        const QJsonArray list = m_rig->hub().cliItems(
            { QStringLiteral("forward"), QStringLiteral("list"), QStringLiteral("--json") });
        for (const QJsonValue &entry : list) {
            if (entry.toObject().value(QLatin1String("id")).toInteger() == m_forwarderId)
                return entry.toObject().value(QLatin1String("usb_busid"));
        }
        return QJsonValue(QJsonValue::Undefined);
    };
    QVERIFY(waitUntil([&] { return busIdOnRecord() == QJsonValue(QString()); }));
    const CliResult listed
        = m_rig->hub().cli({ QStringLiteral("forward"), QStringLiteral("list") });
    QVERIFY2(listed.stdoutText().contains(QLatin1String("usb 1d50:6089:HSM0001 (unplugged)")),
        qPrintable(listed.describe()));
    // The agent freed its port; further transfers find no device.
    QVERIFY(waitUntil([&] { return usedPorts(agentPorts()) == 0; }));
    QVERIFY(!host.call(transfer(node, QStringLiteral("in"), {}, 512)));
    // While it is unplugged a new run is refused, saying so.
    QVERIFY(waitUntil([&] {
        return m_rig->hub().log().contains(QLatin1String("reports its USB device unplugged"));
    }));
    const CliResult refused = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(QLatin1String("is unplugged")),
        qPrintable(refused.describe()));
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) }),
        0);
    // Plugged back in, it is carried again.
    QVERIFY(StandInControl(m_forwarderRoot->path())
                .call({ { QStringLiteral("op"), QStringLiteral("plug") },
                    { QStringLiteral("busid"), QStringLiteral("1-1") } }));
    QVERIFY2(m_forwarder->waitForStderr(QStringLiteral("is present as 1-1"), kLongWaitMs),
        qPrintable(m_forwarder->describe()));
    QVERIFY(waitUntil([&] { return busIdOnRecord() == QJsonValue(QStringLiteral("1-1")); }));
    const qint64 again = queue(kProject, kShowTheDevice);
    QVERIFY2(waitUntil([&] { return !awaitNode(again).isEmpty(); }),
        qPrintable(logOf(again) + m_agent->stderrText()));
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"),
                           QString::number(again) }),
        0);
}

void TestUsbForward::everyDetachFreesThePort_data()
{
    QTest::addColumn<QString>("cause");
    QTest::newRow("the run is cancelled") << QStringLiteral("cancel");
    QTest::newRow("the binding is ended") << QStringLiteral("unbind");
    QTest::newRow("the forwarder is revoked") << QStringLiteral("revoke");
    QTest::newRow("the forwarder stops") << QStringLiteral("stop");
}

void TestUsbForward::everyDetachFreesThePort()
{
    QFETCH(QString, cause);
    const qint64 id = queue(kProject, kShowTheDevice);
    QVERIFY(id > 0);
    const QString node = awaitNode(id);
    QVERIFY2(!node.isEmpty(), qPrintable(logOf(id) + m_agent->stderrText()));
    QCOMPARE(usedPorts(agentPorts()), 1);
    QElapsedTimer clock;
    clock.start();
    HubProcess &hub = m_rig->hub();
    if (cause == QLatin1String("cancel"))
        CLOOP_COMPARE_EXIT(
            hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) }), 0);
    else if (cause == QLatin1String("unbind"))
        CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("forward"), QStringLiteral("unbind"),
                               QString::number(m_bindingId), QStringLiteral("--reason"),
                               QStringLiteral("lab needs the key back") }),
            0);
    else if (cause == QLatin1String("revoke"))
        CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("forward"), QStringLiteral("revoke"),
                               QString::number(m_forwarderId), QStringLiteral("--reason"),
                               QStringLiteral("the key moved to another lab") }),
            0);
    else
        QVERIFY(m_forwarder->terminate());
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-hsm")), qPrintable(m_agent->describe()));
    QVERIFY(waitUntil([&] { return usedPorts(agentPorts()) == 0; }));
    QVERIFY2(clock.elapsed() < 2000,
        qPrintable(QStringLiteral("detached after %1 ms").arg(clock.elapsed())));
    QVERIFY(!QFileInfo::exists(m_agentRoot->path() + node));
    QVERIFY2(!m_agent->stderrText().contains(QLatin1String("cannot detach")),
        qPrintable(m_agent->stderrText()));
    // The forwarder gave the device back (a revoked or stopped one on its way out).
    QVERIFY2(waitUntil([&] { return driverOf(QStringLiteral("1-1")) == QLatin1String("usb"); }),
        qPrintable(m_forwarder->describe()));
    if (cause == QLatin1String("stop")) {
        QVERIFY(m_forwarder->waitForExit());
        QCOMPARE(m_forwarder->exitCode(), 0);
    }
    // Nothing left in the agent's record either.
    const QString ledger = m_agent->home() + QLatin1String("/.cloop/work/attachments.json");
    QVERIFY(waitUntil([&] {
        QFile file(ledger);
        return file.open(QIODevice::ReadOnly) && !file.readAll().contains("\"usb\"");
    }));
    (void)hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) });
}

void TestUsbForward::aRunOfAnUnboundProjectGetsNoNode()
{
    const QString other = QStringLiteral("/srv/projects/other");
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("project"), QStringLiteral("add"), other }), 0);
    const CliResult plain = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        other, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("ls /dev/bus/usb 2>&1; echo devices=[$CLOOP_FORWARDED_DEVICES]") });
    CLOOP_COMPARE_EXIT(plain, 0);
    QVERIFY2(
        plain.stdoutText().contains(QLatin1String("devices=[]")), qPrintable(plain.describe()));
    QVERIFY2(!plain.stdoutText().contains(QLatin1String("00")), qPrintable(plain.describe()));
    QCOMPARE(usedPorts(agentPorts()), 0);
    QCOMPARE(driverOf(QStringLiteral("1-1")), QStringLiteral("usb"));
}

void TestUsbForward::aSecondRunWaitsForTheDevice()
{
    const qint64 first = queue(kProject, kShowTheDevice);
    QVERIFY(first > 0);
    QVERIFY2(!awaitNode(first).isEmpty(), qPrintable(logOf(first) + m_agent->stderrText()));
    // The agent could take both runs, but the device serves one at a time.
    const qint64 second = queue(kProject, kShowTheDevice);
    QVERIFY(second > 0);
    const auto stateOf = [this](qint64 id) {
        return m_rig->hub()
            .cliJson({ QStringLiteral("run"), QStringLiteral("show"), QString::number(id),
                QStringLiteral("--json") })
            .toObject()
            .value(QLatin1String("state"))
            .toString();
    };
    QTest::qWait(1500);
    QCOMPARE(stateOf(second), QStringLiteral("queued"));
    QCOMPARE(usedPorts(agentPorts()), 1);
    // The first lets go: the second gets the device.
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"),
                           QString::number(first) }),
        0);
    const QString node = awaitNode(second);
    QVERIFY2(!node.isEmpty(), qPrintable(logOf(second) + m_agent->stderrText()));
    QCOMPARE(usedPorts(agentPorts()), 1);
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"),
                           QString::number(second) }),
        0);
}

void TestUsbForward::aRestartedForwarderGivesTheRunningSandboxItsDeviceBack()
{
    // Given a run that says which USB nodes it has, and which device each
    // opens (major:minor), each time they change,
    const qint64 id = queue(kProject,
        QStringLiteral("last=; while true; do now=; devs=; for n in /dev/bus/usb/*/*; do "
                       "[ -c \"$n\" ] && { now=\"$now$n \"; devs=\"$devs$n=$(stat -c %t:%T $n) \"; "
                       "}; done; [ \"$now\" = \"$last\" ] || { echo \"nodes=[$now]\"; "
                       "echo \"devs=[$devs]\"; }; last=$now; sleep 0.1; done"));
    QVERIFY(id > 0);
    static const QRegularExpression given(
        QStringLiteral("nodes=\\[(/dev/bus/usb/\\d{3}/\\d{3}) \\]"));
    QVERIFY2(waitUntil([&] { return given.match(logOf(id)).hasMatch(); }, kLongWaitMs),
        qPrintable(logOf(id) + m_agent->stderrText()));
    const QString first = given.match(logOf(id)).captured(1);
    StandInControl host(m_agentRoot->path());
    const QJsonObject descriptorRequest { { QStringLiteral("op"), QStringLiteral("control") },
        { QStringLiteral("setup"), QStringLiteral("8006000100001200") } };
    auto request = [&](const QString &node) {
        QJsonObject asked = descriptorRequest;
        asked.insert(QStringLiteral("node"), node);
        return host.call(asked);
    };
    QVERIFY(request(first));

    // when its forwarder stops as a restart (an upgrade) stops it,
    QVERIFY(m_forwarder->terminate());
    QVERIFY(m_forwarder->waitForExit());
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-hsm")), qPrintable(m_agent->describe()));
    // the sandbox keeps no node of the device that went (its number may
    // name another device later), and the run goes on;
    QVERIFY2(waitForLog(id, QStringLiteral("nodes=[]")), qPrintable(logOf(id)));
    QVERIFY2(
        waitUntil([&] { return usedPorts(agentPorts()) == 0; }), qPrintable(m_agent->stderrText()));
    const QJsonObject shown = m_rig->hub()
                                  .cliJson({ QStringLiteral("run"), QStringLiteral("show"),
                                      QString::number(id), QStringLiteral("--json") })
                                  .toObject();
    QCOMPARE(shown.value(QLatin1String("state")).toString(), QStringLiteral("running"));

    // and when it comes back,
    ForwarderProcess &again = m_rig->addForwarder(
        {}, m_forwarder->home(), ForwarderProcess::Program::ForwarderUsbStandIn);
    again.setEnvironmentVariable(QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
    again.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), m_forwarderRoot->path());
    m_forwarder = &again;
    QVERIFY(m_rig->startAndAwaitConnection(again, m_forwarderId));

    // the running sandbox has the device's node again where the kernel
    // numbered it, and at the path it first had, both opening the device;
    // transfers cross the whole chain through it.
    static const QRegularExpression both(
        QStringLiteral("^nodes=\\[(/dev/bus/usb/\\d{3}/\\d{3}) (/dev/bus/usb/\\d{3}/\\d{3}) \\]$"));
    // The two nodes, and the devs= line that follows them.
    QStringList nodes;
    QString devices;
    QVERIFY2(waitUntil(
                 [&] {
                     const QStringList lines = logOf(id).split(QLatin1Char('\n'));
                     for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
                         const QRegularExpressionMatch two = both.match(lines[i]);
                         if (two.hasMatch()) {
                             nodes = { two.captured(1), two.captured(2) };
                             devices = lines[i + 1];
                             return devices.startsWith(QLatin1String("devs="));
                         }
                     }
                     return false;
                 },
                 kLongWaitMs),
        qPrintable(logOf(id) + m_agent->stderrText() + m_rig->hub().log()));
    QVERIFY2(nodes.contains(first), qPrintable(logOf(id)));
    const QString second = nodes.value(nodes.indexOf(first) == 0 ? 1 : 0);
    QVERIFY(second != first);
    QVERIFY2(m_agent->stderrText().contains(
                 QStringLiteral("has fwd-hsm back as %1 and %2").arg(second, first)),
        qPrintable(m_agent->stderrText()));
    const QRegularExpressionMatch opened = QRegularExpression(
        QStringLiteral("%1=(\\w+:\\w+) ").arg(QRegularExpression::escape(second)))
                                               .match(devices);
    QVERIFY2(opened.hasMatch(), qPrintable(devices));
    QVERIFY2(devices.contains(QStringLiteral("%1=%2 ").arg(first, opened.captured(1))),
        qPrintable(devices));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 gets fwd-hsm back").arg(id)),
        qPrintable(m_rig->hub().log()));
    auto descriptor = request(second);
    QVERIFY2(descriptor, qPrintable(descriptor ? QString() : descriptor.error().message));
    const QByteArray device = dataOf(*descriptor);
    QCOMPARE(device.size(), 18);
    QCOMPARE(quint8(device[8]) | quint8(device[9]) << 8, int(kVendor));
    QByteArray sent(256 * 1024, Qt::Uninitialized);
    QRandomGenerator(13).fillRange(reinterpret_cast<quint32 *>(sent.data()), sent.size() / 4);
    auto out = host.call(transfer(second, QStringLiteral("out"), sent));
    QVERIFY2(out && out->value(QLatin1String("actual")).toInt() == sent.size(),
        qPrintable(out ? QString() : out.error().message));
    QByteArray received;
    while (received.size() < sent.size()) {
        auto in = host.call(transfer(second, QStringLiteral("in"), {}, int(sent.size())));
        QVERIFY2(in && !dataOf(*in).isEmpty(), qPrintable(m_agent->stderrText()));
        received += dataOf(*in);
    }
    QVERIFY(received == sent);
    QCOMPARE(driverOf(QStringLiteral("1-1")), QStringLiteral("usbip-host"));
    QCOMPARE(usedPorts(agentPorts()), 1);

    // The run's end takes it as before.
    cancelAndAwaitTheDeviceBack(id);
}

QTEST_GUILESS_MAIN(TestUsbForward)
#include "tst_usbforward.moc"
