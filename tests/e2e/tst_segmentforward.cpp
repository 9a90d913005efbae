// End to end, as root, in network namespaces this test makes: a run of a
// bound project gets the lab's segment in its sandbox. A real hub, a real
// cloop-forward on one end of a veth pair, a real cloop-agent with podman
// sandboxes, and a lab namespace on the other end with a DHCP server
// (dnsmasq). Skipped, saying why, without root, podman or dnsmasq.

#include "daemon-agent/workroot/workroot.h"
#include "support/labnetwork.h"
#include "support/packetfilter.h"
#include "support/testrig.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <optional>

using namespace cloop::testing;

namespace {
// Python for a raw Ethernet socket on an interface: `send` puts one frame
// on it; `capture` waits (5 s at most) for a frame whose payload holds a
// marker and prints its VLAN tag as the kernel reports it (auxdata).
const char *const kSendFrame = R"(import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(bytes.fromhex(sys.argv[2]))
)";
const char *const kCaptureFrame = R"(import select, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.setsockopt(263, 8, 1)
print('listening', flush=True)
end = time.time() + 5
while time.time() < end:
    if not select.select([s], [], [], 0.2)[0]:
        continue
    data, ancillary, flags, address = s.recvmsg(65535, socket.CMSG_SPACE(20))
    if sys.argv[2].encode() not in data:
        continue
    for level, kind, aux in ancillary:
        if level == 263 and kind == 8:
            status, length, snap, mac, net, tci, tpid = struct.unpack('IIIHHHH', aux[:20])
            print('vlan' if status & 0x10 else 'untagged', hex(tci), 'ethertype', data[12:14].hex(), flush=True)
    sys.exit(0)
print('nothing', flush=True)
sys.exit(1)
)";

const QString kSegment = QStringLiteral("cl-seg");
const QString kLabEnd = QStringLiteral("cl-lab");
const QString kProject = QStringLiteral("/srv/projects/lab");
const QString kOtherProject = QStringLiteral("/srv/projects/other");

// What a workload does to use the segment: wait for the interface (it
// appears a moment after the sandbox starts), take a DHCP lease, say what it
// got, ping the lab. The lease script sets the address busybox's udhcpc
// hands over.
// Says "attached" once fwd0 is there and "detached" once it is gone again.
QString watchTheSegment()
{
    return QStringLiteral("i=0; while [ ! -e /sys/class/net/fwd0 ] && [ $i -lt 100 ]; do sleep "
                          "0.1; i=$((i+1)); done; "
                          "echo attached; while [ -e /sys/class/net/fwd0 ]; do sleep 0.05; done; "
                          "echo detached; sleep 30");
}

// Says each time fwd0 appears and goes, for as long as the run lives.
QString followTheSegment()
{
    return QStringLiteral("s=down; while true; do if [ -e /sys/class/net/fwd0 ]; then "
                          "[ $s = up ] || { echo attached; s=up; }; else "
                          "[ $s = up ] && { echo detached; s=down; }; fi; sleep 0.05; done");
}

QString leaseAndPing(const QString &after)
{
    return QStringLiteral("i=0; while [ ! -e /sys/class/net/fwd0 ] && [ $i -lt 100 ]; do sleep "
                          "0.1; i=$((i+1)); done; "
                          "echo devices=$CLOOP_FORWARDED_DEVICES; "
                          "printf '#!/bin/sh\\n[ \"$1\" = bound ] && ip addr add $ip/$mask dev "
                          "$interface\\nexit 0\\n' > /tmp/lease; "
                          "chmod +x /tmp/lease; "
                          "udhcpc -i fwd0 -n -q -t 10 -T 1 -s /tmp/lease >/dev/null 2>&1 || { echo "
                          "no-lease; exit 5; }; "
                          "echo leased=$(ip -4 -o addr show fwd0 | awk '{print $4}'); "
                          "ping -c 2 -W 2 192.0.2.1 >/dev/null && echo ping-lab-ok; ")
        + after;
}
} // namespace

class TestSegmentForward final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aBoundRunLeasesAnAddressAndPingsBothWays();
    void aRunOfAnUnboundProjectSeesNoForwardedInterface();
    void runsThatCannotGetTheDeviceAreRefusedSayingWhy();
    void vlanTagsAndOffloadedChecksumsCrossTheChain();
    void bulkTcpWithSegmentationOffloadArrivesWhole();
    void jumboFramesCrossAtTheSegmentsMtu();
    void theHubsOwnExecutorAttachesTheSegmentToo();
    void aRestartedAgentCleansUpOnlyWhatItRecorded();
    void unbindingDetachesAtOnce();
    void anExpiredBindingDetachesWithinASecond();
    void revokingTheForwarderDetachesAtOnce();
    void aForwarderThatGoesAwayPausesTheSegmentAndRefusesNewRuns();
    void aRestartedForwarderResumesTheSegmentOnTheSameInterface();
    void aNewerConnectionTakingOverResumesTheSegment();
    void anAgentThatLosesItsTunnelKeepsTheSegmentAndResumesIt();
    void aForwarderLinkThatGoesSilentIsNoticedWithinTenSeconds();
    void aForwarderLegThatGoesSilentIsOpenedAgain();
    void anAgentLegThatGoesSilentIsOpenedAgain();
    void anAgentLinkThatGoesSilentIsNoticedWithinTenSeconds();
    void aHubKilledMidStreamResumesTheSegmentWhenItIsBack();
    void unbindingWhileTheForwarderIsAwayRemovesTheKeptInterface();
    void aLossyLinkAndATenSecondOutageAreSurvived();

private:
    // The host pid of the run's sandbox, for looking into its namespace.
    qint64 sandboxPid(qint64 runId);
    // A command run inside the sandbox's network namespace (host tools).
    CliResult inSandbox(qint64 pid, const QStringList &command, int timeoutMs = kLongWaitMs);
    qint64 queue(const QString &project, const QString &script, const QStringList &extra = {});
    // A run of the bound project whose workload said "attached": its id, or
    // 0 (with the log and the agent's words) when it never did.
    qint64 queueAttached(const QString &script);
    bool cancel(qint64 id);
    QJsonObject run(qint64 id);
    QString logOf(qint64 id);
    bool waitForLog(qint64 id, const QString &needle, int timeoutMs = kLongWaitMs);
    // The local port of process `pid`'s connection to the hub, or 0.
    quint16 localPortTowardsTheHub(qint64 pid) const;
    // A leg of `daemon`'s goes silent under a running run (the tests of
    // that name, one for each end).
    void legThatGoesSilentIsOpenedAgain(ForwarderProcess *daemon, const QString &address);
    // How long after now the agent says it keeps the run's segment for a
    // stream that ended (up to 15 s), or -1.
    qint64 msUntilTheAgentKeepsTheSegment();
    // The local ports of all its connections to the hub: its tunnel, and
    // a leg for each device stream it carries.
    QList<quint16> localPortsTowardsTheHub(qint64 pid) const;
    // The kernel's index of fwd0 in the sandbox, 0 when it has none: the
    // same index after a stream resumed is the same interface.
    int fwd0Index(qint64 sandboxPid);
    // The run's sandbox and the index of its fwd0 ({0, 0} when missing).
    std::pair<qint64, int> sandboxAndSegment(qint64 runId);
    // The agent joined a new stream to the TAP it kept: the same fwd0.
    bool resumedOnTheSameInterface(qint64 sandboxPid, int index, int timeoutMs = kLongWaitMs);
    // Gives fwd0 a fixed address and pings it from the lab: frames cross
    // the whole chain both ways.
    bool labReachesTheSandbox(qint64 sandboxPid, const QString &address);
    // The re-attach entries of the audit log for run `id`.
    int reattachesAudited(qint64 id);

    std::unique_ptr<LabNetwork> m_lab;
    std::unique_ptr<QProcess> m_dhcp;
    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_forwarder = nullptr;
    ForwarderProcess *m_agent = nullptr;
    qint64 m_forwarderId = 0;
    qint64 m_agentId = 0;
    qint64 m_bindingId = 0;
};

