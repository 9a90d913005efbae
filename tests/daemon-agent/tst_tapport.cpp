// TapPort on a real TAP, as root: the test process moves into a network
// namespace of its own (where the TAPs are created), a named namespace with
// one sleeping process in it stands in for a sandbox, and the channel's far
// side is a second multiplexer in this process standing in for the hub.

#include "common/device/l2/ethernetframe.h"
#include "common/device/l2/tapdevice.h"
#include "common/protocol/framerecord.h"
#include "common/tunnel/channelmultiplexer.h"
#include "daemon-agent/devices/tapport.h"
#include "support/framerecords.h"
#include "support/labnetwork.h"
#include "support/processutil.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QtEndian>
#include <QtTest>

#include <atomic>
#include <cerrno>
#include <csignal>

#include <sys/stat.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::testing;
using agent::TapPort;
using device::l2::TapDevice;
using device::l2::VnetHeader;
using protocol::FrameRecord;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;

namespace {

const QString kSandboxName = QStringLiteral("fwd0");
const QString kSandboxAddress = QStringLiteral("192.0.2.10/24");
const QString kNamespacePrefix = QStringLiteral("cloop-tapport-");
constexpr int kWaitMs = 5000;

CliResult ip(const QStringList &arguments)
{
    return runProgram(
        QStringLiteral("ip"), arguments, QProcessEnvironment::systemEnvironment(), 10'000);
}

ino_t namespaceInode(qint64 pid)
{
    struct stat info
    {
    };
    const QByteArray path = (pid > 0 ? QStringLiteral("/proc/%1/ns/net").arg(pid)
                                     : QStringLiteral("/proc/self/ns/net"))
                                .toLocal8Bit();
    return ::stat(path.constData(), &info) == 0 ? info.st_ino : 0;
}

// A named network namespace with one process living in it: what moveInto()
// needs of a sandbox. destroy() (or the destructor, also after a failed
// check) kills the process by its PID and deletes the namespace.
class Sandbox
{
public:
    Sandbox()
    {
        static std::atomic<int> counter { 0 };
        m_name = kNamespacePrefix + QStringLiteral("%1-%2").arg(::getpid()).arg(++counter);
    }
    ~Sandbox() { destroy(); }
    Sandbox(const Sandbox &) = delete;
    Sandbox &operator=(const Sandbox &) = delete;

    // Empty on success, else what went wrong.
    QString start()
    {
        const CliResult added = ip({ QStringLiteral("netns"), QStringLiteral("add"), m_name });
        if (added.exitCode != 0)
            return added.describe();
        m_created = true;
        // ip execs the command, so this PID is the sleeper's.
        m_sleeper.start(QStringLiteral("ip"),
            { QStringLiteral("netns"), QStringLiteral("exec"), m_name, QStringLiteral("sleep"),
                QStringLiteral("60") });
        if (!m_sleeper.waitForStarted(kWaitMs))
            return QStringLiteral("the sleeper did not start: %1").arg(m_sleeper.errorString());
        // The PID exists before ip has switched namespaces.
        const ino_t own = namespaceInode(0);
        if (!waitUntil(
                [&] {
                    const ino_t theirs = namespaceInode(pid());
                    return m_sleeper.state() != QProcess::Running || (theirs != 0 && theirs != own);
                },
                kWaitMs)
            || m_sleeper.state() != QProcess::Running)
            return QStringLiteral("the sleeper never entered namespace %1").arg(m_name);
        return {};
    }

    void destroy()
    {
        if (m_sleeper.state() != QProcess::NotRunning) {
            m_sleeper.kill();
            m_sleeper.waitForFinished(kWaitMs);
        }
        if (std::exchange(m_created, false)) {
            const CliResult deleted
                = ip({ QStringLiteral("netns"), QStringLiteral("delete"), m_name });
            if (deleted.exitCode != 0)
                qWarning().noquote() << "cannot delete namespace" << m_name << deleted.describe();
        }
    }

    QString name() const { return m_name; }
    qint64 pid() const { return m_sleeper.processId(); }

    CliResult run(const QStringList &command) const
    {
        return runProgram(QStringLiteral("ip"),
            QStringList { QStringLiteral("netns"), QStringLiteral("exec"), m_name } + command,
            QProcessEnvironment::systemEnvironment(), 10'000);
    }
    bool hasInterface(const QString &interfaceName) const
    {
        return ip({ QStringLiteral("-n"), m_name, QStringLiteral("link"), QStringLiteral("show"),
                      QStringLiteral("dev"), interfaceName })
                   .exitCode
            == 0;
    }

private:
    QString m_name;
    bool m_created = false;
    QProcess m_sleeper;
};

QByteArray arpRequest(
    const QByteArray &senderMac, const QByteArray &senderIp, const QByteArray &targetIp)
{
    QByteArray frame(6, char(0xff));
    frame += senderMac
        + QByteArray::fromHex("0806"
                              "0001"
                              "0800"
                              "06"
                              "04"
                              "0001")
        + senderMac + senderIp + QByteArray(6, 0) + targetIp;
    frame.append(60 - frame.size(), 0);
    return frame;
}

const QByteArray kHubMac = QByteArray::fromHex("02aabbccddee");
const QByteArray kHubIp = QByteArray::fromHex("c0000201"); // 192.0.2.1
const QByteArray kSandboxIp = QByteArray::fromHex("c000020a"); // 192.0.2.10

bool isArpReplyToHub(const FrameRecord &record)
{
    const QByteArray &frame = record.frame;
    return frame.size() >= 42 && frame.left(6) == kHubMac
        && frame.mid(12, 2) == QByteArray::fromHex("0806")
        && frame.mid(20, 2) == QByteArray::fromHex("0002") && frame.mid(28, 4) == kSandboxIp;
}

} // namespace

class TestTapPort : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void framesFromTheHubReachTheSandboxAndItsAnswerComesBack();
    void aDatagramFromTheSandboxGoesUpWithItsVnetHeader();
    void framesBeforeTheMoveAreDroppedAndCounted();
    void aBrokenStreamEndsThePort();
    void aFrameTheTapRefusesIsDroppedNotFatal();
    void aFullChannelDropsAndCountsThenRecovers();
    void aDestroyedSandboxEndsThePort();
    void destroyingThePortRemovesTheInterface();
    void aLostLinkLeavesTheInterfaceForTheNextStream();

private:
    // Creates the TAP, opens the hub side's channel and makes the agent
    // side's port on it.
    bool openPort(const ChannelMultiplexer::Limits &hubLimits = {},
        const ChannelMultiplexer::Limits &agentLimits = {});
    // The same on a TAP kept from an earlier port: a new tunnel's stream.
    bool openPortOn(std::unique_ptr<TapDevice> tap,
        const ChannelMultiplexer::Limits &hubLimits = {},
        const ChannelMultiplexer::Limits &agentLimits = {});
    bool moveIntoSandbox();
    std::optional<FrameRecord> receiveUntil(const std::function<bool(const FrameRecord &)> &match);
    bool sendToSandbox(const QByteArray &frame);
    bool addSandboxNeighbour();

    std::unique_ptr<Sandbox> m_sandbox;
    std::unique_ptr<ChannelMultiplexer> m_hubSide;
    std::unique_ptr<ChannelMultiplexer> m_agentSide;
    QPointer<Channel> m_hubChannel;
    QPointer<TapPort> m_port;
    protocol::FrameRecordDecoder m_decoder;
    bool m_deliverToHub = true;
    QList<QByteArray> m_heldForHub;
};

void TestTapPort::initTestCase()
{
    if (!QFileInfo::exists(QStringLiteral("/dev/net/tun")))
        QSKIP("/dev/net/tun is missing: no TUN/TAP support here");
    if (QStandardPaths::findExecutable(QStringLiteral("nsenter")).isEmpty())
        QSKIP("nsenter (util-linux) is not installed");
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // A copy of this test that crashed could not clean up; its namespaces
    // carry its PID, so they are known to be nobody's once it is gone.
    const CliResult listed = ip({ QStringLiteral("netns"), QStringLiteral("list") });
    static const QRegularExpression ours(
        QStringLiteral("^%1(\\d+)-\\d+$").arg(QRegularExpression::escape(kNamespacePrefix)));
    for (const QString &line : listed.stdoutText().split(QLatin1Char('\n'))) {
        const QString name = line.section(QLatin1Char(' '), 0, 0);
        const QRegularExpressionMatch match = ours.match(name);
        if (match.hasMatch() && ::kill(pid_t(match.captured(1).toLongLong()), 0) != 0
            && errno == ESRCH)
            ip({ QStringLiteral("netns"), QStringLiteral("delete"), name });
    }
}

void TestTapPort::init()
{
    m_sandbox = std::make_unique<Sandbox>();
    const QString started = m_sandbox->start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    m_decoder = {};
    m_deliverToHub = true;
    m_heldForHub.clear();
}

void TestTapPort::cleanup()
{
    delete m_port.data();
    m_agentSide.reset();
    m_hubSide.reset();
    m_sandbox.reset();
}

bool TestTapPort::openPort(
    const ChannelMultiplexer::Limits &hubLimits, const ChannelMultiplexer::Limits &agentLimits)
{
    auto tap = TapDevice::create(TapDevice::Options {});
    if (!tap) {
        qWarning().noquote() << tap.error().message;
        return false;
    }
    return openPortOn(std::move(*tap), hubLimits, agentLimits);
}

bool TestTapPort::openPortOn(std::unique_ptr<TapDevice> tap,
    const ChannelMultiplexer::Limits &hubLimits, const ChannelMultiplexer::Limits &agentLimits)
{
    m_decoder = {};
    m_hubSide = std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Hub, hubLimits);
    m_agentSide
        = std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Daemon, agentLimits);
    // Frames cross on the next turn of the event loop, like a socket's.
    connect(
        m_hubSide.get(), &ChannelMultiplexer::frameReady, m_agentSide.get(),
        [this](const QByteArray &frame) { QVERIFY(m_agentSide->handleFrame(frame)); },
        Qt::QueuedConnection);
    connect(
        m_agentSide.get(), &ChannelMultiplexer::frameReady, m_hubSide.get(),
        [this](const QByteArray &frame) {
            if (!m_deliverToHub) {
                m_heldForHub.append(frame);
                return;
            }
            QVERIFY(m_hubSide->handleFrame(frame));
        },
        Qt::QueuedConnection);
    std::shared_ptr<std::unique_ptr<TapDevice>> pending
        = std::make_shared<std::unique_ptr<TapDevice>>(std::move(tap));
    connect(m_agentSide.get(), &ChannelMultiplexer::channelRequested, this,
        [this, pending](Channel *channel) {
            channel->accept();
            m_port = new TapPort(std::move(*pending), channel);
        });
    auto opened = m_hubSide->openChannel(
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") } });
    if (!opened)
        return false;
    m_hubChannel = *opened;
    return waitUntil(
        [this] {
            const Channel *hub = m_hubChannel.data();
            return m_port && hub && hub->state() == Channel::State::Open;
        },
        kWaitMs);
}

