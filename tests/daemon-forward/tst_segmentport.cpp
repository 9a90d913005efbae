// SegmentPort on a real veth pair, as root: the test process moves into a
// network namespace of its own, the lab end of the pair sits in a lab
// namespace, and the channel's far side is a second multiplexer in this
// process standing in for the hub.

#include "common/device/l2/ethernetframe.h"
#include "common/protocol/framerecord.h"
#include "common/tunnel/channelmultiplexer.h"
#include "daemon-forward/segment/segmentport.h"
#include "support/framerecords.h"
#include "support/labnetwork.h"

#include <QtEndian>
#include <QtTest>

using namespace cloop;
using namespace cloop::testing;
using device::l2::PacketSocket;
using device::l2::VnetHeader;
using forward::SegmentPort;
using protocol::FrameRecord;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;

namespace {
const QString kSegment = QStringLiteral("cl-seg");

// Ones'-complement sum of 16-bit big-endian words.
quint32 sum16(QByteArrayView bytes, quint32 sum = 0)
{
    for (qsizetype i = 0; i + 1 < bytes.size(); i += 2)
        sum += qFromBigEndian<quint16>(bytes.data() + i);
    if (bytes.size() % 2)
        sum += quint8(bytes.back()) << 8;
    return sum;
}

quint16 fold(quint32 sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return quint16(sum);
}

// Whether the UDP/IPv4 frame's checksum verifies over its pseudo-header.
bool udpChecksumVerifies(const QByteArray &frame)
{
    const QByteArray ip = frame.mid(14);
    const int headerBytes = (quint8(ip[0]) & 0x0f) * 4;
    const QByteArray udp
        = ip.mid(headerBytes, qFromBigEndian<quint16>(ip.constData() + headerBytes + 4));
    QByteArray pseudo = ip.mid(12, 8);
    pseudo += QByteArray::fromHex("0011");
    pseudo += QByteArray(2, 0);
    qToBigEndian<quint16>(quint16(udp.size()), pseudo.data() + 10);
    return fold(sum16(udp, sum16(pseudo))) == 0xffff;
}
} // namespace

class TestSegmentPort : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aTaggedFrameFromTheLabGoesUpWithItsTag();
    void anOffloadedChecksumArrivesFinished();
    void framesFromTheChannelGoOutAndAreAnswered();
    void aBrokenStreamEndsThePort();
    void aFullChannelDropsAndCountsThenRecovers();

private:
    // Opens the hub side's channel; the forwarder side accepts it with a port.
    bool openPort();
    // Feeds what the hub side received into the decoder until `match`
    // holds for a record, or 5 s pass.
    std::optional<FrameRecord> receiveUntil(const std::function<bool(const FrameRecord &)> &match);
    void sendFromLab(const QString &python);

    std::unique_ptr<LabNetwork> m_lab;
    std::unique_ptr<ChannelMultiplexer> m_hubSide;
    std::unique_ptr<ChannelMultiplexer> m_forwarderSide;
    QPointer<Channel> m_hubChannel;
    SegmentPort *m_port = nullptr;
    protocol::FrameRecordDecoder m_decoder;
    bool m_deliverToHub = true;
    QList<QByteArray> m_heldForHub;
};