void TestSegmentForward::initTestCase()
{
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        QSKIP(qPrintable(why));
    if (QStandardPaths::findExecutable(
            QStringLiteral("dnsmasq"), { QStringLiteral("/usr/sbin"), QStringLiteral("/sbin") })
            .isEmpty())
        QSKIP("dnsmasq is not installed (scripts/install-deps installs dnsmasq-base)");
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

void TestSegmentForward::init()
{
    m_lab = std::make_unique<LabNetwork>(kSegment, kLabEnd, QStringLiteral("192.0.2.1/24"));
    QVERIFY2(m_lab->create(), qPrintable(m_lab->lastError()));
    // The lab's DHCP server; no DNS (port 0), nothing written to disk.
    m_dhcp = std::make_unique<QProcess>();
    m_dhcp->setProcessChannelMode(QProcess::MergedChannels);
    const QStringList dhcp = m_lab->labCommand(
        { QStringLiteral("dnsmasq"), QStringLiteral("--no-daemon"), QStringLiteral("--port=0"),
            QStringLiteral("--interface=") + kLabEnd, QStringLiteral("--bind-interfaces"),
            QStringLiteral("--dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,1h"),
            QStringLiteral("--dhcp-authoritative"), QStringLiteral("--leasefile-ro"),
            QStringLiteral("--no-resolv"), QStringLiteral("--no-hosts"),
            QStringLiteral("--pid-file=") });
    m_dhcp->start(dhcp.first(), dhcp.mid(1));
    QVERIFY(m_dhcp->waitForStarted());

    m_rig = std::make_unique<TestRig>();
    // Traffic in one-second steps, so that the graphs' source is read soon.
    m_rig->hub().setServeArguments({ QStringLiteral("--traffic-step"), QStringLiteral("1s") });
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kOtherProject }), 0);

    const Enrollment forwarder
        = hub.enroll(QStringLiteral("lab"), { QStringLiteral("--interface"), kSegment });
    QVERIFY2(forwarder.ok, qPrintable(forwarder.error));
    m_forwarderId = forwarder.id;
    m_forwarder = &m_rig->addForwarder({ QStringLiteral("--bundle"), forwarder.bundle });
    QVERIFY(m_rig->startAndAwaitConnection(*m_forwarder, forwarder.id));

    const QJsonObject agent = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                              QStringLiteral("--name"), QStringLiteral("bench"),
                                              QStringLiteral("--json") })
                                  .toObject();
    m_agentId
        = agent.value(QLatin1String("executor")).toObject().value(QLatin1String("id")).toInteger();
    m_agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), agent.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--max-concurrent"), QStringLiteral("2") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(m_agent->start());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(m_agent->describe()));

    m_bindingId = hub.bind(m_forwarderId, kProject);
    QVERIFY2(m_bindingId > 0, qPrintable(hub.transcript()));
}

void TestSegmentForward::cleanup()
{
    // A race Qt noticed is a failure even when the test's checks passed.
    const QStringList races = m_rig ? m_rig->crossThreadComplaints() : QStringList();
    if (QTest::currentTestFailed() && m_rig) {
        m_rig->printDiagnostics();
        if (m_dhcp)
            qInfo().noquote() << "dnsmasq:" << m_dhcp->readAll();
    }
    m_forwarder = nullptr;
    m_agent = nullptr;
    m_rig.reset();
    if (m_dhcp && m_dhcp->state() != QProcess::NotRunning) {
        signalProcess(*m_dhcp, SIGTERM);
        m_dhcp->waitForFinished(5000);
    }
    m_dhcp.reset();
    m_lab.reset();
    QVERIFY2(races.isEmpty(), qPrintable(races.join(u'\n')));
}

qint64 TestSegmentForward::queue(
    const QString &project, const QString &script, const QStringList &extra)
{
    const CliResult queued = m_rig->hub().cli(
        QStringList { QStringLiteral("run"), QStringLiteral("--project"), project,
            QStringLiteral("--no-wait") }
        + extra
        + QStringList { QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), script });
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

qint64 TestSegmentForward::queueAttached(const QString &script)
{
    const qint64 id = queue(kProject, script);
    if (id > 0 && waitForLog(id, QStringLiteral("attached")))
        return id;
    qWarning().noquote() << "run" << id << "never had fwd0:" << logOf(id) << m_agent->stderrText();
    return 0;
}

bool TestSegmentForward::cancel(qint64 id)
{
    const CliResult cancelled = m_rig->hub().cli(
        { QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) });
    if (cancelled.exitCode != 0)
        qWarning().noquote() << cancelled.describe();
    return cancelled.exitCode == 0;
}

qint64 TestSegmentForward::sandboxPid(qint64 runId)
{
    const QString workRoot = m_agent->home() + QLatin1String("/.cloop/work");
    const QString container = QStringLiteral("cloop-run-%1-%2")
                                  .arg(cloop::agent::WorkRoot(workRoot).sandboxTag())
                                  .arg(runId);
    const CliResult found = runProgram(QStringLiteral("podman"),
        { QStringLiteral("inspect"), QStringLiteral("--format"), QStringLiteral("{{.State.Pid}}"),
            container },
        QProcessEnvironment::systemEnvironment());
    return found.exitCode == 0 ? found.stdoutText().trimmed().toLongLong() : 0;
}

CliResult TestSegmentForward::inSandbox(qint64 pid, const QStringList &command, int timeoutMs)
{
    return runProgram(QStringLiteral("nsenter"),
        QStringList {
            QStringLiteral("-t"), QString::number(pid), QStringLiteral("-n"), QStringLiteral("--") }
            + command,
        QProcessEnvironment::systemEnvironment(), timeoutMs);
}

QJsonObject TestSegmentForward::run(qint64 id)
{
    return m_rig->hub()
        .cliJson({ QStringLiteral("run"), QStringLiteral("show"), QString::number(id),
            QStringLiteral("--json") })
        .toObject();
}

QString TestSegmentForward::logOf(qint64 id)
{
    return m_rig->hub()
        .cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) })
        .stdoutText();
}

bool TestSegmentForward::waitForLog(qint64 id, const QString &needle, int timeoutMs)
{
    return waitUntil([&] { return logOf(id).contains(needle); }, timeoutMs);
}