bool TestTapPort::moveIntoSandbox()
{
    TapPort *port = m_port.data();
    if (!port)
        return false;
    const Status moved
        = port->tap().moveInto(m_sandbox->pid(), kSandboxName, kSandboxAddress, 1500);
    if (!moved)
        qWarning().noquote() << moved.error().message;
    return bool(moved);
}

std::optional<FrameRecord> TestTapPort::receiveUntil(
    const std::function<bool(const FrameRecord &)> &match)
{
    return receiveFrameRecord(m_hubChannel, m_decoder, match, kWaitMs);
}

bool TestTapPort::sendToSandbox(const QByteArray &frame)
{
    return m_hubChannel && m_hubChannel->write(protocol::encodeFrameRecord(VnetHeader {}, frame));
}

// A neighbour the sandbox knows, so datagrams go out at once instead of
// waiting on an ARP answer nobody gives.
bool TestTapPort::addSandboxNeighbour()
{
    const CliResult neighbour
        = ip({ QStringLiteral("-n"), m_sandbox->name(), QStringLiteral("neigh"),
            QStringLiteral("replace"), QStringLiteral("192.0.2.9"), QStringLiteral("lladdr"),
            QStringLiteral("02:00:00:00:00:09"), QStringLiteral("dev"), kSandboxName });
    if (neighbour.exitCode != 0)
        qWarning().noquote() << neighbour.describe();
    return neighbour.exitCode == 0;
}

