// PacketSocket on a real veth pair. The test process first moves itself
// into a network namespace of its own (unshare), so the capture end lives
// nowhere else; the other end sits in a "lab" namespace the test makes and
// removes. Needs root; skipped otherwise.

#include "common/device/l2/packetsocket.h"

#include <QDeadlineTimer>
#include <QProcess>
#include <QtEndian>
#include <QtTest>

#include <sched.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::device::l2;

namespace {
const QString kCapture = QStringLiteral("cl-cap");
const QString kLabEnd = QStringLiteral("cl-lab");
constexpr quint16 kEtherTypeArp = 0x0806;
constexpr quint16 kEtherTypeIpv4 = 0x0800;

struct Ran
{
    int exitCode = -1;
    QByteArray output;
};

Ran run(const QStringList &command, int timeoutMs = 10'000)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(command.first(), command.mid(1));
    Ran ran;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        ran.output = "timed out";
        return ran;
    }
    ran.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    ran.output = process.readAll();
    return ran;
}

// QVERIFY2 evaluates its message whether or not the check fails.
template <typename T> QByteArray problem(const Result<T> &result)
{
    return result ? QByteArray() : result.error().message.toLocal8Bit();
}

quint16 etherType(const QByteArray &frame)
{
    return frame.size() < 14 ? 0 : qFromBigEndian<quint16>(frame.constData() + 12);
}

// An ARP request from `mac`/`senderIp` for `targetIp`, broadcast.
QByteArray arpRequest(const QByteArray &mac, const QByteArray &senderIp, const QByteArray &targetIp)
{
    QByteArray frame(6, char(0xff));
    frame += mac;
    frame += QByteArray::fromHex("0806"
                                 "0001"
                                 "0800"
                                 "06"
                                 "04"
                                 "0001");
    frame += mac + senderIp + QByteArray(6, 0) + targetIp;
    frame.append(60 - frame.size(), 0);
    return frame;
}
} // namespace

class TestPacketSocket : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void framesFromTheLabArrive();
    void aVlanTagComesBackInTheAuxdata();
    void anOffloadedChecksumIsFlaggedInTheVnetHeader();
    void sentFramesReachTheLabAndNeverComeBack();
    void interfaceStateReadsFlagsAndCounters();
    void badInterfacesAndFramesAreRefused();

private:
    Ran inLab(const QStringList &command)
    {
        return run(QStringList { QStringLiteral("ip"), QStringLiteral("netns"),
                       QStringLiteral("exec"), m_lab }
            + command);
    }
    // Receives until a frame satisfies `match` or 5 s pass.
    std::optional<ReceivedPacket> receiveUntil(
        PacketSocket &socket, const std::function<bool(const ReceivedPacket &)> &match);
    std::unique_ptr<PacketSocket> openCapture();

    QString m_lab;
    bool m_labMade = false;
};

void TestPacketSocket::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root: AF_PACKET sockets and network namespaces");
    // From here on this process, and every command it starts, is in a
    // network namespace nobody else sees.
    QVERIFY2(::unshare(CLONE_NEWNET) == 0, strerror(errno));
    m_lab = QStringLiteral("cloop-tst-ps-%1").arg(::getpid());
    const QList<QStringList> setup {
        { QStringLiteral("ip"), QStringLiteral("netns"), QStringLiteral("add"), m_lab },
        { QStringLiteral("ip"), QStringLiteral("link"), QStringLiteral("add"), kCapture,
            QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
            QStringLiteral("name"), kLabEnd },
        { QStringLiteral("ip"), QStringLiteral("link"), QStringLiteral("set"), kLabEnd,
            QStringLiteral("netns"), m_lab },
        { QStringLiteral("ip"), QStringLiteral("link"), QStringLiteral("set"), kCapture,
            QStringLiteral("up") },
        { QStringLiteral("ip"), QStringLiteral("-n"), m_lab, QStringLiteral("addr"),
            QStringLiteral("add"), QStringLiteral("192.0.2.2/24"), QStringLiteral("dev"), kLabEnd },
        { QStringLiteral("ip"), QStringLiteral("-n"), m_lab, QStringLiteral("link"),
            QStringLiteral("set"), kLabEnd, QStringLiteral("up") },
        // A neighbour that never answers, so the lab sends to it at once.
        { QStringLiteral("ip"), QStringLiteral("-n"), m_lab, QStringLiteral("neigh"),
            QStringLiteral("add"), QStringLiteral("192.0.2.9"), QStringLiteral("lladdr"),
            QStringLiteral("02:00:00:00:00:09"), QStringLiteral("dev"), kLabEnd },
    };
    for (const QStringList &command : setup) {
        const Ran ran = run(command);
        QVERIFY2(ran.exitCode == 0,
            qPrintable(command.join(QLatin1Char(' ')) + QLatin1String(": ")
                + QString::fromLocal8Bit(ran.output)));
        m_labMade = true;
    }
}