void TestSegmentForward::aBoundRunLeasesAnAddressAndPingsBothWays()
{
    const qint64 id = queue(kProject, leaseAndPing(QStringLiteral("echo waiting; sleep 30")));
    QVERIFY(id > 0);
    QVERIFY2(
        waitForLog(id, QStringLiteral("waiting")), qPrintable(logOf(id) + m_agent->stderrText()));
    const QString log = logOf(id);
    QVERIFY2(log.contains(QLatin1String("devices=fwd-lab=l2:fwd0")), qPrintable(log));
    const QRegularExpressionMatch leased
        = QRegularExpression(QStringLiteral("leased=(192\\.0\\.2\\.\\d+)/24")).match(log);
    QVERIFY2(leased.hasMatch(), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("ping-lab-ok")), qPrintable(log));
    // And from the lab to the sandbox, through forwarder, hub and agent.
    const CliResult ping = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"),
        QStringLiteral("2"), QStringLiteral("-W"), QStringLiteral("2"), leased.captured(1) });
    CLOOP_COMPARE_EXIT(ping, 0);
    // The forwarder's traffic: bytes as the hub relayed them, frames as the
    // forwarder counted them (the lease and the pings, both ways), no drops.
    HubProcess &hub = m_rig->hub();
    for (const char *series : { "to_agent_bytes", "to_forwarder_bytes" })
        QTRY_VERIFY_WITH_TIMEOUT(
            hub.trafficTotal(m_forwarderId, QLatin1StringView(series)) > 0, kLongWaitMs);
    for (const char *series : { "to_agent_frames", "to_forwarder_frames" })
        QTRY_VERIFY_WITH_TIMEOUT(
            hub.trafficTotal(m_forwarderId, QLatin1StringView(series)) >= 4, kLongWaitMs);
    QCOMPARE(hub.trafficTotal(m_forwarderId, QLatin1StringView("dropped_to_forwarder")), 0);
    QCOMPARE(hub.trafficOf(m_forwarderId).value(QLatin1String("unit")).toString(),
        QStringLiteral("frames"));
    QVERIFY(cancel(id));
}

void TestSegmentForward::aRunOfAnUnboundProjectSeesNoForwardedInterface()
{
    const CliResult unbound = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kOtherProject, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("sleep 1; ls /sys/class/net; echo devices=[$CLOOP_FORWARDED_DEVICES]") });
    CLOOP_COMPARE_EXIT(unbound, 0);
    QCOMPARE(unbound.stdoutText().split(QLatin1Char('\n'), Qt::SkipEmptyParts),
        QStringList({ QStringLiteral("lo"), QStringLiteral("devices=[]") }));
    // Nothing was opened to the forwarder for it.
    QVERIFY(!m_forwarder->stderrText().contains(QLatin1String("lending")));
}

void TestSegmentForward::runsThatCannotGetTheDeviceAreRefusedSayingWhy()
{
    HubProcess &hub = m_rig->hub();
    // A host process has no sandbox to receive the device.
    const CliResult hostProcess = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--host-process"), QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(hostProcess, 1);
    QVERIFY2(hostProcess.stderrText().contains(QLatin1String("host-process run")),
        qPrintable(hostProcess.describe()));
    QVERIFY2(hostProcess.stderrText().contains(QLatin1String("forwarder")),
        qPrintable(hostProcess.describe()));
    // gVisor cannot receive a host device, whatever the agent says about it.
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("executor"), QStringLiteral("virtual"), QStringLiteral("create"),
            QStringLiteral("gvisor"), QStringLiteral("--agent"), QString::number(m_agentId),
            QStringLiteral("--runtime"), QStringLiteral("runsc") }),
        0);
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("forward"), QStringLiteral("unbind"), QString::number(m_bindingId),
            QStringLiteral("--reason"), QStringLiteral("rebind narrowed") }),
        0);
    const QJsonObject narrowed
        = hub.cliJson({ QStringLiteral("forward"), QStringLiteral("bind"),
                          QString::number(m_forwarderId), QStringLiteral("--project"), kProject,
                          QStringLiteral("--virtual-executor"), QStringLiteral("gvisor"),
                          QStringLiteral("--json") })
              .toObject();
    QVERIFY(narrowed.value(QLatin1String("id")).toInteger() > 0);
    const CliResult gvisor = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--virtual-executor"), QStringLiteral("gvisor"), QStringLiteral("--"),
        QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(gvisor, 1);
    QVERIFY2(gvisor.stderrText().contains(QLatin1String("runsc")), qPrintable(gvisor.describe()));
    // The narrowed binding gives nothing to a run on the agent itself.
    const CliResult plain = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("sleep 1; ls /sys/class/net") });
    CLOOP_COMPARE_EXIT(plain, 0);
    QCOMPARE(plain.stdoutText().trimmed(), QStringLiteral("lo"));
    QVERIFY(!m_forwarder->stderrText().contains(QLatin1String("lending")));
}