void TestTapPort::framesFromTheHubReachTheSandboxAndItsAnswerComesBack()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QVERIFY(m_sandbox->hasInterface(kSandboxName));
    // The first request may meet the interface before its address is
    // usable; the sandbox answers one of a few.
    std::optional<FrameRecord> reply;
    for (int attempt = 0; attempt < 5 && !reply; ++attempt) {
        QVERIFY(sendToSandbox(arpRequest(kHubMac, kHubIp, kSandboxIp)));
        reply = receiveUntil(isArpReplyToHub);
    }
    QVERIFY2(reply, "the sandbox did not answer an ARP request sent through the port");
    QCOMPARE(reply->frame.mid(32, 6), kHubMac); // target hardware address
    const TapPort::Counters counters = m_port->counters();
    QVERIFY(counters.framesIn >= 1);
    QVERIFY(counters.framesOut >= 1);
    QVERIFY(counters.bytesIn >= 60);
    QCOMPARE(counters.rejectedIn, quint64(0));
    QVERIFY(!m_port->hasEnded());
}

void TestTapPort::aDatagramFromTheSandboxGoesUpWithItsVnetHeader()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QVERIFY(addSandboxNeighbour());
    const QByteArray payload = QByteArray("from-the-sandbox-").repeated(20);
    const CliResult sent = m_sandbox->run({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                       "s.sendto(b'%1', ('192.0.2.9', 4000))")
            .arg(QString::fromLatin1(payload)) });
    CLOOP_COMPARE_EXIT(sent, 0);
    const auto record = receiveUntil([](const FrameRecord &r) {
        const QByteArray &f = r.frame;
        return f.size() > 14 + 20 + 8 && f.mid(12, 2) == QByteArray::fromHex("0800")
            && quint8(f.at(23)) == 17;
    });
    QVERIFY2(record, "the datagram did not come up the channel");
    const QByteArray &frame = record->frame;
    QCOMPARE(frame.left(6), QByteArray::fromHex("020000000009"));
    const int ipHeaderBytes = (quint8(frame.at(14)) & 0x0f) * 4;
    const qsizetype udp = 14 + ipHeaderBytes;
    QCOMPARE(qFromBigEndian<quint16>(frame.constData() + udp + 2), quint16(4000));
    QCOMPARE(frame.mid(udp + 8), payload);
    // Left as the sandbox's kernel handed it over: a checksum left to
    // offload is finished by the forwarder's side, not here.
    if (record->header.needsChecksum()) {
        QCOMPARE(qsizetype(record->header.csumStart), udp);
        QCOMPARE(record->header.csumOffset, quint16(6));
    }
    qInfo("the datagram came up with vnet flags 0x%02x", record->header.flags);
}