void TestPacketSocket::cleanupTestCase()
{
    // The veth pair goes with the namespaces: ours ends with the process.
    if (m_labMade)
        run({ QStringLiteral("ip"), QStringLiteral("netns"), QStringLiteral("delete"), m_lab });
}

std::unique_ptr<PacketSocket> TestPacketSocket::openCapture()
{
    auto socket = PacketSocket::open(PacketSocket::Options { kCapture });
    if (!socket) {
        qWarning().noquote() << socket.error().message;
        return nullptr;
    }
    return std::move(*socket);
}

std::optional<ReceivedPacket> TestPacketSocket::receiveUntil(
    PacketSocket &socket, const std::function<bool(const ReceivedPacket &)> &match)
{
    QDeadlineTimer deadline(5000);
    while (!deadline.hasExpired()) {
        auto packet = socket.receive();
        if (!packet) {
            qWarning().noquote() << packet.error().message;
            return std::nullopt;
        }
        if (!*packet) {
            QTest::qSleep(5);
            continue;
        }
        if (match(**packet))
            return **packet;
    }
    return std::nullopt;
}

void TestPacketSocket::framesFromTheLabArrive()
{
    auto socket = openCapture();
    QVERIFY(socket);
    QVERIFY(socket->hasVnetHeader());
    QProcess ping;
    ping.start(QStringLiteral("ip"),
        { QStringLiteral("netns"), QStringLiteral("exec"), m_lab, QStringLiteral("busybox"),
            QStringLiteral("ping"), QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("-W"),
            QStringLiteral("1"), QStringLiteral("192.0.2.77") });
    const auto arp = receiveUntil(*socket, [](const ReceivedPacket &packet) {
        return etherType(packet.bytes.mid(PacketSocket::kVnetHeaderBytes)) == kEtherTypeArp;
    });
    ping.waitForFinished();
    QVERIFY(arp);
    const QByteArray frame = arp->bytes.mid(PacketSocket::kVnetHeaderBytes);
    QCOMPARE(frame.left(6), QByteArray(6, char(0xff)));
    // Sender 192.0.2.2 asks for 192.0.2.77.
    QCOMPARE(frame.mid(28, 4), QByteArray::fromHex("c0000202"));
    QCOMPARE(frame.mid(38, 4), QByteArray::fromHex("c000024d"));
    QCOMPARE(arp->bytes.left(PacketSocket::kVnetHeaderBytes),
        QByteArray(PacketSocket::kVnetHeaderBytes, 0));
    QVERIFY(!arp->aux.hasVlanTag());
}

void TestPacketSocket::aVlanTagComesBackInTheAuxdata()
{
    auto socket = openCapture();
    QVERIFY(socket);
    // This kernel has no 8021q module: the lab sends the tagged frame raw.
    const Ran sent = inLab({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
                       "s.bind(('%1', 0)); "
                       "s.send(bytes.fromhex('ffffffffffff' '020000000002' '8100' '6064' '88b5') "
                       "+ b'tagged' * 10)")
            .arg(kLabEnd) });
    QVERIFY2(sent.exitCode == 0, sent.output.constData());
    const auto tagged = receiveUntil(
        *socket, [](const ReceivedPacket &packet) { return packet.aux.hasVlanTag(); });
    QVERIFY(tagged);
    // The kernel took the tag out of the bytes and put it beside them:
    // priority 3, VID 100.
    QCOMPARE(tagged->aux.vlanTci, quint16(0x6064));
    QCOMPARE(tagged->aux.tagProtocol(), quint16(0x8100));
    const QByteArray frame = tagged->bytes.mid(PacketSocket::kVnetHeaderBytes);
    QCOMPARE(etherType(frame), quint16(0x88b5));
    QCOMPARE(frame.mid(14, 6), QByteArray("tagged"));
}

void TestPacketSocket::anOffloadedChecksumIsFlaggedInTheVnetHeader()
{
    auto socket = openCapture();
    QVERIFY(socket);
    const Ran sent = inLab({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                       "s.sendto(b'x' * 100, ('192.0.2.9', 9))") });
    QVERIFY2(sent.exitCode == 0, sent.output.constData());
    const auto udp = receiveUntil(*socket, [](const ReceivedPacket &packet) {
        const QByteArray frame = packet.bytes.mid(PacketSocket::kVnetHeaderBytes);
        return etherType(frame) == kEtherTypeIpv4 && frame.size() > 23 && frame.at(23) == 17;
    });
    QVERIFY(udp);
    // A local sender left the checksum to "hardware": the vnet header says
    // where it goes (flags NEEDS_CSUM, csum_start 34, csum_offset 6).
    const QByteArray header = udp->bytes.left(PacketSocket::kVnetHeaderBytes);
    QCOMPARE(quint8(header.at(0)) & 0x01, 0x01);
    QCOMPARE(qFromLittleEndian<quint16>(header.constData() + 6), quint16(34));
    QCOMPARE(qFromLittleEndian<quint16>(header.constData() + 8), quint16(6));
    QVERIFY(udp->aux.status & PacketAuxdata::kStatusCsumNotReady);
}