void TestSegmentForward::vlanTagsAndOffloadedChecksumsCrossTheChain()
{
    const qint64 id = queue(
        kProject, leaseAndPing(QStringLiteral("echo ready; nc -l -p 5000 >/dev/null & sleep 60")));
    QVERIFY(id > 0);
    QVERIFY2(
        waitForLog(id, QStringLiteral("ready")), qPrintable(logOf(id) + m_agent->stderrText()));
    const QRegularExpressionMatch leased
        = QRegularExpression(QStringLiteral("leased=(192\\.0\\.2\\.\\d+)/24")).match(logOf(id));
    QVERIFY(leased.hasMatch());
    const qint64 pid = sandboxPid(id);
    QVERIFY(pid > 0);
    const auto python = [](const char *script, const QStringList &arguments) {
        return QStringList { QStringLiteral("python3"), QStringLiteral("-c"),
            QString::fromLatin1(script) }
        + arguments;
    };

    // A tagged frame from the lab arrives tagged in the sandbox (priority 3, VID 100)...
    const QString fromLab = QStringLiteral("ffffffffffff020000000002810060"
                                           "6488b5")
        + QString::fromLatin1(QByteArray("from-the-lab").toHex());
    QProcess capture;
    const QStringList inside = QStringList {
        QStringLiteral("-t"), QString::number(pid), QStringLiteral("-n"), QStringLiteral("--")
    } + python(kCaptureFrame, { QStringLiteral("fwd0"), QStringLiteral("from-the-lab") });
    capture.setProcessChannelMode(QProcess::MergedChannels);
    capture.start(QStringLiteral("nsenter"), inside);
    QVERIFY(capture.waitForReadyRead(10'000));
    CLOOP_COMPARE_EXIT(m_lab->inLab(python(kSendFrame, { kLabEnd, fromLab })), 0);
    QVERIFY(capture.state() == QProcess::NotRunning || capture.waitForFinished(10'000));
    const QString seenInside = QString::fromUtf8(capture.readAll());
    QVERIFY2(
        seenInside.contains(QLatin1String("vlan 0x6064 ethertype 88b5")), qPrintable(seenInside));

    // ...and one from the sandbox arrives tagged in the lab.
    const QString fromSandbox = QStringLiteral("ffffffffffff02000000000a8100a0c888b5")
        + QString::fromLatin1(QByteArray("from-the-sandbox").toHex());
    QProcess labCapture;
    const QStringList inLab
        = m_lab->labCommand(python(kCaptureFrame, { kLabEnd, QStringLiteral("from-the-sandbox") }));
    labCapture.setProcessChannelMode(QProcess::MergedChannels);
    labCapture.start(inLab.first(), inLab.mid(1));
    QVERIFY(labCapture.waitForReadyRead(10'000));
    CLOOP_COMPARE_EXIT(
        inSandbox(pid, python(kSendFrame, { QStringLiteral("fwd0"), fromSandbox })), 0);
    QVERIFY(labCapture.state() == QProcess::NotRunning || labCapture.waitForFinished(10'000));
    const QString seenInLab = QString::fromUtf8(labCapture.readAll());
    QVERIFY2(
        seenInLab.contains(QLatin1String("vlan 0xa0c8 ethertype 88b5")), qPrintable(seenInLab));

    // A UDP datagram and a TCP connection whose checksums the lab's kernel
    // left to offload arrive in the sandbox with valid checksums.
    QProcess dump;
    dump.setProcessChannelMode(QProcess::MergedChannels);
    dump.start(QStringLiteral("nsenter"),
        { QStringLiteral("-t"), QString::number(pid), QStringLiteral("-n"), QStringLiteral("--"),
            QStringLiteral("tcpdump"), QStringLiteral("-l"), QStringLiteral("-n"),
            QStringLiteral("-vv"), QStringLiteral("-i"), QStringLiteral("fwd0"),
            QStringLiteral("-c"), QStringLiteral("2"),
            QStringLiteral("udp port 4000 or (tcp port 5000 and tcp[tcpflags] & tcp-syn != 0)") });
    QVERIFY(dump.waitForStarted());
    // tcpdump says so once its capture is open.
    QByteArray dumped;
    QVERIFY(waitUntil([&] {
        dumped += dump.readAll();
        return dumped.contains("listening on");
    }));
    CLOOP_COMPARE_EXIT(
        m_lab->inLab({ QStringLiteral("python3"), QStringLiteral("-c"),
            QStringLiteral(
                "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                "s.sendto(b'checksum' * 50, ('%1', 4000)); "
                "t = socket.create_connection(('%1', 5000), 5); t.sendall(b'x' * 100); t.close()")
                .arg(leased.captured(1)) }),
        0);
    QVERIFY(dump.state() == QProcess::NotRunning || dump.waitForFinished(10'000));
    dumped += dump.readAll();
    QVERIFY2(dumped.contains("udp sum ok"), dumped.constData());
    QVERIFY2(dumped.contains("(correct)"), dumped.constData());
    QVERIFY2(
        !dumped.contains("incorrect") && !dumped.contains("bad udp cksum"), dumped.constData());
    QVERIFY(cancel(id));
}

void TestSegmentForward::bulkTcpWithSegmentationOffloadArrivesWhole()
{
    // The lab counts what arrives on TCP 5001; the sandbox sends 32 MiB.
    // Both kernels hand the TAP and the packet socket frames far larger
    // than the MTU (TSO/GRO); they cross whole with their vnet header.
    QProcess sink;
    sink.setProcessChannelMode(QProcess::MergedChannels);
    const QStringList listen = m_lab->labCommand({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket\ns = socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
                       "socket.SO_REUSEADDR, 1)\n"
                       "s.bind(('192.0.2.1', 5001)); s.listen(1); print('listening', flush=True)\n"
                       "c, _ = s.accept(); n = 0\nwhile True:\n    b = c.recv(1 << 20)\n    if not "
                       "b: break\n    n += len(b)\n"
                       "print('received', n, flush=True)") });
    sink.start(listen.first(), listen.mid(1));
    QVERIFY(sink.waitForReadyRead(10'000));
    const qint64 id = queue(kProject,
        leaseAndPing(QStringLiteral(
            "dd if=/dev/zero bs=1048576 count=32 2>/dev/null | nc 192.0.2.1 5001 && echo sent")));
    QVERIFY(id > 0);
    QVERIFY2(waitForLog(id, QStringLiteral("sent"), 120'000),
        qPrintable(logOf(id) + m_agent->stderrText()));
    QVERIFY(sink.state() == QProcess::NotRunning || sink.waitForFinished(30'000));
    const QString received = QString::fromUtf8(sink.readAll());
    QVERIFY2(
        received.contains(QStringLiteral("received %1").arg(32 * 1048576)), qPrintable(received));
    // The stream ends with the run; the forwarder says how large its frames got.
    QVERIFY(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")));
    const QRegularExpressionMatch largest
        = QRegularExpression(QStringLiteral("largest frames (\\d+) up / (\\d+) down"))
              .match(m_forwarder->stderrText());
    QVERIFY2(largest.hasMatch(), qPrintable(m_forwarder->stderrText()));
    QVERIFY2(largest.captured(2).toInt() > 1514, qPrintable(largest.captured(0)));
}

void TestSegmentForward::jumboFramesCrossAtTheSegmentsMtu()
{
    // The lab runs jumbo frames; the forwarder, restarted, says so.
    const auto ip = [](const QStringList &arguments) {
        return runProgram(
            QStringLiteral("ip"), arguments, QProcessEnvironment::systemEnvironment());
    };
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("link"), QStringLiteral("set"), kSegment,
                           QStringLiteral("mtu"), QStringLiteral("9000") }),
        0);
    CLOOP_COMPARE_EXIT(
        ip({ QStringLiteral("-n"), m_lab->name(), QStringLiteral("link"), QStringLiteral("set"),
            kLabEnd, QStringLiteral("mtu"), QStringLiteral("9000") }),
        0);
    QVERIFY(m_forwarder->terminate());
    QVERIFY(waitUntil([&] { return !m_rig->hub().forwarderConnected(m_forwarderId); }));
    ForwarderProcess &again = m_rig->addForwarder({}, m_forwarder->home());
    QVERIFY(m_rig->startAndAwaitConnection(again, m_forwarderId));
    m_forwarder = &again;
    QVERIFY(waitUntil([&] { return m_rig->hub().log().contains(QLatin1String("MTU 9000")); }));

    const qint64 id = queue(kProject,
        leaseAndPing(QStringLiteral("echo mtu=$(cat /sys/class/net/fwd0/mtu); ping -c 2 -W 2 -s "
                                    "8000 192.0.2.1 >/dev/null && echo jumbo-ok")));
    QVERIFY(id > 0);
    QVERIFY2(waitUntil([&] { return run(id).value(QLatin1String("finished")).toBool(); }),
        qPrintable(logOf(id)));
    const QString log = logOf(id);
    QVERIFY2(log.contains(QLatin1String("mtu=9000")), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("jumbo-ok")), qPrintable(log + m_agent->stderrText()));
    QVERIFY(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")));
    const QRegularExpressionMatch largest
        = QRegularExpression(QStringLiteral("largest frames (\\d+) up / (\\d+) down"))
              .match(m_forwarder->stderrText());
    QVERIFY2(largest.hasMatch(), qPrintable(m_forwarder->stderrText()));
    QVERIFY2(largest.captured(1).toInt() >= 8042 && largest.captured(2).toInt() >= 8042,
        qPrintable(largest.captured(0)));
}

void TestSegmentForward::theHubsOwnExecutorAttachesTheSegmentToo()
{
    HubProcess &hub = m_rig->hub();
    QCOMPARE(hub.stop(), 0);
    hub.setServeArguments({ QStringLiteral("--executor") });
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    QVERIFY(waitUntil([&] {
        const QJsonArray executors = hub.cliItems(
            { QStringLiteral("executor"), QStringLiteral("list"), QStringLiteral("--json") });
        for (const QJsonValue &executor : executors) {
            if (executor.toObject().value(QLatin1String("name")).toString() == QLatin1String("hub")
                && executor.toObject().value(QLatin1String("connected")).toBool())
                return true;
        }
        return false;
    }));
    QVERIFY(waitUntil([&] { return hub.forwarderConnected(m_forwarderId); }));
    const qint64 id = queue(kProject, leaseAndPing(QStringLiteral("echo done")),
        { QStringLiteral("--executor"), QStringLiteral("hub") });
    QVERIFY(id > 0);
    QVERIFY2(waitForLog(id, QStringLiteral("done")), qPrintable(logOf(id) + hub.log()));
    const QString log = logOf(id);
    QVERIFY2(log.contains(QLatin1String("leased=192.0.2.")), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("ping-lab-ok")), qPrintable(log));
    QVERIFY2(hub.log().contains(QLatin1String("sees fwd-lab as fwd0")), qPrintable(hub.log()));
}

void TestSegmentForward::aRestartedAgentCleansUpOnlyWhatItRecorded()
{
    // A TAP someone else made on this machine, named like the agent's.
    const CliResult foreign = runProgram(QStringLiteral("ip"),
        { QStringLiteral("tuntap"), QStringLiteral("add"), QStringLiteral("cltap77"),
            QStringLiteral("mode"), QStringLiteral("tap") },
        QProcessEnvironment::systemEnvironment());
    CLOOP_COMPARE_EXIT(foreign, 0);
    const qint64 id = queue(kProject,
        QStringLiteral("i=0; while [ ! -e /sys/class/net/fwd0 ] && [ $i -lt 100 ]; do "
                       "sleep 0.1; i=$((i+1)); done; echo attached; sleep 60"));
    QVERIFY(id > 0);
    QVERIFY2(
        waitForLog(id, QStringLiteral("attached")), qPrintable(logOf(id) + m_agent->stderrText()));
    const QString workRoot = m_agent->home() + QLatin1String("/.cloop/work");
    QFile ledger(workRoot + QLatin1String("/attachments.json"));
    QVERIFY(ledger.open(QIODevice::ReadOnly));
    QVERIFY2(ledger.readAll().contains("fwd0"), "the attachment was not recorded");
    ledger.close();

    // The agent dies at once; its TAP goes with its descriptor, and the
    // forwarder's end of the stream within a second.
    QElapsedTimer clock;
    clock.start();
    QVERIFY(m_agent->kill());
    QVERIFY2(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")),
        qPrintable(m_forwarder->describe()));
    QVERIFY2(clock.elapsed() < 1000,
        qPrintable(
            QStringLiteral("the forwarder's stream ended after %1 ms").arg(clock.elapsed())));
    ForwarderProcess &again
        = m_rig->addForwarder({}, m_agent->home(), ForwarderProcess::Program::Agent);
    QVERIFY(again.start());
    QVERIFY2(again.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(again.describe()));
    // Its sandbox is removed, the record emptied, and the TAP it never made is still there.
    QVERIFY2(again.stderrText().contains(QLatin1String("left by a previous agent process")),
        qPrintable(again.describe()));
    QVERIFY(ledger.open(QIODevice::ReadOnly));
    QVERIFY2(!ledger.readAll().contains("fwd0"), "the record still lists the attachment");
    const CliResult stillThere = runProgram(QStringLiteral("ip"),
        { QStringLiteral("link"), QStringLiteral("show"), QStringLiteral("cltap77") },
        QProcessEnvironment::systemEnvironment());
    CLOOP_COMPARE_EXIT(stillThere, 0);
    runProgram(QStringLiteral("ip"),
        { QStringLiteral("link"), QStringLiteral("delete"), QStringLiteral("cltap77") },
        QProcessEnvironment::systemEnvironment());
    m_agent = &again;
}

void TestSegmentForward::unbindingDetachesAtOnce()
{
    const qint64 id = queue(kProject,
        leaseAndPing(QStringLiteral("echo attached; while [ -e /sys/class/net/fwd0 ]; do sleep "
                                    "0.05; done; echo detached; sleep 30")));
    QVERIFY(id > 0);
    QVERIFY2(
        waitForLog(id, QStringLiteral("attached")), qPrintable(logOf(id) + m_agent->stderrText()));
    QElapsedTimer clock;
    clock.start();
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("forward"), QStringLiteral("unbind"),
                           QString::number(m_bindingId), QStringLiteral("--reason"),
                           QStringLiteral("the lab is needed") }),
        0);
    // The agent removes the TAP (and with it the sandbox's fwd0) at once.
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-lab")), qPrintable(m_agent->describe()));
    const qint64 detachMs = clock.elapsed();
    QVERIFY2(detachMs < 1000, qPrintable(QStringLiteral("detached after %1 ms").arg(detachMs)));
    QVERIFY2(
        m_agent->stderrText().contains(QLatin1String("unbound")), qPrintable(m_agent->describe()));
    QVERIFY2(waitForLog(id, QStringLiteral("detached")), qPrintable(logOf(id)));
    QVERIFY(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")));
    // The run carries on without it.
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QVERIFY(cancel(id));
}

void TestSegmentForward::anExpiredBindingDetachesWithinASecond()
{
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("forward"), QStringLiteral("unbind"), QString::number(m_bindingId),
            QStringLiteral("--reason"), QStringLiteral("a short one instead") }),
        0);
    const QJsonObject shortBinding
        = hub.cliJson({ QStringLiteral("forward"), QStringLiteral("bind"),
                          QString::number(m_forwarderId), QStringLiteral("--project"), kProject,
                          QStringLiteral("--ttl"), QStringLiteral("6s"), QStringLiteral("--json") })
              .toObject();
    const QDateTime expires = QDateTime::fromString(
        shortBinding.value(QLatin1String("expires_at")).toString(), Qt::ISODateWithMs);
    QVERIFY2(
        expires.isValid(), qPrintable(QString::fromUtf8(QJsonDocument(shortBinding).toJson())));
    const qint64 id = queueAttached(watchTheSegment());
    QVERIFY(id > 0);
    QVERIFY2(QDateTime::currentDateTimeUtc() < expires,
        "the run attached only after the binding expired; give it longer");
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-lab")), qPrintable(m_agent->describe()));
    const qint64 lateMs = expires.msecsTo(QDateTime::currentDateTimeUtc());
    QVERIFY2(
        lateMs < 1000, qPrintable(QStringLiteral("detached %1 ms after the expiry").arg(lateMs)));
    QVERIFY2(
        m_agent->stderrText().contains(QLatin1String("expired")), qPrintable(m_agent->describe()));
    QVERIFY2(waitForLog(id, QStringLiteral("detached")), qPrintable(logOf(id)));
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) }), 0);
}

void TestSegmentForward::revokingTheForwarderDetachesAtOnce()
{
    const qint64 id = queueAttached(watchTheSegment());
    QVERIFY(id > 0);
    QElapsedTimer clock;
    clock.start();
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("forward"), QStringLiteral("revoke"),
                           QString::number(m_forwarderId), QStringLiteral("--reason"),
                           QStringLiteral("the lab was rewired") }),
        0);
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-lab")), qPrintable(m_agent->describe()));
    QVERIFY2(clock.elapsed() < 1000,
        qPrintable(QStringLiteral("detached after %1 ms").arg(clock.elapsed())));
    QVERIFY2(waitForLog(id, QStringLiteral("detached")), qPrintable(logOf(id)));
    // The forwarder stops for good; the hub says why it detached.
    QVERIFY(m_forwarder->waitForExit());
    QCOMPARE(m_forwarder->exitCode(), 3);
    QVERIFY2(m_rig->hub().log().contains(QLatin1String("detached fwd-lab")),
        qPrintable(m_rig->hub().log()));
    QVERIFY(cancel(id));
}