void TestTapPort::framesBeforeTheMoveAreDroppedAndCounted()
{
    QVERIFY(openPort());
    QSignalSpy ended(m_port.data(), &TapPort::ended);
    constexpr int kEarly = 5;
    for (int i = 0; i < kEarly; ++i)
        QVERIFY(sendToSandbox(arpRequest(kHubMac, kHubIp, kSandboxIp)));
    // The TAP is down until the sandbox has it: each frame is a drop.
    QVERIFY2(waitUntil([this] { return m_port->counters().droppedIn >= kEarly; }, kWaitMs),
        qPrintable(QString::number(m_port->counters().droppedIn)));
    QCOMPARE(m_port->counters().droppedIn, quint64(kEarly));
    QCOMPARE(m_port->counters().framesIn, quint64(0));
    QCOMPARE(ended.count(), 0);
    QVERIFY(m_hubChannel && m_hubChannel->state() == Channel::State::Open);

    // Once it is up in the sandbox, frames flow.
    QVERIFY(moveIntoSandbox());
    std::optional<FrameRecord> reply;
    for (int attempt = 0; attempt < 5 && !reply; ++attempt) {
        QVERIFY(sendToSandbox(arpRequest(kHubMac, kHubIp, kSandboxIp)));
        reply = receiveUntil(isArpReplyToHub);
    }
    QVERIFY2(reply, "no frame flowed after the move");
    QVERIFY(m_port->counters().framesIn >= 1);
    QCOMPARE(ended.count(), 0);
}

