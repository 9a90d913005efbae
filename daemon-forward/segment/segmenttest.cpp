#include "daemon-forward/segment/segmenttest.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"

#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QtEndian>

#include <cstring>

namespace cloop::forward {

using device::l2::InterfaceState;
using device::l2::PacketAuxdata;
using device::l2::PacketSocket;

namespace {

QString macText(QByteArrayView bytes)
{
    return QString::fromLatin1(bytes.toByteArray().toHex(':'));
}

QString ipv4Text(QByteArrayView bytes)
{
    return QHostAddress(qFromBigEndian<quint32>(bytes.data())).toString();
}

QString ipProtocolName(quint8 protocol)
{
    switch (protocol) {
    case 0:
        return QStringLiteral("hop-by-hop options");
    case 1:
        return QStringLiteral("ICMP");
    case 6:
        return QStringLiteral("TCP");
    case 17:
        return QStringLiteral("UDP");
    case 58:
        return QStringLiteral("ICMPv6");
    case 132:
        return QStringLiteral("SCTP");
    default:
        return QStringLiteral("protocol %1").arg(protocol);
    }
}

} // namespace

SegmentTest::SegmentTest(
    QString interfaceName, tunnel::Channel *channel, Options options, QObject *parent)
    : QObject(parent)
    , m_interfaceName(std::move(interfaceName))
    , m_channel(channel)
    , m_options(options)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &SegmentTest::finish);
    connect(channel, &tunnel::Channel::closed, this, [this] {
        // The hub gave up (or went away): nobody to report to.
        if (!m_done) {
            m_done = true;
            deleteLater();
        }
    });
}

QJsonObject SegmentTest::describeFrame(QByteArrayView frame, const PacketAuxdata &aux)
{
    QJsonObject out { { QStringLiteral("length"), frame.size() } };
    if (frame.size() < 14)
        return out;
    out.insert(QStringLiteral("destination"), macText(frame.first(6)));
    out.insert(QStringLiteral("source"), macText(frame.sliced(6, 6)));
    qsizetype offset = 12;
    quint16 etherType = qFromBigEndian<quint16>(frame.data() + offset);
    if (aux.hasVlanTag()) {
        out.insert(QStringLiteral("vlan"), aux.vlanTci & 0x0fff);
    } else if ((etherType == 0x8100 || etherType == 0x88a8) && frame.size() >= 18) {
        out.insert(QStringLiteral("vlan"), qFromBigEndian<quint16>(frame.data() + 14) & 0x0fff);
        offset += 4;
        etherType = qFromBigEndian<quint16>(frame.data() + offset);
    }
    out.insert(QStringLiteral("ethertype"),
        QStringLiteral("0x%1").arg(etherType, 4, 16, QLatin1Char('0')));
    const QByteArrayView payload = frame.sliced(offset + 2);
    QString summary;
    if (etherType == 0x0806 && payload.size() >= 28) {
        const quint16 operation = qFromBigEndian<quint16>(payload.data() + 6);
        summary = operation == 1
            ? QStringLiteral("ARP who-has %1 tell %2")
                  .arg(ipv4Text(payload.sliced(24, 4)), ipv4Text(payload.sliced(14, 4)))
            : QStringLiteral("ARP %1 is-at %2")
                  .arg(ipv4Text(payload.sliced(14, 4)), macText(payload.sliced(8, 6)));
    } else if (etherType == 0x0800 && payload.size() >= 20) {
        summary = QStringLiteral("IPv4 %1 %2 → %3")
                      .arg(ipProtocolName(static_cast<quint8>(payload[9])),
                          ipv4Text(payload.sliced(12, 4)), ipv4Text(payload.sliced(16, 4)));
    } else if (etherType == 0x86dd && payload.size() >= 40) {
        Q_IPV6ADDR source;
        Q_IPV6ADDR destination;
        std::memcpy(source.c, payload.data() + 8, 16);
        std::memcpy(destination.c, payload.data() + 24, 16);
        summary = QStringLiteral("IPv6 %1 %2 → %3")
                      .arg(ipProtocolName(static_cast<quint8>(payload[6])),
                          QHostAddress(source).toString(), QHostAddress(destination).toString());
    }
    if (!summary.isEmpty())
        out.insert(QStringLiteral("summary"), summary);
    return out;
}

void SegmentTest::start()
{
    auto socket = PacketSocket::open(PacketSocket::Options { m_interfaceName, true, false, 0 });
    if (!socket) {
        finishWith(QJsonObject { { QStringLiteral("ok"), false },
            { QStringLiteral("problem"), socket.error().message } });
        return;
    }
    m_socket = std::move(*socket);
    m_notifier = std::make_unique<QSocketNotifier>(m_socket->fd(), QSocketNotifier::Read);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &SegmentTest::onReadable);
    m_deadline.start(m_options.listen);
}

void SegmentTest::onReadable()
{
    for (;;) {
        auto packet = m_socket->receive();
        if (!packet) {
            qCWarning(lcForward).noquote() << "segment test:" << packet.error().message;
            finish();
            return;
        }
        if (!*packet)
            return;
        ++m_framesSeen;
        if (m_frames.size() < m_options.maxFrames)
            m_frames.append(describeFrame((*packet)->bytes, (*packet)->aux));
    }
}

void SegmentTest::finish()
{
    if (m_notifier)
        m_notifier->setEnabled(false);
    QJsonObject report { { QStringLiteral("ok"), true } };
    auto state = InterfaceState::read(m_interfaceName);
    if (!state) {
        report.insert(QStringLiteral("ok"), false);
        report.insert(QStringLiteral("problem"), state.error().message);
    } else {
        report.insert(QStringLiteral("link"),
            QJsonObject { { QStringLiteral("up"), state->up },
                { QStringLiteral("carrier"), state->running },
                { QStringLiteral("mtu"), state->mtu },
                { QStringLiteral("mac"), macText(state->macAddress) } });
        report.insert(QStringLiteral("counters"),
            QJsonObject { { QStringLiteral("rx_packets"), qint64(state->rxPackets) },
                { QStringLiteral("rx_bytes"), qint64(state->rxBytes) },
                { QStringLiteral("rx_dropped"), qint64(state->rxDropped) },
                { QStringLiteral("tx_packets"), qint64(state->txPackets) },
                { QStringLiteral("tx_bytes"), qint64(state->txBytes) },
                { QStringLiteral("tx_dropped"), qint64(state->txDropped) } });
    }
    report.insert(QStringLiteral("listened_ms"), qint64(m_options.listen.count()));
    report.insert(QStringLiteral("frames_seen"), m_framesSeen);
    report.insert(QStringLiteral("frames"), m_frames);
    finishWith(report);
}

void SegmentTest::finishWith(QJsonObject report)
{
    if (std::exchange(m_done, true))
        return;
    m_deadline.stop();
    report.insert(QStringLiteral("kind"), QStringLiteral("l2"));
    report.insert(QStringLiteral("interface"), m_interfaceName);
    if (m_channel) {
        m_channel->write(QJsonDocument(report).toJson(QJsonDocument::Compact));
        m_channel->close();
    }
    m_socket.reset();
    deleteLater();
}

} // namespace cloop::forward