void TestSegmentForward::aForwarderThatGoesAwayPausesTheSegmentAndRefusesNewRuns()
{
    const qint64 id = queueAttached(watchTheSegment());
    QVERIFY(id > 0);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(m_forwarder->kill());
    // A killed forwarder is noticed when its TCP connection drops; the run
    // still holds the segment, so the agent keeps fwd0 for its return.
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox")),
        qPrintable(m_agent->describe()));
    QVERIFY2(clock.elapsed() < 1000,
        qPrintable(QStringLiteral("noticed after %1 ms").arg(clock.elapsed())));
    QVERIFY2(m_rig->hub().log().contains(QLatin1String("detached fwd-lab")),
        qPrintable(m_rig->hub().log()));
    // A new run of the project is refused, naming the forwarder.
    const CliResult refused = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(QStringLiteral("forwarder %1 (lab").arg(m_forwarderId)),
        qPrintable(refused.describe()));
    QVERIFY2(
        refused.stderrText().contains(QLatin1String("no live session anywhere in the hub cluster")),
        qPrintable(refused.describe()));
    // The sandbox never saw fwd0 go.
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QVERIFY(!m_agent->stderrText().contains(QLatin1String("lost fwd-lab")));
    QVERIFY(cancel(id));
}

void TestSegmentForward::aRestartedForwarderResumesTheSegmentOnTheSameInterface()
{
    // Given a run that says each time fwd0 appears and goes,
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const auto [pid, index] = sandboxAndSegment(id);
    QVERIFY(pid > 0 && index > 0);
    // when its forwarder stops as a restart (an upgrade) stops it,
    QVERIFY(m_forwarder->terminate());
    QVERIFY(m_forwarder->waitForExit());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox")),
        qPrintable(m_agent->describe()));
    // (the run itself goes on)
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    // and comes back,
    ForwarderProcess &again = m_rig->addForwarder({}, m_forwarder->home());
    QVERIFY(m_rig->startAndAwaitConnection(again, m_forwarderId));
    m_forwarder = &again;
    // then the stream is joined to the interface the sandbox kept: the
    // same fwd0, which never went, and frames cross the whole chain on it.
    QVERIFY(resumedOnTheSameInterface(pid, index));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 gets fwd-lab back").arg(id)),
        qPrintable(m_rig->hub().log()));
    QVERIFY(labReachesTheSandbox(pid, QStringLiteral("192.0.2.77")));
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QCOMPARE(logOf(id).count(QLatin1String("attached")), 1);
    // The re-attach is audited, once.
    QCOMPARE(reattachesAudited(id), 1);
    QVERIFY(cancel(id));
    QVERIFY2(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")),
        qPrintable(m_forwarder->describe()));
}