void TestTapPort::aBrokenStreamEndsThePort()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QSignalSpy ended(m_port.data(), &TapPort::ended);
    QSignalSpy closed(m_hubChannel.data(), &Channel::closed);
    // A length no record can have.
    QVERIFY(m_hubChannel->write(QByteArray::fromHex("7fffffff") + QByteArray(32, 'x')));
    QVERIFY(ended.wait(kWaitMs));
    QVERIFY2(ended.first().first().toString().contains(QLatin1String("frame format")),
        qPrintable(ended.first().first().toString()));
    QVERIFY(closed.count() == 1 || closed.wait(kWaitMs));
    QCOMPARE(
        closed.first().first().value<protocol::CloseCode>(), protocol::CloseCode::ProtocolError);
    QCOMPARE(ended.count(), 1);
}

void TestTapPort::aFrameTheTapRefusesIsDroppedNotFatal()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QSignalSpy ended(m_port.data(), &TapPort::ended);
    // A segmentation kind no kernel knows: the TAP refuses the frame, the
    // segment goes on.
    VnetHeader bogus;
    bogus.gsoType = 0x42;
    bogus.gsoSize = 100;
    QVERIFY(m_hubChannel->write(
        protocol::encodeFrameRecord(bogus, arpRequest(kHubMac, kHubIp, kSandboxIp))));
    QVERIFY(waitUntil([this] { return m_port->counters().rejectedIn == 1; }, kWaitMs));
    std::optional<FrameRecord> reply;
    for (int attempt = 0; attempt < 5 && !reply; ++attempt) {
        QVERIFY(sendToSandbox(arpRequest(kHubMac, kHubIp, kSandboxIp)));
        reply = receiveUntil(isArpReplyToHub);
    }
    QVERIFY2(reply, "the port did not carry on after a refused frame");
    QCOMPARE(m_port->counters().rejectedIn, quint64(1));
    QCOMPARE(ended.count(), 0);
}

void TestTapPort::aFullChannelDropsAndCountsThenRecovers()
{
    // Well below what the TAP's own queue (1000 frames) holds, so the
    // channel fills even should the whole flood be queued before the port
    // reads any of it.
    ChannelMultiplexer::Limits hubLimits;
    hubLimits.receiveWindow = 64 * 1024;
    ChannelMultiplexer::Limits agentLimits;
    agentLimits.maxQueuedPerChannel = 256 * 1024;
    QVERIFY(openPort(hubLimits, agentLimits));
    QVERIFY(moveIntoSandbox());
    QVERIFY(addSandboxNeighbour());
    // The hub side stops taking anything: no data, no credit goes back.
    m_deliverToHub = false;
    const CliResult flood = m_sandbox->run({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                       "for i in range(6000): s.sendto(b'z' * 1200, ('192.0.2.9', 4000))") });
    CLOOP_COMPARE_EXIT(flood, 0);
    // Whatever the TAP still holds is read until the channel refuses.
    QVERIFY(waitUntil([this] { return m_port->counters().droppedOut > 0; }, kWaitMs));
    const TapPort::Counters flooded = m_port->counters();
    // What went up fits the channel's window plus its queue.
    QVERIFY2(flooded.bytesOut <= quint64(hubLimits.receiveWindow + agentLimits.maxQueuedPerChannel),
        qPrintable(QString::number(flooded.bytesOut)));
    QVERIFY(m_agentSide->queuedBytes() <= agentLimits.maxQueuedPerChannel);

    // The hub side catches up: the stream carries on, well formed.
    m_deliverToHub = true;
    for (const QByteArray &frame : std::exchange(m_heldForHub, {}))
        QVERIFY(m_hubSide->handleFrame(frame));
    QVERIFY(waitUntil(
        [this] {
            Channel *hub = m_hubChannel.data();
            if (!hub)
                return true;
            if (hub->bytesAvailable() > 0) {
                if (!m_decoder.feed(hub->readAll()))
                    return true;
                m_decoder.takeRecords();
            }
            return hub->bytesAvailable() == 0 && m_agentSide->queuedBytes() == 0;
        },
        kWaitMs));
    QVERIFY2(!m_decoder.failed(),
        qPrintable(m_decoder.failed() ? m_decoder.error().message : QString()));
    const CliResult after = m_sandbox->run({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                       "s.sendto(b'after' * 10, ('192.0.2.9', 4001))") });
    CLOOP_COMPARE_EXIT(after, 0);
    const auto record
        = receiveUntil([](const FrameRecord &r) { return r.frame.contains("afterafter"); });
    QVERIFY2(record, "the port did not carry on after the channel drained");
    QVERIFY(!m_port->hasEnded());
}