void TestPacketSocket::sentFramesReachTheLabAndNeverComeBack()
{
    auto socket = openCapture();
    QVERIFY(socket);
    auto state = InterfaceState::read(kCapture);
    QVERIFY2(state, problem(state).constData());
    QCOMPARE(state->macAddress.size(), 6);
    const QByteArray request = arpRequest(
        state->macAddress, QByteArray::fromHex("c0000201"), QByteArray::fromHex("c0000202"));
    const Status sent = socket->send(QByteArray(PacketSocket::kVnetHeaderBytes, 0) + request);
    QVERIFY2(sent, problem(sent).constData());
    bool sawOwn = false;
    const auto reply = receiveUntil(*socket, [&](const ReceivedPacket &packet) {
        const QByteArray frame = packet.bytes.mid(PacketSocket::kVnetHeaderBytes);
        sawOwn |= frame == request;
        // An ARP reply (opcode 2) to us.
        return etherType(frame) == kEtherTypeArp && frame.left(6) == state->macAddress
            && frame.mid(20, 2) == QByteArray::fromHex("0002");
    });
    QVERIFY2(reply, "the lab did not answer the ARP request sent through the socket");
    QVERIFY2(!sawOwn, "the socket received the frame it sent");
    const Ran neighbours = run({ QStringLiteral("ip"), QStringLiteral("-n"), m_lab,
        QStringLiteral("neigh"), QStringLiteral("show"), QStringLiteral("192.0.2.1") });
    QVERIFY2(
        neighbours.output.contains(state->macAddress.toHex(':')), neighbours.output.constData());
}

void TestPacketSocket::interfaceStateReadsFlagsAndCounters()
{
    auto before = InterfaceState::read(kCapture);
    QVERIFY2(before, problem(before).constData());
    QVERIFY(before->up);
    QVERIFY(before->running);
    QCOMPARE(before->mtu, 1500);
    const Ran sent = inLab({ QStringLiteral("python3"), QStringLiteral("-c"),
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                       "for _ in range(10): s.sendto(b'y' * 1000, ('192.0.2.9', 9))") });
    QVERIFY2(sent.exitCode == 0, sent.output.constData());
    auto after = InterfaceState::read(kCapture);
    QVERIFY2(after, problem(after).constData());
    QVERIFY(after->rxPackets >= before->rxPackets + 10);
    QVERIFY(after->rxBytes >= before->rxBytes + 10 * 1000);

    QVERIFY(run({ QStringLiteral("ip"), QStringLiteral("link"), QStringLiteral("set"), kCapture,
                    QStringLiteral("down") })
                .exitCode
        == 0);
    auto down = InterfaceState::read(kCapture);
    QVERIFY(run({ QStringLiteral("ip"), QStringLiteral("link"), QStringLiteral("set"), kCapture,
                    QStringLiteral("up") })
                .exitCode
        == 0);
    QVERIFY2(down, problem(down).constData());
    QVERIFY(!down->up);
}

void TestPacketSocket::badInterfacesAndFramesAreRefused()
{
    auto missing = PacketSocket::open(PacketSocket::Options { QStringLiteral("cl-nothere") });
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, QStringLiteral("no_interface"));
    auto tooLong = PacketSocket::open(
        PacketSocket::Options { QStringLiteral("a-name-far-too-long-for-linux") });
    QVERIFY(!tooLong);
    QCOMPARE(tooLong.error().code, QStringLiteral("invalid_interface"));
    QVERIFY(!InterfaceState::read(QStringLiteral("cl-nothere")));

    auto socket = openCapture();
    QVERIFY(socket);
    const Status tooShort = socket->send(QByteArray(PacketSocket::kVnetHeaderBytes + 13, 0));
    QVERIFY(!tooShort);
    QCOMPARE(tooShort.error().code, QStringLiteral("invalid_frame"));
    const Status tooBig = socket->send(
        QByteArray(PacketSocket::kVnetHeaderBytes + PacketSocket::kMaxFrameBytes + 1, 0));
    QVERIFY(!tooBig);
    QCOMPARE(tooBig.error().code, QStringLiteral("invalid_frame"));
}

QTEST_GUILESS_MAIN(TestPacketSocket)
#include "tst_packetsocket.moc"