void TestSegmentForward::aNewerConnectionTakingOverResumesTheSegment()
{
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const auto [pid, index] = sandboxAndSegment(id);
    QVERIFY(pid > 0 && index > 0);
    // Given a forwarder frozen with its link still open (the hub has not
    // noticed anything yet),
    const qint64 frozen = m_forwarder->processId();
    QVERIFY(frozen > 0 && ::kill(pid_t(frozen), SIGSTOP) == 0);
    ForwarderProcess *old = m_forwarder;
    // when the same forwarder connects again from another process, as one
    // that noticed a dead link before the hub did,
    ForwarderProcess &again = m_rig->addForwarder({}, m_forwarder->home());
    QVERIFY(again.start());
    m_forwarder = &again;
    // then the newer connection takes the session over and the stream is
    // joined to it at once, on the interface the sandbox kept.
    QVERIFY(resumedOnTheSameInterface(pid, index));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("a newer connection of this forwarder "
                                                        "took over")),
        qPrintable(m_rig->hub().log()));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 gets fwd-lab back").arg(id)),
        qPrintable(m_rig->hub().log()));
    QVERIFY(old->kill());
    QVERIFY(labReachesTheSandbox(pid, QStringLiteral("192.0.2.78")));
    QCOMPARE(reattachesAudited(id), 1);
    QVERIFY(cancel(id));
}

void TestSegmentForward::anAgentThatLosesItsTunnelKeepsTheSegmentAndResumesIt()
{
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const auto [pid, index] = sandboxAndSegment(id);
    QVERIFY(pid > 0 && index > 0);
    // The agent's own TCP connection to the hub, told apart from the
    // forwarder's by the owning process.
    const QString hubEnd = QStringLiteral("127.0.0.1:%1").arg(m_rig->hub().port());
    const quint16 agentPort = localPortTowardsTheHub(m_agent->processId());
    QVERIFY(agentPort > 0);
    const QString agentEnd = QStringLiteral("127.0.0.1:%1").arg(agentPort);
    const qsizetype connections
        = m_agent->stderrCount(QStringLiteral("connected to the hub as executor"));

    QElapsedTimer clock;
    clock.start();
    // The connection is torn down under the agent, which itself lives on.
    CLOOP_COMPARE_EXIT(runProgram(QStringLiteral("ss"),
                           { QStringLiteral("-K"), QStringLiteral("src"), agentEnd,
                               QStringLiteral("dst"), hubEnd },
                           QProcessEnvironment::systemEnvironment()),
        0);
    // The forwarder's end of the stream goes; the sandbox keeps fwd0.
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox")),
        qPrintable(m_agent->describe()));
    QVERIFY2(m_forwarder->waitForStderr(QStringLiteral("segment stream on cl-seg ended")),
        qPrintable(m_forwarder->describe()));
    const qint64 noticedMs = clock.elapsed();
    QVERIFY2(noticedMs < 1000, qPrintable(QStringLiteral("noticed after %1 ms").arg(noticedMs)));
    QVERIFY(m_agent->isRunning());
    // The agent dials again, and the hub joins a new stream to the same
    // interface, with no one's help.
    QVERIFY2(waitUntil(
                 [&] {
                     return m_agent->stderrCount(QStringLiteral("connected to the hub as executor"))
                         > connections;
                 },
                 kLongWaitMs),
        qPrintable(m_agent->describe()));
    QVERIFY(resumedOnTheSameInterface(pid, index));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 re-attached fwd-lab").arg(id)),
        qPrintable(m_rig->hub().log()));
    QVERIFY(labReachesTheSandbox(pid, QStringLiteral("192.0.2.78")));
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QCOMPARE(reattachesAudited(id), 1);
    QVERIFY(cancel(id));
}

