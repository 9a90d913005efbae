// End to end, as root, in network namespaces this test makes: the Test of
// a segment forwarder (`cloop forward test ID`). A real hub and a real
// cloop-forward run in the test's own network namespace; the forwarder's
// interface is one end of a veth pair whose other end is in a "lab".

#include "support/labnetwork.h"
#include "support/testrig.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

using namespace cloop::testing;

namespace {
const QString kSegment = QStringLiteral("cl-seg");
} // namespace

class TestSegmentTest final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aTestReportsLinkCountersAndFramesSeen();
    void aTestIsRefusedWithoutAnAdministratorOrASession();
    void aMissingInterfaceIsReportedNotHidden();
    void aUsbForwarderWithoutItsDeviceExportsNothing();

private:
    // Enrolls a forwarder for `device`, starts cloop-forward with the bundle
    // and waits until it is connected; its id, or 0.
    qint64 connectForwarder(const QString &name, const QStringList &device);

    std::unique_ptr<LabNetwork> m_lab;
    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_forwarder = nullptr;
};

void TestSegmentTest::initTestCase()
{
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

void TestSegmentTest::init()
{
    m_lab = std::make_unique<LabNetwork>(
        kSegment, QStringLiteral("cl-lab"), QStringLiteral("192.0.2.2/24"));
    QVERIFY2(m_lab->create(), qPrintable(m_lab->lastError()));
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestSegmentTest::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_forwarder = nullptr;
    m_rig.reset();
    m_lab.reset();
}

qint64 TestSegmentTest::connectForwarder(const QString &name, const QStringList &device)
{
    const Enrollment enrollment = m_rig->hub().enroll(name, device);
    if (!enrollment.ok) {
        qWarning().noquote() << enrollment.error;
        return 0;
    }
    m_forwarder = &m_rig->addForwarder({ QStringLiteral("--bundle"), enrollment.bundle });
    return m_rig->startAndAwaitConnection(*m_forwarder, enrollment.id) ? enrollment.id : 0;
}

void TestSegmentTest::aTestReportsLinkCountersAndFramesSeen()
{
    const qint64 id
        = connectForwarder(QStringLiteral("lab-net"), { QStringLiteral("--interface"), kSegment });
    QVERIFY(id > 0);
    // The lab keeps asking for a host that is not there while the test listens.
    QProcess chatter;
    const QStringList ping = m_lab->labCommand({ QStringLiteral("busybox"), QStringLiteral("ping"),
        QStringLiteral("-c"), QStringLiteral("6"), QStringLiteral("-i"), QStringLiteral("0.3"),
        QStringLiteral("192.0.2.77") });
    chatter.start(ping.first(), ping.mid(1));
    QVERIFY(chatter.waitForStarted());
    const QJsonObject answer = m_rig->hub()
                                   .cliJson({ QStringLiteral("forward"), QStringLiteral("test"),
                                       QString::number(id), QStringLiteral("--json") })
                                   .toObject();
    chatter.waitForFinished();
    const QByteArray shown = QJsonDocument(answer).toJson();
    const QJsonObject report = answer.value(QLatin1String("report")).toObject();
    QVERIFY2(report.value(QLatin1String("ok")).toBool(), shown.constData());
    QCOMPARE(report.value(QLatin1String("kind")).toString(), QStringLiteral("l2"));
    QCOMPARE(report.value(QLatin1String("interface")).toString(), kSegment);
    const QJsonObject link = report.value(QLatin1String("link")).toObject();
    QVERIFY(link.value(QLatin1String("up")).toBool());
    QVERIFY(link.value(QLatin1String("carrier")).toBool());
    QCOMPARE(link.value(QLatin1String("mtu")).toInt(), 1500);
    QVERIFY(report.value(QLatin1String("counters"))
                .toObject()
                .value(QLatin1String("rx_packets"))
                .toInteger()
        > 0);
    QVERIFY2(report.value(QLatin1String("frames_seen")).toInt() >= 1, shown.constData());
    bool sawArp = false;
    for (const QJsonValue &frame : report.value(QLatin1String("frames")).toArray())
        sawArp |= frame.toObject().value(QLatin1String("summary")).toString()
            == QLatin1String("ARP who-has 192.0.2.77 tell 192.0.2.2");
    QVERIFY2(sawArp, shown.constData());
    QCOMPARE(
        answer.value(QLatin1String("forwarder")).toObject().value(QLatin1String("id")).toInteger(),
        id);
    // The human form says the same.
    const CliResult text = m_rig->hub().cli(
        { QStringLiteral("forward"), QStringLiteral("test"), QString::number(id) });
    CLOOP_COMPARE_EXIT(text, 0);
    QVERIFY2(text.stdoutText().contains(QLatin1String("up, carrier, MTU 1500")),
        qPrintable(text.describe()));
    // The forwarder stays connected and carries on.
    QVERIFY(m_rig->hub().forwarderConnected(id));
}

void TestSegmentTest::aTestIsRefusedWithoutAnAdministratorOrASession()
{
    const qint64 id
        = connectForwarder(QStringLiteral("lab-net"), { QStringLiteral("--interface"), kSegment });
    QVERIFY(id > 0);
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("user"), QStringLiteral("add"), QStringLiteral("maria") }), 0);
    const QJsonObject token
        = hub.cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
                          QStringLiteral("maria"), QStringLiteral("--json") })
              .toObject();
    const QString secret = token.value(QLatin1String("token")).toString();
    QVERIFY(!secret.isEmpty());
    QProcessEnvironment asMaria = childEnvironment(hub.homeDir());
    asMaria.insert(QStringLiteral("CLOOP_HUB_DATA"), hub.dataDir());
    asMaria.insert(QStringLiteral("CLOOP_TOKEN"), secret);
    const CliResult refused = runProgram(binaryPath(QStringLiteral("cloop")),
        { QStringLiteral("forward"), QStringLiteral("test"), QString::number(id) }, asMaria);
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(QLatin1String("administrator")),
        qPrintable(refused.describe()));
    // Nothing reached the forwarder.
    QVERIFY(!m_forwarder->stderrText().contains(QLatin1String("testing")));

    // Without a session there is nothing to test, and the answer says so.
    QVERIFY(m_forwarder->terminate());
    QVERIFY(waitUntil([&] { return !hub.forwarderConnected(id); }));
    const CliResult offline
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("test"), QString::number(id) });
    CLOOP_COMPARE_EXIT(offline, 1);
    QVERIFY2(offline.stderrText().contains(QLatin1String("not connected")),
        qPrintable(offline.describe()));
    // Nor for an id nobody has.
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("forward"), QStringLiteral("test"), QStringLiteral("999") }), 1);
}

