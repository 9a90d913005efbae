// End to end, as root, in network namespaces this test makes: two hub
// members on one real PostgreSQL server (which the test starts), a
// forwarder holding the lab's segment connected to member A, an executor
// agent connected to member B. A run dispatched by B gets the segment
// through A (a DHCP lease, pings both ways) and, with the kernel
// stand-ins, a USB device A holds; a revocation or an unbind through either
// member detaches at once; when A is killed, the forwarder moves to B and
// the running sandbox gets its segment back. Skipped, saying why, without
// root, podman, dnsmasq or PostgreSQL.

#include "support/eventclient.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"
#include "support/labnetwork.h"
#include "support/packetfilter.h"
#include "support/postgresserver.h"
#include "support/processutil.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <csignal>
#include <memory>

using namespace cloop::testing;
using namespace cloop::testsupport::usb;
using namespace Qt::StringLiterals;

namespace {

const QString kSegment = u"cc-seg"_s;
const QString kLabEnd = u"cc-lab"_s;
const QString kProject = u"/srv/projects/lab"_s;
const QString kUsbProject = u"/srv/projects/hsm"_s;

// Each time fwd0 appears: a DHCP lease ("leased-N=ADDRESS"), then
// "detached-N" once it goes; three times at most.
QString leaseEachTime()
{
    return u"printf '#!/bin/sh\\n[ \"$1\" = bound ] && ip addr add $ip/$mask dev "
           "$interface\\nexit 0\\n' > /tmp/lease; chmod +x /tmp/lease; n=0; "
           "while [ $n -lt 3 ]; do "
           "i=0; while [ ! -e /sys/class/net/fwd0 ] && [ $i -lt 900 ]; do sleep 0.1; "
           "i=$((i+1)); done; [ -e /sys/class/net/fwd0 ] || { echo gave-up; exit 4; }; "
           "if udhcpc -i fwd0 -n -q -t 10 -T 1 -s /tmp/lease >/dev/null 2>&1; then "
           "echo leased-$n=$(ip -4 -o addr show fwd0 | awk '{print $4}'); "
           "else echo no-lease-$n; fi; "
           "while [ -e /sys/class/net/fwd0 ]; do sleep 0.05; done; echo detached-$n; "
           "n=$((n+1)); done"_s;
}

const QString kShowTheDevice = u"for n in /dev/bus/usb/*/*; do [ -c \"$n\" ] && echo node=$n; "
                               "done; echo ready; sleep 120"_s;

} // namespace

class TestClusterForward final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aRunOnBGetsTheSegmentOfAForwarderAHolds();
    void anAgentThatCannotReachTheHolderGetsTheSegmentThroughItsMember();
    void aRunOnBGetsTheUsbDeviceOfAForwarderAHolds();
    void aRevocationThroughBCutsAAndDetachesOnB();
    void anUnbindThroughADetachesOnB();
    void whenAIsKilledTheForwarderMovesAndTheRunGetsItsSegmentBack();

private:
    QString passwordFile();
    qint64 queue(HubProcess &hub, const QString &project, const QString &script);
    QString logOf(qint64 id);
    bool waitForLog(qint64 id, const QString &needle, int timeoutMs = kLongWaitMs);
    QString leaseOf(qint64 id, int n);
    // A run through B that took a lease on the segment; 0 when it did not.
    qint64 leasedRun();
    // Whether `stream` tells, within 10 s, that the run's device was detached.
    bool detachedOn(EventClient &stream, qint64 runId);
    QString memberName(const HubProcess &hub) const;
    int auditRows();
    void printDiagnostics();

    PostgresServer m_server;
    QTemporaryDir m_dir;
    std::unique_ptr<LabNetwork> m_lab;
    std::unique_ptr<QProcess> m_dhcp;
    std::unique_ptr<HubProcess> m_a;
    std::unique_ptr<HubProcess> m_b;
    std::unique_ptr<QTemporaryDir> m_forwarderHome;
    std::unique_ptr<QTemporaryDir> m_usbMachine;
    std::unique_ptr<QTemporaryDir> m_usbHome;
    std::unique_ptr<QTemporaryDir> m_agentMachine;
    std::unique_ptr<QTemporaryDir> m_agentHome;
    std::unique_ptr<QTemporaryDir> m_usbAgentHome;
    std::unique_ptr<ForwarderProcess> m_forwarder;
    std::unique_ptr<ForwarderProcess> m_usbForwarder;
    std::unique_ptr<ForwarderProcess> m_agent;
    std::unique_ptr<ForwarderProcess> m_usbAgent;
    qint64 m_forwarderId = 0;
    qint64 m_usbForwarderId = 0;
    qint64 m_bindingId = 0;
    QStringList m_databaseOptions; // --database and its password file
};