void TestTapPort::aDestroyedSandboxEndsThePort()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QSignalSpy ended(m_port.data(), &TapPort::ended);
    QSignalSpy closed(m_hubChannel.data(), &Channel::closed);
    QElapsedTimer waited;
    waited.start();
    m_sandbox->destroy();
    QVERIFY(waitUntil([&] { return ended.count() > 0; }, kWaitMs));
    qInfo("the port ended %lld ms after the sandbox's namespace was destroyed", waited.elapsed());
    QVERIFY2(waited.elapsed() <= 1000, qPrintable(QString::number(waited.elapsed())));
    const QString reason = ended.first().first().toString();
    QVERIFY2(reason.startsWith(QLatin1String("device gone")), qPrintable(reason));
    QVERIFY(closed.count() == 1 || closed.wait(kWaitMs));
    QCOMPARE(closed.first().first().value<protocol::CloseCode>(), protocol::CloseCode::DeviceGone);
    QCOMPARE(ended.count(), 1);
}

void TestTapPort::destroyingThePortRemovesTheInterface()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QVERIFY(m_sandbox->hasInterface(kSandboxName));
    QSignalSpy closed(m_hubChannel.data(), &Channel::closed);
    delete m_port.data();
    QVERIFY(!m_port);
    QVERIFY2(waitUntil([this] { return !m_sandbox->hasInterface(kSandboxName); }, kWaitMs),
        "the TAP outlived its port");
    // The hub's side hears that the stream is over.
    QVERIFY(closed.count() == 1 || closed.wait(kWaitMs));
    QCOMPARE(closed.first().first().value<protocol::CloseCode>(), protocol::CloseCode::Normal);
}

void TestTapPort::aLostLinkLeavesTheInterfaceForTheNextStream()
{
    QVERIFY(openPort());
    QVERIFY(moveIntoSandbox());
    QVERIFY(addSandboxNeighbour());
    const CliResult before = m_sandbox->run({ QStringLiteral("ip"), QStringLiteral("-o"),
        QStringLiteral("link"), QStringLiteral("show"), QStringLiteral("dev"), kSandboxName });
    QCOMPARE(before.exitCode, 0);
    QSignalSpy ended(m_port.data(), &TapPort::ended);
    // The agent's tunnel goes: its channels end as lost.
    m_agentSide->closeAll(QStringLiteral("the hub went away"));
    QVERIFY(ended.count() == 1 || ended.wait(kWaitMs));
    QVERIFY(m_port->endedByLostLink());
    std::unique_ptr<TapDevice> kept = m_port->takeTap();
    QVERIFY(kept);
    delete m_port.data();
    // The port is gone; the interface, its address and neighbour are not.
    QVERIFY(m_sandbox->hasInterface(kSandboxName));
    // A new tunnel's stream is joined to the same TAP, and carries frames.
    QVERIFY(openPortOn(std::move(kept)));
    const CliResult after = m_sandbox->run({ QStringLiteral("ip"), QStringLiteral("-o"),
        QStringLiteral("link"), QStringLiteral("show"), QStringLiteral("dev"), kSandboxName });
    QCOMPARE(after.stdoutText().section(QLatin1Char(':'), 0, 0),
        before.stdoutText().section(QLatin1Char(':'), 0, 0));
    QVERIFY(sendToSandbox(arpRequest(kHubMac, kHubIp, kSandboxIp)));
    QVERIFY2(receiveUntil(isArpReplyToHub), "no ARP reply through the new stream");
    // A stream that ends normally is no lost link.
    QSignalSpy endedAgain(m_port.data(), &TapPort::ended);
    m_hubChannel->close(protocol::CloseCode::Normal, QStringLiteral("the run let go"));
    QVERIFY(endedAgain.count() == 1 || endedAgain.wait(kWaitMs));
    QVERIFY(!m_port->endedByLostLink());
}

QTEST_GUILESS_MAIN(TestTapPort)
#include "tst_tapport.moc"