void TestSegmentTest::aMissingInterfaceIsReportedNotHidden()
{
    const qint64 id = connectForwarder(
        QStringLiteral("elsewhere"), { QStringLiteral("--interface"), QStringLiteral("cl-none") });
    QVERIFY(id > 0);
    const CliResult tested = m_rig->hub().cli(
        { QStringLiteral("forward"), QStringLiteral("test"), QString::number(id) });
    CLOOP_COMPARE_EXIT(tested, 1);
    QVERIFY2(tested.stdoutText().contains(QLatin1String("problem:"))
            && tested.stdoutText().contains(QLatin1String("cl-none")),
        qPrintable(tested.describe()));
    QVERIFY(m_rig->hub().forwarderConnected(id));
}

void TestSegmentTest::aUsbForwarderWithoutItsDeviceExportsNothing()
{
    const qint64 id = connectForwarder(
        QStringLiteral("bench-key"), { QStringLiteral("--usb"), QStringLiteral("1050:0407") });
    QVERIFY(id > 0);
    const CliResult tested = m_rig->hub().cli(
        { QStringLiteral("forward"), QStringLiteral("test"), QString::number(id) });
    // This machine has no such device: the forwarder's USB/IP device list,
    // read through the hub, is empty, and the test says so.
    CLOOP_COMPARE_EXIT(tested, 1);
    QVERIFY2(tested.stdoutText().contains(
                 QLatin1String("exports no device: its USB device is unplugged")),
        qPrintable(tested.describe()));
    QVERIFY(m_rig->hub().forwarderConnected(id));
}

QTEST_GUILESS_MAIN(TestSegmentTest)
#include "tst_segmenttest.moc"