void TestClusterForward::initTestCase()
{
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        QSKIP(qPrintable(why));
    if (QStandardPaths::findExecutable(u"dnsmasq"_s, { u"/usr/sbin"_s, u"/sbin"_s }).isEmpty())
        QSKIP("dnsmasq is not installed (scripts/install-deps installs dnsmasq-base)");
    if (!m_server.start()) {
        const QString why = u"no PostgreSQL server for this test: %1"_s.arg(m_server.lastError());
        if (PostgresServer::required())
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

QString TestClusterForward::passwordFile()
{
    const QString path = m_dir.filePath(u"password"_s);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(m_server.password().toUtf8() + '\n') <= 0)
        return {};
    file.close();
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return path;
}

void TestClusterForward::init()
{
    m_lab = std::make_unique<LabNetwork>(kSegment, kLabEnd, u"192.0.2.1/24"_s);
    QVERIFY2(m_lab->create(), qPrintable(m_lab->lastError()));
    m_dhcp = std::make_unique<QProcess>();
    m_dhcp->setProcessChannelMode(QProcess::MergedChannels);
    const QStringList dhcp = m_lab->labCommand({ u"dnsmasq"_s, u"--no-daemon"_s, u"--port=0"_s,
        u"--interface="_s + kLabEnd, u"--bind-interfaces"_s,
        u"--dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,1h"_s, u"--dhcp-authoritative"_s,
        u"--leasefile-ro"_s, u"--no-resolv"_s, u"--no-hosts"_s, u"--pid-file="_s });
    m_dhcp->start(dhcp.first(), dhcp.mid(1));
    QVERIFY(m_dhcp->waitForStarted());

    // Two members on one database.
    const QString database = m_server.createDatabase();
    QVERIFY2(!database.isEmpty(), qPrintable(m_server.lastError()));
    m_databaseOptions = { u"--database"_s,
        u"host=%1 dbname=%2 user=%3"_s.arg(m_server.socketDirectory(), database, m_server.user()),
        u"--database-password-file"_s, passwordFile() };
    m_a = std::make_unique<HubProcess>();
    m_b = std::make_unique<HubProcess>();
    const QStringList shared = m_databaseOptions + QStringList { u"--member-lease"_s, u"3s"_s };
    m_a->setServeArguments(shared);
    m_b->setServeArguments(shared);
    QVERIFY2(m_a->start(), qPrintable(m_a->transcript()));
    QVERIFY2(m_b->start(), qPrintable(m_b->transcript()));
    for (const QString &project : { kProject, kUsbProject })
        CLOOP_COMPARE_EXIT(m_a->cli({ u"project"_s, u"add"_s, project }), 0);

    // The segment's forwarder, enrolled through A: it dials A first.
    const Enrollment segment = m_a->enroll(u"lab"_s, { u"--interface"_s, kSegment });
    QVERIFY2(segment.ok, qPrintable(segment.error));
    m_forwarderId = segment.id;
    m_forwarderHome = std::make_unique<QTemporaryDir>();
    m_forwarder = std::make_unique<ForwarderProcess>(
        QStringList { u"--bundle"_s, segment.bundle }, m_forwarderHome->path());
    QVERIFY(m_forwarder->start());

    // A USB forwarder on the stand-in's fixture machine, also A's.
    m_usbMachine = std::make_unique<QTemporaryDir>();
    FixtureDevice hsm;
    hsm.busId = u"1-1"_s;
    hsm.vendorId = 0x1d50;
    hsm.productId = 0x6089;
    hsm.serial = u"HSM0001"_s;
    QVERIFY(UsbFixture::makeForwarderMachine(m_usbMachine->path(), { hsm }));
    const Enrollment usb = m_a->enroll(u"hsm"_s, { u"--usb"_s, u"1d50:6089:HSM0001"_s });
    QVERIFY2(usb.ok, qPrintable(usb.error));
    m_usbForwarderId = usb.id;
    m_usbHome = std::make_unique<QTemporaryDir>();
    m_usbForwarder = std::make_unique<ForwarderProcess>(QStringList { u"--bundle"_s, usb.bundle },
        m_usbHome->path(), ForwarderProcess::Program::ForwarderUsbStandIn);
    m_usbForwarder->setEnvironmentVariable(u"CLOOP_USB_STANDIN"_s, u"forwarder"_s);
    m_usbForwarder->setEnvironmentVariable(u"CLOOP_SYSFS_ROOT"_s, m_usbMachine->path());
    QVERIFY(m_usbForwarder->start());

    // Two agents, both enrolled through B: one for the segment, and one
    // with the USB stand-in for vhci_hcd (its /dev is the fixture's, so it
    // takes no segment).
    const auto agentOf = [this](const QString &name, ForwarderProcess::Program program,
                             const QTemporaryDir &home) {
        const QJsonObject enrolled
            = m_b->cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, name, u"--json"_s })
                  .toObject();
        return std::make_unique<ForwarderProcess>(
            QStringList { u"--bundle"_s, enrolled.value("bundle"_L1).toString(),
                u"--max-concurrent"_s, u"3"_s },
            home.path(), program);
    };
    m_agentHome = std::make_unique<QTemporaryDir>();
    m_agent = agentOf(u"bench"_s, ForwarderProcess::Program::Agent, *m_agentHome);
    QVERIFY(m_agent->start());
    m_agentMachine = std::make_unique<QTemporaryDir>();
    QVERIFY(UsbFixture::makeAgentMachine(m_agentMachine->path()));
    m_usbAgentHome = std::make_unique<QTemporaryDir>();
    m_usbAgent
        = agentOf(u"usb-bench"_s, ForwarderProcess::Program::AgentUsbStandIn, *m_usbAgentHome);
    m_usbAgent->setEnvironmentVariable(u"CLOOP_USB_STANDIN"_s, u"agent"_s);
    m_usbAgent->setEnvironmentVariable(u"CLOOP_SYSFS_ROOT"_s, m_agentMachine->path());
    m_usbAgent->setEnvironmentVariable(u"CLOOP_DEV_ROOT"_s, m_agentMachine->path());
    QVERIFY(m_usbAgent->start());
    for (ForwarderProcess *agent : { m_agent.get(), m_usbAgent.get() })
        QVERIFY2(agent->waitForStderr(u"connected to the hub as executor"_s),
            qPrintable(agent->describe()));

    QVERIFY2(waitUntil([&] {
        return m_a->forwarderConnected(m_forwarderId) && m_a->forwarderConnected(m_usbForwarderId);
    }),
        qPrintable(m_forwarder->describe() + m_usbForwarder->describe()));
    m_bindingId = m_a->bind(m_forwarderId, kProject);
    QVERIFY2(m_bindingId > 0, qPrintable(m_a->transcript()));
    QVERIFY(m_a->bind(m_usbForwarderId, kUsbProject) > 0);
}