void TestSegmentForward::aForwarderLinkThatGoesSilentIsNoticedWithinTenSeconds()
{
    // Its tunnel: before any stream, the forwarder's only connection.
    const quint16 forwarderPort = localPortTowardsTheHub(m_forwarder->processId());
    QVERIFY(forwarderPort > 0);
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const qsizetype sessions = m_rig->hub().log().count(QLatin1String("no sign of life"));

    // Every packet of the forwarder's connection vanishes: no reset, no FIN,
    // as when a NAT forgets the link. Only a heartbeat can tell.
    const PacketFilter silence = PacketFilter::dropSilently(forwarderPort);
    QVERIFY2(silence.error().isEmpty(), qPrintable(silence.error()));
    const qint64 noticedMs = msUntilTheAgentKeepsTheSegment();
    QVERIFY2(noticedMs >= 0, qPrintable(m_agent->describe()));
    QVERIFY2(noticedMs < 10'000, qPrintable(QStringLiteral("noticed after %1 ms").arg(noticedMs)));
    // The hub judged the forwarder's silence, not anything quicker. Its
    // line about the session may reach us after the agent's: the agent
    // hears of the closed stream before the hub logs why the session ended.
    QVERIFY2(
        waitUntil(
            [&] { return m_rig->hub().log().count(QLatin1String("no sign of life")) > sessions; },
            5'000),
        qPrintable(m_rig->hub().log()));
    // The forwarder gave up on its end too and dialled again on a new
    // connection, which the filter does not touch: the stream resumes.
    // Its own judgment of its session: the stream's end, which came on
    // its leg, says the hub's.
    static const QRegularExpression ownJudgment(
        QStringLiteral("not connected to \\S+: no sign of life"));
    QVERIFY2(waitUntil([&] { return m_forwarder->stderrText().contains(ownJudgment); }, 15'000),
        qPrintable(m_forwarder->describe()));
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("has fwd-lab back on the same interface")),
        qPrintable(logOf(id) + m_agent->stderrText() + m_rig->hub().log()));
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QVERIFY(cancel(id));
}

// The stream's own connection dies while the daemon's tunnel lives: the
// hub opens the stream again on a new leg, with no operator step, and the
// run keeps its interface and address.
void TestSegmentForward::aForwarderLegThatGoesSilentIsOpenedAgain()
{
    legThatGoesSilentIsOpenedAgain(m_forwarder, QStringLiteral("192.0.2.78"));
}

void TestSegmentForward::anAgentLegThatGoesSilentIsOpenedAgain()
{
    legThatGoesSilentIsOpenedAgain(m_agent, QStringLiteral("192.0.2.77"));
}

void TestSegmentForward::anAgentLinkThatGoesSilentIsNoticedWithinTenSeconds()
{
    // Its tunnel: before any stream, the agent's only connection.
    const QList<quint16> tunnel = localPortsTowardsTheHub(m_agent->processId());
    QCOMPARE(tunnel.size(), 1);
    // A run makes the tunnel carry its log: watched closely from then on.
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const QString connected = QStringLiteral("connected to the hub as executor");
    const qsizetype sessions = m_agent->stderrCount(connected);
    const qsizetype hubJudged = m_rig->hub().log().count(QLatin1String("no sign of life"));

    // Every packet of the agent's tunnel vanishes, as when a NAT forgets it.
    const PacketFilter silence = PacketFilter::dropSilently(tunnel.first());
    QVERIFY2(silence.error().isEmpty(), qPrintable(silence.error()));
    QElapsedTimer sinceSilence;
    sinceSilence.start();
    // The agent judges it dead itself, within ten seconds,
    static const QRegularExpression ownJudgment(
        QStringLiteral("not connected to \\S+: no sign of life"));
    QVERIFY2(waitUntil([&] { return m_agent->stderrText().contains(ownJudgment); }, 15'000),
        qPrintable(m_agent->describe()));
    const qint64 noticedMs = sinceSilence.elapsed();
    qInfo().noquote() << "the agent noticed its silent tunnel after" << noticedMs << "ms";
    QVERIFY2(noticedMs < 10'000, qPrintable(QStringLiteral("noticed after %1 ms").arg(noticedMs)));
    // and so does the hub, from its end.
    QVERIFY2(
        waitUntil(
            [&] { return m_rig->hub().log().count(QLatin1String("no sign of life")) > hubJudged; },
            10'000),
        qPrintable(m_rig->hub().log()));
    // It dials again on a new connection, which the filter does not touch,
    // and its run lives on: still running, and still cancellable.
    QVERIFY2(waitUntil([&] { return m_agent->stderrCount(connected) > sessions; }, kLongWaitMs),
        qPrintable(m_agent->describe()));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QVERIFY(cancel(id));
}

void TestSegmentForward::legThatGoesSilentIsOpenedAgain(
    ForwarderProcess *daemon, const QString &address)
{
    // Before any stream the daemon's one connection is its tunnel.
    const QList<quint16> tunnel = localPortsTowardsTheHub(daemon->processId());
    QCOMPARE(tunnel.size(), 1);
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const auto [pid, index] = sandboxAndSegment(id);
    QVERIFY(pid > 0 && index > 0);
    QVERIFY(labReachesTheSandbox(pid, address));
    QList<quint16> legs = localPortsTowardsTheHub(daemon->processId());
    legs.removeAll(tunnel.first());
    QVERIFY2(legs.size() == 1, qPrintable(QStringLiteral("%1 legs").arg(legs.size())));
    const qsizetype tunnelLosses = daemon->stderrCount(QStringLiteral("not connected"));

    // Every packet of the leg vanishes, as when a NAT forgets it.
    const PacketFilter silence = PacketFilter::dropSilently(legs.first());
    QVERIFY2(silence.error().isEmpty(), qPrintable(silence.error()));
    const qint64 noticedMs = msUntilTheAgentKeepsTheSegment();
    QVERIFY2(noticedMs >= 0, qPrintable(m_agent->describe()));
    QVERIFY2(noticedMs < 10'000, qPrintable(QStringLiteral("noticed after %1 ms").arg(noticedMs)));
    qInfo().noquote() << "the leg's silence was noticed after" << noticedMs << "ms";

    // A new leg, which the filter does not touch, carries it to the same
    // interface; the lab reaches the address the sandbox kept.
    QVERIFY(resumedOnTheSameInterface(pid, index));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 re-attached fwd-lab").arg(id)),
        qPrintable(m_rig->hub().log()));
    QCOMPARE(reattachesAudited(id), 1);
    const CliResult ping = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"),
        QStringLiteral("2"), QStringLiteral("-W"), QStringLiteral("2"), address });
    CLOOP_COMPARE_EXIT(ping, 0);
    // The tunnel never went, and the run never lost the device.
    QCOMPARE(daemon->stderrCount(QStringLiteral("not connected")), tunnelLosses);
    QVERIFY(daemon->isRunning());
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QVERIFY(cancel(id));
}

void TestSegmentForward::aHubKilledMidStreamResumesTheSegmentWhenItIsBack()
{
    const qint64 id = queueAttached(followTheSegment());
    QVERIFY(id > 0);
    const auto [pid, index] = sandboxAndSegment(id);
    QVERIFY(pid > 0 && index > 0);
    QVERIFY(labReachesTheSandbox(pid, QStringLiteral("192.0.2.79")));
    // The hub dies without a word, mid-stream;
    m_rig->hub().kill();
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox")),
        qPrintable(m_agent->describe()));
    // started again on its records, it finds the run still holding the
    // segment once its agent and forwarder are back, and joins them again.
    QVERIFY2(m_rig->hub().start(), qPrintable(m_rig->hub().lastError()));
    QVERIFY(resumedOnTheSameInterface(pid, index, kLongWaitMs * 2));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 re-attached fwd-lab").arg(id)),
        qPrintable(m_rig->hub().log()));
    // The address the sandbox had is still there, and answers again.
    const CliResult ping
        = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"), QStringLiteral("2"),
            QStringLiteral("-W"), QStringLiteral("2"), QStringLiteral("192.0.2.79") });
    CLOOP_COMPARE_EXIT(ping, 0);
    QVERIFY2(!logOf(id).contains(QLatin1String("detached")), qPrintable(logOf(id)));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QCOMPARE(reattachesAudited(id), 1);
    // The binding is intact.
    const QJsonArray bindings = m_rig->hub().cliItems(
        { QStringLiteral("forward"), QStringLiteral("bindings"), QStringLiteral("--json") });
    QVERIFY2(std::any_of(bindings.cbegin(), bindings.cend(),
                 [this](const QJsonValue &binding) {
                     return binding.toObject().value(QLatin1String("id")).toInteger()
                         == m_bindingId;
                 }),
        qPrintable(m_rig->hub().transcript()));
    QVERIFY(cancel(id));
}

void TestSegmentForward::unbindingWhileTheForwarderIsAwayRemovesTheKeptInterface()
{
    const qint64 id = queueAttached(watchTheSegment());
    QVERIFY(id > 0);
    QVERIFY(m_forwarder->kill());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox")),
        qPrintable(m_agent->describe()));
    // While the stream is away the binding ends: nothing will resume it,
    // and the interface kept for it goes at once.
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("forward"), QStringLiteral("unbind"),
                           QString::number(m_bindingId), QStringLiteral("--reason"),
                           QStringLiteral("the lab is needed") }),
        0);
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("lost fwd-lab")), qPrintable(m_agent->describe()));
    QVERIFY2(waitForLog(id, QStringLiteral("detached")), qPrintable(logOf(id)));
    QVERIFY2(m_rig->hub().log().contains(QStringLiteral("run %1 released fwd-lab").arg(id)),
        qPrintable(m_rig->hub().log()));
    const qint64 pid = sandboxPid(id);
    QVERIFY(pid > 0);
    QCOMPARE(fwd0Index(pid), 0);
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QVERIFY(cancel(id));
}