void TestSegmentPort::initTestCase()
{
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

void TestSegmentPort::init()
{
    m_lab = std::make_unique<LabNetwork>(
        kSegment, QStringLiteral("cl-lab"), QStringLiteral("192.0.2.2/24"));
    QVERIFY2(m_lab->create(), qPrintable(m_lab->lastError()));
    QVERIFY(m_lab
                ->inLab({ QStringLiteral("ip"), QStringLiteral("neigh"), QStringLiteral("add"),
                    QStringLiteral("192.0.2.9"), QStringLiteral("lladdr"),
                    QStringLiteral("02:00:00:00:00:09"), QStringLiteral("dev"),
                    QStringLiteral("cl-lab") })
                .exitCode
        == 0);
    m_decoder = {};
    m_deliverToHub = true;
    m_heldForHub.clear();
}

void TestSegmentPort::cleanup()
{
    delete m_port;
    m_port = nullptr;
    m_forwarderSide.reset();
    m_hubSide.reset();
    m_lab.reset();
}

bool TestSegmentPort::openPort()
{
    m_hubSide = std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Hub);
    m_forwarderSide = std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Daemon);
    // Frames cross on the next turn of the event loop, like a socket's.
    connect(
        m_hubSide.get(), &ChannelMultiplexer::frameReady, m_forwarderSide.get(),
        [this](const QByteArray &frame) { QVERIFY(m_forwarderSide->handleFrame(frame)); },
        Qt::QueuedConnection);
    connect(
        m_forwarderSide.get(), &ChannelMultiplexer::frameReady, m_hubSide.get(),
        [this](const QByteArray &frame) {
            if (!m_deliverToHub) {
                m_heldForHub.append(frame);
                return;
            }
            QVERIFY(m_hubSide->handleFrame(frame));
        },
        Qt::QueuedConnection);
    connect(m_forwarderSide.get(), &ChannelMultiplexer::channelRequested, this,
        [this](Channel *channel) {
            channel->accept();
            auto socket = PacketSocket::open(
                PacketSocket::Options { kSegment, true, true, 4 * 1024 * 1024 });
            if (!socket) {
                qWarning().noquote() << socket.error().message;
                return;
            }
            m_port = new SegmentPort(std::move(*socket), channel);
        });
    auto opened = m_hubSide->openChannel(
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") } });
    if (!opened)
        return false;
    m_hubChannel = *opened;
    return QTest::qWaitFor(
        [this] {
            const Channel *hub = m_hubChannel.data();
            return m_port != nullptr && hub && hub->state() == Channel::State::Open;
        },
        5000);
}

std::optional<FrameRecord> TestSegmentPort::receiveUntil(
    const std::function<bool(const FrameRecord &)> &match)
{
    return receiveFrameRecord(m_hubChannel, m_decoder, match, 5000);
}

void TestSegmentPort::sendFromLab(const QString &python)
{
    const CliResult sent
        = m_lab->inLab({ QStringLiteral("python3"), QStringLiteral("-c"), python });
    QVERIFY2(sent.exitCode == 0, qPrintable(sent.describe()));
}

void TestSegmentPort::aTaggedFrameFromTheLabGoesUpWithItsTag()
{
    QVERIFY(openPort());
    const QByteArray sent = QByteArray::fromHex("ffffffffffff"
                                                "020000000002"
                                                "8100"
                                                "6064"
                                                "88b5")
        + QByteArray("tagged").repeated(10);
    sendFromLab(
        QStringLiteral("import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
                       "s.bind(('cl-lab', 0)); s.send(bytes.fromhex('%1'))")
            .arg(QString::fromLatin1(sent.toHex())));
    const auto record = receiveUntil(
        [&](const FrameRecord &r) { return r.frame.mid(12, 2) == QByteArray::fromHex("8100"); });
    QVERIFY(record);
    // Byte for byte what the lab put on the wire, tag included.
    QCOMPARE(record->frame, sent);
    QCOMPARE(m_port->counters().framesUp >= 1, true);
}

void TestSegmentPort::anOffloadedChecksumArrivesFinished()
{
    QVERIFY(openPort());
    sendFromLab(
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                       "s.sendto(b'checksum-me' * 20, ('192.0.2.9', 4000))"));
    const auto record = receiveUntil([](const FrameRecord &r) {
        return r.frame.size() > 23 && r.frame.mid(12, 2) == QByteArray::fromHex("0800")
            && r.frame.at(23) == 17;
    });
    QVERIFY(record);
    // The lab's kernel left the checksum to "hardware"; it arrives finished.
    QVERIFY(!record->header.needsChecksum());
    QVERIFY(udpChecksumVerifies(record->frame));
}