void TestClusterForward::printDiagnostics()
{
    for (const auto *hub : { m_a.get(), m_b.get() })
        if (hub)
            qInfo().noquote() << "--- member:\n" << hub->log() << hub->transcript();
    for (const auto *daemon :
        { m_forwarder.get(), m_usbForwarder.get(), m_agent.get(), m_usbAgent.get() })
        if (daemon)
            qInfo().noquote() << "---" << daemon->describe();
    if (m_dhcp)
        qInfo().noquote() << "dnsmasq:" << m_dhcp->readAll();
}

void TestClusterForward::cleanup()
{
    // A race Qt noticed is a failure even when the test's checks passed.
    QStringList races;
    for (const HubProcess *hub : { m_a.get(), m_b.get() }) {
        if (hub)
            races += crossThreadComplaints(hub->log());
    }
    for (const ForwarderProcess *daemon :
        { m_forwarder.get(), m_usbForwarder.get(), m_agent.get(), m_usbAgent.get() }) {
        if (daemon)
            races += crossThreadComplaints(daemon->stderrText());
    }
    if (QTest::currentTestFailed())
        printDiagnostics();
    m_agent.reset();
    m_usbAgent.reset();
    m_forwarder.reset();
    m_usbForwarder.reset();
    m_a.reset();
    m_b.reset();
    if (m_dhcp && m_dhcp->state() != QProcess::NotRunning) {
        signalProcess(*m_dhcp, SIGTERM);
        m_dhcp->waitForFinished(5000);
    }
    m_dhcp.reset();
    m_lab.reset();
    m_agentHome.reset();
    m_usbAgentHome.reset();
    m_agentMachine.reset();
    m_usbHome.reset();
    m_usbMachine.reset();
    m_forwarderHome.reset();
    QVERIFY2(races.isEmpty(), qPrintable(races.join(u'\n')));
}