void TestSegmentForward::aLossyLinkAndATenSecondOutageAreSurvived()
{
    // The forwarder's link to the hub loses one packet in a hundred, each
    // way (this kernel has no netem: loss by count, delay none).
    const quint16 forwarderPort = localPortTowardsTheHub(m_forwarder->processId());
    QVERIFY(forwarderPort > 0);
    std::optional<PacketFilter> lossy = PacketFilter::loseOneIn(forwarderPort, 100);
    QVERIFY2(lossy->error().isEmpty(), qPrintable(lossy->error()));
    // A run takes a DHCP lease across it and pings the lab,
    const qint64 id = queue(kProject, leaseAndPing(QStringLiteral("echo waiting; sleep 120")));
    QVERIFY(id > 0);
    QVERIFY2(
        waitForLog(id, QStringLiteral("waiting")), qPrintable(logOf(id) + m_agent->stderrText()));
    const QString log = logOf(id);
    const QRegularExpressionMatch leased
        = QRegularExpression(QStringLiteral("leased=(192\\.0\\.2\\.\\d+)/24")).match(log);
    QVERIFY2(leased.hasMatch(), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("ping-lab-ok")), qPrintable(log));
    const QString address = leased.captured(1);
    // and the lab reaches it, every echo answered: TCP resends what the
    // link lost.
    const CliResult pings = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"),
        QStringLiteral("200"), QStringLiteral("-i"), QStringLiteral("0.01"), QStringLiteral("-W"),
        QStringLiteral("3"), QStringLiteral("-q"), address });
    CLOOP_COMPARE_EXIT(pings, 0);
    QVERIFY2(pings.stdoutText().contains(QLatin1String(" 0% packet loss")),
        qPrintable(pings.describe()));
    QVERIFY2(lossy->dropped() > 0,
        qPrintable(QStringLiteral("the link lost %1 packets").arg(lossy->dropped())));
    const qint64 pid = sandboxPid(id);
    const int index = fwd0Index(pid);
    QVERIFY(pid > 0 && index > 0);

    // Then the link goes silent for 10 s.
    QElapsedTimer outage;
    outage.start();
    std::optional<PacketFilter> silence = PacketFilter::dropSilently(forwarderPort);
    QVERIFY2(silence->error().isEmpty(), qPrintable(silence->error()));
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox"), 15'000),
        qPrintable(m_agent->describe()));
    QTest::qWait(int(std::max<qint64>(0, 10'000 - outage.elapsed())));
    silence.reset();
    lossy.reset();
    // The forwarder dials again by itself; the stream is joined to the
    // same interface, whose lease still answers the lab.
    QVERIFY(resumedOnTheSameInterface(pid, index));
    qInfo().noquote() << QStringLiteral("the segment was back %1 ms after the outage began")
                             .arg(outage.elapsed());
    const CliResult again = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"),
        QStringLiteral("3"), QStringLiteral("-W"), QStringLiteral("3"), address });
    CLOOP_COMPARE_EXIT(again, 0);
    QVERIFY2(!logOf(id).contains(QLatin1String("no-lease")), qPrintable(logOf(id)));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("running"));
    QVERIFY(cancel(id));
}

std::pair<qint64, int> TestSegmentForward::sandboxAndSegment(qint64 runId)
{
    const qint64 pid = sandboxPid(runId);
    const int index = pid > 0 ? fwd0Index(pid) : 0;
    return index > 0 ? std::pair { pid, index } : std::pair<qint64, int> { 0, 0 };
}

bool TestSegmentForward::resumedOnTheSameInterface(qint64 sandboxPid, int index, int timeoutMs)
{
    if (!m_agent->waitForStderr(
            QStringLiteral("has fwd-lab back on the same interface"), timeoutMs)) {
        qWarning().noquote() << m_agent->describe() << m_rig->hub().log();
        return false;
    }
    const int now = fwd0Index(sandboxPid);
    if (now != index)
        qWarning() << "fwd0 was interface" << index << "and is" << now;
    return now == index;
}

int TestSegmentForward::fwd0Index(qint64 sandboxPid)
{
    const CliResult link = inSandbox(sandboxPid,
        { QStringLiteral("ip"), QStringLiteral("-o"), QStringLiteral("link"),
            QStringLiteral("show"), QStringLiteral("dev"), QStringLiteral("fwd0") });
    if (link.exitCode != 0)
        return 0;
    return link.stdoutText().section(QLatin1Char(':'), 0, 0).trimmed().toInt();
}

bool TestSegmentForward::labReachesTheSandbox(qint64 sandboxPid, const QString &address)
{
    const CliResult added = inSandbox(sandboxPid,
        { QStringLiteral("ip"), QStringLiteral("addr"), QStringLiteral("add"),
            address + QStringLiteral("/24"), QStringLiteral("dev"), QStringLiteral("fwd0") });
    if (added.exitCode != 0) {
        qWarning().noquote() << added.describe();
        return false;
    }
    const CliResult ping = m_lab->inLab({ QStringLiteral("ping"), QStringLiteral("-c"),
        QStringLiteral("2"), QStringLiteral("-W"), QStringLiteral("2"), address });
    if (ping.exitCode != 0)
        qWarning().noquote() << ping.describe();
    return ping.exitCode == 0;
}

int TestSegmentForward::reattachesAudited(qint64 id)
{
    const QJsonArray entries
        = m_rig->hub().cliItems({ QStringLiteral("audit"), QStringLiteral("--action"),
            QStringLiteral("run.device_reattach"), QStringLiteral("--json") });
    return int(std::count_if(entries.cbegin(), entries.cend(), [id](const QJsonValue &entry) {
        return entry.toObject().value(QLatin1String("subject")).toString()
            == QStringLiteral("run:%1").arg(id);
    }));
}

qint64 TestSegmentForward::msUntilTheAgentKeepsTheSegment()
{
    QElapsedTimer clock;
    clock.start();
    if (!m_agent->waitForStderr(QStringLiteral("keeps fwd-lab in its sandbox"), 15'000))
        return -1;
    return clock.elapsed();
}

quint16 TestSegmentForward::localPortTowardsTheHub(qint64 pid) const
{
    const QList<quint16> ports = localPortsTowardsTheHub(pid);
    if (ports.isEmpty())
        qWarning().noquote() << "no connection of process" << pid << "to the hub";
    return ports.value(0);
}

QList<quint16> TestSegmentForward::localPortsTowardsTheHub(qint64 pid) const
{
    const QString hubEnd = QStringLiteral("127.0.0.1:%1").arg(m_rig->hub().port());
    const CliResult sockets = runProgram(QStringLiteral("ss"),
        { QStringLiteral("-Htnp"), QStringLiteral("state"), QStringLiteral("established"),
            QStringLiteral("dst"), hubEnd },
        QProcessEnvironment::systemEnvironment());
    QList<quint16> ports;
    for (const QString &line : sockets.stdoutText().split(QLatin1Char('\n'))) {
        if (line.contains(QStringLiteral("pid=%1,").arg(pid)))
            ports.append(line.simplified()
                             .split(QLatin1Char(' '))
                             .value(2)
                             .section(QLatin1Char(':'), -1)
                             .toUShort());
    }
    return ports;
}

QTEST_GUILESS_MAIN(TestSegmentForward)
#include "tst_segmentforward.moc"