void TestSegmentPort::framesFromTheChannelGoOutAndAreAnswered()
{
    QVERIFY(openPort());
    const QByteArray mac = QByteArray::fromHex("02aabbccddee");
    QByteArray request(6, char(0xff));
    request += mac
        + QByteArray::fromHex("0806"
                              "0001"
                              "0800"
                              "06"
                              "04"
                              "0001")
        + mac + QByteArray::fromHex("c0000201") + QByteArray(6, 0)
        + QByteArray::fromHex("c0000202");
    request.append(60 - request.size(), 0);
    QVERIFY(m_hubChannel->write(protocol::encodeFrameRecord(VnetHeader {}, request)));
    // The lab answers the ARP request to the MAC that asked.
    const auto reply = receiveUntil([&](const FrameRecord &r) {
        return r.frame.left(6) == mac && r.frame.mid(12, 2) == QByteArray::fromHex("0806")
            && r.frame.mid(20, 2) == QByteArray::fromHex("0002");
    });
    QVERIFY2(reply, "the lab did not answer a frame sent through the port");
    QVERIFY(m_port->counters().framesDown >= 1);
}

void TestSegmentPort::aBrokenStreamEndsThePort()
{
    QVERIFY(openPort());
    QSignalSpy ended(m_port, &SegmentPort::ended);
    QSignalSpy closed(m_hubChannel.data(), &Channel::closed);
    // A length no record can have.
    QVERIFY(m_hubChannel->write(QByteArray::fromHex("7fffffff") + QByteArray(32, 'x')));
    QVERIFY(ended.wait(5000));
    QVERIFY2(ended.first().first().toString().contains(QLatin1String("frame format")),
        qPrintable(ended.first().first().toString()));
    QVERIFY(closed.count() == 1 || closed.wait(5000));
    QCOMPARE(
        closed.first().first().value<protocol::CloseCode>(), protocol::CloseCode::ProtocolError);
}

void TestSegmentPort::aFullChannelDropsAndCountsThenRecovers()
{
    QVERIFY(openPort());
    // The hub side stops taking anything: no data, no credit goes back.
    m_deliverToHub = false;
    sendFromLab(
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                       "for i in range(6000): s.sendto(b'z' * 1200, ('192.0.2.9', 4000))"));
    QTest::qWait(300);
    const SegmentPort::Counters flooded = m_port->counters();
    // What went up fits the channel's window plus its queue; the rest was
    // dropped (by the port or at the kernel's socket buffer) and counted.
    const ChannelMultiplexer::Limits limits;
    QVERIFY2(flooded.bytesUp <= quint64(limits.receiveWindow + limits.maxQueuedPerChannel
                 + protocol::kMaxFrameRecordBytes),
        qPrintable(QString::number(flooded.bytesUp)));
    QVERIFY2(flooded.droppedUp + flooded.kernelDrops > 0,
        qPrintable(QStringLiteral("up %1, dropped %2, kernel %3")
                       .arg(flooded.framesUp)
                       .arg(flooded.droppedUp)
                       .arg(flooded.kernelDrops)));
    QVERIFY(m_forwarderSide->queuedBytes() <= limits.maxQueuedPerConnection);

    // The hub side catches up: the stream carries on.
    m_deliverToHub = true;
    for (const QByteArray &frame : std::exchange(m_heldForHub, {}))
        QVERIFY(m_hubSide->handleFrame(frame));
    // The backlog of the flood is read (and decoded: the stream must stay
    // well formed through it) until nothing more is on its way.
    QVERIFY(QTest::qWaitFor(
        [this] {
            Channel *hub = m_hubChannel.data();
            if (!hub)
                return true;
            if (hub->bytesAvailable() > 0) {
                if (!m_decoder.feed(hub->readAll()))
                    return true;
                m_decoder.takeRecords();
            }
            return hub->bytesAvailable() == 0 && m_forwarderSide->queuedBytes() == 0;
        },
        5000));
    QVERIFY2(!m_decoder.failed(),
        qPrintable(m_decoder.failed() ? m_decoder.error().message : QString()));
    sendFromLab(
        QStringLiteral("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                       "s.sendto(b'after' * 10, ('192.0.2.9', 4001))"));
    const auto after
        = receiveUntil([](const FrameRecord &r) { return r.frame.contains("afterafter"); });
    QVERIFY2(after, "the port did not carry on after the channel drained");
}

QTEST_GUILESS_MAIN(TestSegmentPort)
#include "tst_segmentport.moc"