qint64 TestClusterForward::queue(HubProcess &hub, const QString &project, const QString &script)
{
    const CliResult queued = hub.cli(
        { u"run"_s, u"--project"_s, project, u"--no-wait"_s, u"--"_s, u"sh"_s, u"-c"_s, script });
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

QString TestClusterForward::logOf(qint64 id)
{
    return m_b->cli({ u"run"_s, u"logs"_s, QString::number(id) }).stdoutText();
}

bool TestClusterForward::waitForLog(qint64 id, const QString &needle, int timeoutMs)
{
    return waitUntil([&] { return logOf(id).contains(needle); }, timeoutMs);
}

QString TestClusterForward::leaseOf(qint64 id, int n)
{
    const QRegularExpressionMatch leased
        = QRegularExpression(u"leased-%1=(192\\.0\\.2\\.\\d+)/24"_s.arg(n)).match(logOf(id));
    return leased.hasMatch() ? leased.captured(1) : QString();
}

qint64 TestClusterForward::leasedRun()
{
    const qint64 id = queue(*m_b, kProject, leaseEachTime());
    if (id <= 0 || !waitUntil([&] { return !leaseOf(id, 0).isEmpty(); }, 60'000)) {
        qWarning().noquote() << logOf(id) << m_agent->stderrText();
        return 0;
    }
    return id;
}

bool TestClusterForward::detachedOn(EventClient &stream, qint64 runId)
{
    return stream.waitForEvent(
        u"device.detached"_s,
        [runId](const QJsonObject &data) { return data.value("run_id"_L1).toInteger() == runId; },
        10'000);
}

QString TestClusterForward::memberName(const HubProcess &hub) const
{
    return QUrl(hub.localAccess().value("url"_L1).toString()).authority();
}

int TestClusterForward::auditRows()
{
    return int(m_b->cliItems({ u"audit"_s, u"--json"_s }).size());
}

void TestClusterForward::aRunOnBGetsTheSegmentOfAForwarderAHolds()
{
    // B lists the forwarder as connected via A,
    QCOMPARE(m_b->forwarder(m_forwarderId).value("hub_member"_L1).toString(), memberName(*m_a));
    // and B's Test reaches it through A.
    const QJsonObject tested
        = m_b->cliJson({ u"forward"_s, u"test"_s, QString::number(m_forwarderId), u"--json"_s })
              .toObject();
    QVERIFY2(tested.value("report"_L1).toObject().value("kind"_L1).toString() == u"l2"_s,
        qPrintable(m_b->transcript()));
    // A run queued through B goes to B's agent and gets the segment through A:
    const qint64 id = leasedRun();
    QVERIFY(id > 0);
    // the sandbox took a lease from the lab's DHCP server, and the lab
    // reaches it back through forwarder, A, B and the agent.
    const QString address = leaseOf(id, 0);
    const CliResult ping
        = m_lab->inLab({ u"ping"_s, u"-c"_s, u"3"_s, u"-W"_s, u"2"_s, u"-i"_s, u"0.2"_s, address });
    CLOOP_COMPARE_EXIT(ping, 0);
    qInfo().noquote() << "lab -> sandbox through two members:"
                      << ping.stdoutText().section(u'\n', -2, -2);
    QVERIFY2(m_b->log().contains(u"linked to hub member"_s), qPrintable(m_b->log()));
    // The agent came to A for the segment's frames itself: one hub on
    // their path, not two.
    QVERIFY2(m_b->log().contains(u"(a direct leg to "_s), qPrintable(m_b->log()));
    QVERIFY2(m_a->log().contains(u"forwarder %1 streams straight to executor"_s.arg(m_forwarderId)),
        qPrintable(m_a->log()));
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

void TestClusterForward::anAgentThatCannotReachTheHolderGetsTheSegmentThroughItsMember()
{
    // Given that new connections to A's daemon port are reset (their first
    // SYN only: the forwarder's session to A, already up, goes on),
    const PacketFilter reset = PacketFilter::resetNewConnections(m_a->port());
    QVERIFY2(reset.error().isEmpty(), qPrintable(reset.error()));

    // when a run queued through B needs the segment A holds,
    const qint64 id = leasedRun();

    // then the agent's direct leg fails, B carries the frames through A as
    // before, and the run gets its lease and is reached.
    QVERIFY(id > 0);
    QVERIFY2(m_agent->stderrText().contains(u"so its hub carries the stream"_s),
        qPrintable(m_agent->describe()));
    QVERIFY2(m_b->log().contains(u"could not reach the member holding forwarder"_s),
        qPrintable(m_b->log()));
    const CliResult ping = m_lab->inLab(
        { u"ping"_s, u"-c"_s, u"3"_s, u"-W"_s, u"2"_s, u"-i"_s, u"0.2"_s, leaseOf(id, 0) });
    CLOOP_COMPARE_EXIT(ping, 0);
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

void TestClusterForward::aRunOnBGetsTheUsbDeviceOfAForwarderAHolds()
{
    const qint64 id = queue(*m_b, kUsbProject, kShowTheDevice);
    QVERIFY(id > 0);
    QVERIFY2(waitForLog(id, u"ready"_s, 60'000), qPrintable(logOf(id) + m_usbAgent->stderrText()));
    const QRegularExpressionMatch node
        = QRegularExpression(u"node=(/dev/bus/usb/\\d{3}/\\d{3})"_s).match(logOf(id));
    QVERIFY2(node.hasMatch(), qPrintable(logOf(id)));
    // The device descriptor, read by the agent machine's USB host from the
    // simulated device on A's forwarder, through B and A.
    StandInControl host(m_agentMachine->path());
    QElapsedTimer took;
    took.start();
    auto descriptor = host.call({ { u"op"_s, u"control"_s }, { u"node"_s, node.captured(1) },
        { u"setup"_s, u"8006000100001200"_s } });
    QVERIFY2(descriptor, qPrintable(descriptor ? QString() : descriptor.error().message));
    const QByteArray device
        = QByteArray::fromBase64(descriptor->value("data"_L1).toString().toLatin1());
    QCOMPARE(device.size(), 18);
    QCOMPARE(quint8(device[8]) | quint8(device[9]) << 8, 0x1d50);
    QCOMPARE(quint8(device[10]) | quint8(device[11]) << 8, 0x6089);
    qInfo().noquote() << u"a control transfer through two members took %1 ms"_s.arg(took.elapsed());
    // The USB/IP stream went straight from the agent to A.
    QVERIFY2(
        m_a->log().contains(u"forwarder %1 streams straight to executor"_s.arg(m_usbForwarderId)),
        qPrintable(m_a->log()));
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

void TestClusterForward::aRevocationThroughBCutsAAndDetachesOnB()
{
    const qint64 id = leasedRun();
    QVERIFY(id > 0);
    EventClient onB(*m_b);
    QVERIFY(onB.subscribe(m_b->adminToken()));
    QElapsedTimer took;
    took.start();
    CLOOP_COMPARE_EXIT(m_b->cli({ u"forward"_s, u"revoke"_s, QString::number(m_forwarderId),
                           u"--reason"_s, u"rewired"_s }),
        0);
    // B takes the device out of its run,
    QVERIFY2(detachedOn(onB, id), qPrintable(m_b->log()));
    const qint64 detached = took.elapsed();
    // and A cuts the forwarder's session for good.
    QVERIFY(m_forwarder->waitForExit());
    const qint64 cut = took.elapsed();
    QCOMPARE(m_forwarder->exitCode(), 3);
    qInfo().noquote() << u"revoked through B: detached on B after %1 ms, session on A cut after "
                         "%2 ms"_s.arg(detached)
                             .arg(cut);
    QVERIFY2(waitForLog(id, u"detached-0"_s), qPrintable(logOf(id)));
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

void TestClusterForward::anUnbindThroughADetachesOnB()
{
    const qint64 id = leasedRun();
    QVERIFY(id > 0);
    EventClient onB(*m_b);
    QVERIFY(onB.subscribe(m_b->adminToken()));
    QElapsedTimer took;
    took.start();
    CLOOP_COMPARE_EXIT(m_a->cli({ u"forward"_s, u"unbind"_s, QString::number(m_bindingId),
                           u"--reason"_s, u"lab time over"_s }),
        0);
    QVERIFY2(detachedOn(onB, id), qPrintable(m_b->log()));
    qInfo().noquote() << u"unbound through A: detached on B after %1 ms"_s.arg(took.elapsed());
    QVERIFY2(waitForLog(id, u"detached-0"_s), qPrintable(logOf(id)));
    // The forwarder itself stays connected: only the binding ended.
    QVERIFY(m_forwarder->isRunning());
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

void TestClusterForward::whenAIsKilledTheForwarderMovesAndTheRunGetsItsSegmentBack()
{
    const qint64 id = leasedRun();
    QVERIFY(id > 0);
    const int auditBefore = auditRows();
    QVERIFY(auditBefore > 0);
    // (the forwarder knows B, as every daemon hears of every member)
    QVERIFY2(waitUntil([&] {
        const QString said = m_forwarder->stderrText();
        return said.contains(u"the hub is now dialled at"_s) && said.contains(memberName(*m_b));
    }),
        qPrintable(m_forwarder->describe()));
    // When member A dies without a word,
    QElapsedTimer took;
    took.start();
    m_a->kill();
    // the segment's stream goes with the link through A, while the sandbox
    // keeps its interface,
    QVERIFY2(
        m_agent->waitForStderr(u"keeps fwd-lab in its sandbox"_s), qPrintable(m_agent->describe()));
    // the forwarder (whose bundle named both members) connects to B,
    QVERIFY2(waitUntil([&] {
        return m_b->forwarder(m_forwarderId).value("hub_member"_L1).toString() == memberName(*m_b);
    }),
        qPrintable(m_forwarder->describe()));
    // and B joins a new stream to the interface the sandbox kept, with no
    // one's help: the lease it had still answers the lab.
    QVERIFY2(m_agent->waitForStderr(u"has fwd-lab back on the same interface"_s, 60'000),
        qPrintable(logOf(id) + m_agent->stderrText() + m_b->log()));
    qInfo().noquote() << u"A killed: the run had its segment back through B after %1 ms"_s.arg(
        took.elapsed());
    CLOOP_COMPARE_EXIT(
        m_lab->inLab({ u"ping"_s, u"-c"_s, u"2"_s, u"-W"_s, u"2"_s, leaseOf(id, 0) }), 0);
    QVERIFY2(!logOf(id).contains(u"detached-0"_s), qPrintable(logOf(id)));
    QCOMPARE(m_b->cliJson({ u"run"_s, u"show"_s, QString::number(id), u"--json"_s })
                 .toObject()
                 .value("state"_L1)
                 .toString(),
        u"running"_s);
    // Nothing was lost from the audit log,
    QVERIFY(auditRows() >= auditBefore);
    // and A, started again, rejoins as the same member's next start.
    QVERIFY2(m_a->start(), qPrintable(m_a->transcript()));
    const QJsonArray members = m_b->cliJson(QStringList { u"hub"_s, u"members"_s, u"--json"_s,
                                                u"--data"_s, m_b->dataDir() }
                                      + m_databaseOptions)
                                   .toObject()
                                   .value("items"_L1)
                                   .toArray();
    bool rejoined = false;
    for (const QJsonValue &member : members)
        rejoined |= member.toObject().value("name"_L1).toString() == memberName(*m_a)
            && member.toObject().value("state"_L1).toString() == u"alive"_s
            && member.toObject().value("generation"_L1).toInteger() == 2;
    QVERIFY2(rejoined, QJsonDocument(members).toJson().constData());
    CLOOP_COMPARE_EXIT(m_b->cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);
}

QTEST_GUILESS_MAIN(TestClusterForward)
#include "tst_clusterforward.moc"
