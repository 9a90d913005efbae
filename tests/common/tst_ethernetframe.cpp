// Unit tests of the layer-2 frame helpers (common/device/l2/ethernetframe.h):
// the virtio_net_hdr layout written out byte by byte, VLAN tag re-insertion,
// and checksum completion on hand-built UDP, TCP and SCTP frames, checked
// against a plain reference implementation here rather than against the
// code under test.

#include "common/device/l2/ethernetframe.h"

#include <QTest>

using namespace cloop;
using namespace cloop::device::l2;

Q_DECLARE_METATYPE(cloop::device::l2::VnetHeader)

namespace {

QByteArray hex(const char *text)
{
    // fromHex skips the spaces, so layouts can be written field by field.
    return QByteArray::fromHex(QByteArray(text));
}

void appendBe16(QByteArray &out, quint16 value)
{
    out.append(static_cast<char>(value >> 8));
    out.append(static_cast<char>(value));
}

void appendBe32(QByteArray &out, quint32 value)
{
    appendBe16(out, static_cast<quint16>(value >> 16));
    appendBe16(out, static_cast<quint16>(value));
}

quint16 be16(const QByteArray &bytes, qsizetype at)
{
    return static_cast<quint16>(
        (static_cast<quint8>(bytes[at]) << 8) | static_cast<quint8>(bytes[at + 1]));
}

quint32 le32(const QByteArray &bytes, qsizetype at)
{
    quint32 value = 0;
    for (int i = 3; i >= 0; --i)
        value = (value << 8) | static_cast<quint8>(bytes[at + i]);
    return value;
}

// RFC 1071 the slow way: 16-bit big-endian words, an odd byte padded.
quint32 referenceSum(QByteArrayView bytes)
{
    quint32 sum = 0;
    for (qsizetype i = 0; i < bytes.size(); i += 2) {
        const quint32 high = static_cast<quint8>(bytes[i]);
        const quint32 low = i + 1 < bytes.size() ? static_cast<quint8>(bytes[i + 1]) : 0;
        sum += (high << 8) | low;
    }
    return sum;
}

quint16 fold(quint32 sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<quint16>(sum);
}

// Bit by bit, independent of the table the code uses.
quint32 referenceCrc32c(QByteArrayView bytes)
{
    quint32 crc = 0xffffffffu;
    for (const char c : bytes) {
        crc ^= static_cast<quint8>(c);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 1u) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    }
    return ~crc;
}

const QByteArray kMacs = hex("020000000001 020000000002");
const QByteArray kSrc4 = hex("c0a80a01");
const QByteArray kDst4 = hex("c0a80a02");
const QByteArray kSrc6 = hex("fd00000000000000 0000000000000001");
const QByteArray kDst6 = hex("fd00000000000000 00000000000000ff");

QByteArray payload(qsizetype size, int seed)
{
    QByteArray out;
    for (qsizetype i = 0; i < size; ++i)
        out.append(static_cast<char>((i * 7 + seed * 13 + 1) & 0xff));
    return out;
}

QByteArray ipv4Header(quint8 protocol, qsizetype l4Size)
{
    QByteArray ip = hex("45 00");
    appendBe16(ip, static_cast<quint16>(20 + l4Size));
    ip += hex("1234 4000 40");
    ip.append(static_cast<char>(protocol));
    ip += hex("0000") + kSrc4 + kDst4;
    const quint16 checksum = static_cast<quint16>(~fold(referenceSum(ip)));
    ip[10] = static_cast<char>(checksum >> 8);
    ip[11] = static_cast<char>(checksum);
    return ip;
}

QByteArray ipv6Header(quint8 nextHeader, qsizetype afterSize)
{
    QByteArray ip = hex("60000000");
    appendBe16(ip, static_cast<quint16>(afterSize));
    ip.append(static_cast<char>(nextHeader));
    ip.append(static_cast<char>(64));
    return ip + kSrc6 + kDst6;
}

QByteArray pseudoHeader4(quint8 protocol, qsizetype l4Size)
{
    QByteArray out = kSrc4 + kDst4;
    out.append('\0');
    out.append(static_cast<char>(protocol));
    appendBe16(out, static_cast<quint16>(l4Size));
    return out;
}

QByteArray pseudoHeader6(quint8 nextHeader, qsizetype l4Size)
{
    QByteArray out = kSrc6 + kDst6;
    appendBe32(out, static_cast<quint32>(l4Size));
    out += hex("000000");
    out.append(static_cast<char>(nextHeader));
    return out;
}

// A frame as a sender with checksum offload hands it over: the L4 checksum
// field holds the folded, not complemented, pseudo-header sum.
struct PartialFrame
{
    QByteArray frame;
    VnetHeader header;
    QByteArray pseudo;
    qsizetype l4Start = 0;
    qsizetype field = 0;
};

PartialFrame partial(const QByteArray &l3, quint16 etherType, QByteArray l4, qsizetype fieldInL4,
    const QByteArray &pseudo)
{
    const quint16 seed = fold(referenceSum(pseudo));
    l4[fieldInL4] = static_cast<char>(seed >> 8);
    l4[fieldInL4 + 1] = static_cast<char>(seed);
    PartialFrame out;
    out.frame = kMacs;
    appendBe16(out.frame, etherType);
    out.l4Start = out.frame.size() + l3.size();
    out.frame += l3 + l4;
    out.field = out.l4Start + fieldInL4;
    out.header.flags = VnetHeader::kNeedsCsum;
    out.header.csumStart = static_cast<quint16>(out.l4Start);
    out.header.csumOffset = static_cast<quint16>(fieldInL4);
    out.pseudo = pseudo;
    return out;
}

QByteArray udpHeader(qsizetype payloadSize)
{
    QByteArray udp = hex("d431 0035");
    appendBe16(udp, static_cast<quint16>(8 + payloadSize));
    return udp + hex("0000");
}

PartialFrame udp4(const QByteArray &data)
{
    const QByteArray l4 = udpHeader(data.size()) + data;
    return partial(ipv4Header(17, l4.size()), 0x0800, l4, 6, pseudoHeader4(17, l4.size()));
}

PartialFrame tcp4(const QByteArray &data)
{
    //                      ports     seq      ack      off flags window csum urg
    const QByteArray l4 = hex("c350 0050 01020304 0a0b0c0d 50 18 faf0 0000 0000") + data;
    return partial(ipv4Header(6, l4.size()), 0x0800, l4, 16, pseudoHeader4(6, l4.size()));
}

PartialFrame udp6(const QByteArray &data)
{
    const QByteArray l4 = udpHeader(data.size()) + data;
    return partial(ipv6Header(17, l4.size()), 0x86dd, l4, 6, pseudoHeader6(17, l4.size()));
}

// The checksum a receiver would find right: computed from scratch over the
// pseudo-header and the segment with the field zeroed.
quint16 expectedChecksum(const PartialFrame &p)
{
    QByteArray segment = p.frame.sliced(p.l4Start);
    segment[p.field - p.l4Start] = 0;
    segment[p.field - p.l4Start + 1] = 0;
    const auto checksum
        = static_cast<quint16>(~fold(referenceSum(p.pseudo) + referenceSum(segment)));
    return checksum == 0 ? 0xffff : checksum;
}

// What a receiver checks: pseudo-header plus segment sums to all ones.
bool verifies(const QByteArray &pseudo, QByteArrayView segment)
{
    return fold(referenceSum(pseudo) + referenceSum(segment)) == 0xffff;
}

QByteArray sctpPacket()
{
    //                      ports     vtag     checksum
    QByteArray sctp = hex("0b59 0b59 11223344 00000000");
    // A DATA chunk: type, flags, length, TSN, stream, seq, PPID, then data.
    sctp += hex("00 03 0014 00000001 0000 0000 00000000") + QByteArray("abcd");
    return sctp;
}

} // namespace

class TestEthernetFrame final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void vnetHeaderLayout();
    void vnetHeaderParse();
    void vnetHeaderPredicates();
    void restoresVlanTag_data();
    void restoresVlanTag();
    void refusesVlanTag_data();
    void refusesVlanTag();
    void completesChecksum_data();
    void completesChecksum();
    void writesZeroChecksumAsAllOnes_data();
    void writesZeroChecksumAsAllOnes();
    void taggedEqualsUntagged();
    void crc32cVectors_data();
    void crc32cVectors();
    void completesSctp_data();
    void completesSctp();
    void refusesSctpOffset();
    void refusesOutOfRange_data();
    void refusesOutOfRange();
    void leavesGsoAlone_data();
    void leavesGsoAlone();
    void leavesCompleteFramesAlone();
};

void TestEthernetFrame::vnetHeaderLayout()
{
    VnetHeader header;
    header.flags = VnetHeader::kNeedsCsum;
    header.gsoType = static_cast<quint8>(VnetHeader::kGsoTcpV4 | VnetHeader::kGsoEcn);
    header.hdrLen = 0x0102;
    header.gsoSize = 0x0304;
    header.csumStart = 0x0506;
    header.csumOffset = 0x0708;

    //                             flags gso hdrLen gsoSize start offset
    const QByteArray expected = hex("01    81  0201   0403    0605  0807");
    QByteArray out("xy");
    header.appendTo(out);
    QCOMPARE(out, QByteArray("xy") + expected);

    char raw[VnetHeader::kSize];
    header.writeTo(raw);
    QCOMPARE(QByteArray(raw, VnetHeader::kSize), expected);

    static_assert(VnetHeader::kSize == 10);
    QByteArray zero;
    VnetHeader().appendTo(zero);
    QCOMPARE(zero, QByteArray(10, '\0'));
}

void TestEthernetFrame::vnetHeaderParse()
{
    const auto parsed = VnetHeader::parse(hex("02 05 4200 a805 2200 0600 ffff"));
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->flags, VnetHeader::kDataValid);
    QCOMPARE(parsed->gsoType, VnetHeader::kGsoUdpL4);
    QCOMPARE(parsed->hdrLen, quint16(0x42));
    QCOMPARE(parsed->gsoSize, quint16(1448));
    QCOMPARE(parsed->csumStart, quint16(34));
    QCOMPARE(parsed->csumOffset, quint16(6));

    VnetHeader header;
    header.flags = 0xff;
    header.gsoType = 0x7f;
    header.hdrLen = 0xffff;
    header.gsoSize = 1;
    header.csumStart = 0x8000;
    header.csumOffset = 0x00ff;
    QByteArray bytes;
    header.appendTo(bytes);
    QCOMPARE(VnetHeader::parse(bytes).value(), header);

    const auto shortInput = VnetHeader::parse(hex("0000000000000000 00"));
    QVERIFY(!shortInput.ok());
    QVERIFY2(shortInput.error().message.contains(QStringLiteral("10 bytes, got 9")),
        qPrintable(shortInput.error().message));
    QVERIFY(!VnetHeader::parse({}).ok());
}

void TestEthernetFrame::vnetHeaderPredicates()
{
    VnetHeader header;
    QVERIFY(!header.needsChecksum());
    QVERIFY(!header.isGso());
    header.flags = VnetHeader::kDataValid;
    QVERIFY(!header.needsChecksum());
    header.flags = VnetHeader::kNeedsCsum | VnetHeader::kDataValid;
    QVERIFY(header.needsChecksum());
    header.gsoType = VnetHeader::kGsoEcn;
    QVERIFY2(!header.isGso(), "ECN alone is no GSO type");
    for (const quint8 type : { VnetHeader::kGsoTcpV4, VnetHeader::kGsoUdp, VnetHeader::kGsoTcpV6,
             VnetHeader::kGsoUdpL4 }) {
        header.gsoType = type;
        QVERIFY(header.isGso());
        header.gsoType = static_cast<quint8>(type | VnetHeader::kGsoEcn);
        QVERIFY(header.isGso());
    }
}

void TestEthernetFrame::restoresVlanTag_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<VnetHeader>("header");
    QTest::addColumn<quint16>("tci");
    QTest::addColumn<quint16>("tpid");
    QTest::addColumn<QByteArray>("expectedFrame");
    QTest::addColumn<VnetHeader>("expectedHeader");

    const QByteArray arp = kMacs + hex("0806") + QByteArray(28, 'a');
    VnetHeader plain;
    QTest::newRow("802.1Q, default tpid")
        << arp << plain << quint16(100) << quint16(0)
        << kMacs + hex("8100 0064 0806") + QByteArray(28, 'a') << plain;
    QTest::newRow("802.1Q, tpid given")
        << arp << plain << quint16(0xe00a) << quint16(0x8100)
        << kMacs + hex("8100 e00a 0806") + QByteArray(28, 'a') << plain;
    QTest::newRow("802.1ad kept") << arp << plain << quint16(0x0123) << quint16(0x88a8)
                                  << kMacs + hex("88a8 0123 0806") + QByteArray(28, 'a') << plain;
    QTest::newRow("VID 0 priority tag")
        << arp << plain << quint16(0xa000) << quint16(0)
        << kMacs + hex("8100 a000 0806") + QByteArray(28, 'a') << plain;
    QTest::newRow("tag 0 still inserted")
        << arp << plain << quint16(0) << quint16(0)
        << kMacs + hex("8100 0000 0806") + QByteArray(28, 'a') << plain;
    QTest::newRow("bare Ethernet header") << kMacs + hex("88b5") << plain << quint16(7)
                                          << quint16(0) << kMacs + hex("8100 0007 88b5") << plain;

    const PartialFrame udp = udp4(payload(20, 1));
    VnetHeader moved = udp.header;
    moved.csumStart = 38;
    moved.hdrLen = 0;
    QByteArray tagged = udp.frame;
    tagged.insert(12, hex("8100 0064"));
    QTest::newRow("needs checksum: start moves, hdrLen stays")
        << udp.frame << udp.header << quint16(100) << quint16(0) << tagged << moved;

    VnetHeader withHdrLen = udp.header;
    withHdrLen.hdrLen = 42;
    VnetHeader withHdrLenMoved = withHdrLen;
    withHdrLenMoved.csumStart = 38;
    QTest::newRow("needs checksum, not GSO: hdrLen stays")
        << udp.frame << withHdrLen << quint16(100) << quint16(0) << tagged << withHdrLenMoved;

    VnetHeader gso;
    gso.flags = VnetHeader::kNeedsCsum;
    gso.gsoType = VnetHeader::kGsoTcpV4;
    gso.gsoSize = 1448;
    gso.hdrLen = 66;
    gso.csumStart = 34;
    gso.csumOffset = 16;
    VnetHeader gsoMoved = gso;
    gsoMoved.hdrLen = 70;
    gsoMoved.csumStart = 38;
    const PartialFrame tcp = tcp4(payload(3000, 2));
    QByteArray tcpTagged = tcp.frame;
    tcpTagged.insert(12, hex("8100 0fff"));
    QTest::newRow("GSO: start and hdrLen move")
        << tcp.frame << gso << quint16(0x0fff) << quint16(0) << tcpTagged << gsoMoved;

    VnetHeader gsoNoHdrLen = gso;
    gsoNoHdrLen.hdrLen = 0;
    VnetHeader gsoNoHdrLenMoved = gsoNoHdrLen;
    gsoNoHdrLenMoved.csumStart = 38;
    QTest::newRow("GSO without hdrLen: 0 stays 0") << tcp.frame << gsoNoHdrLen << quint16(0x0fff)
                                                   << quint16(0) << tcpTagged << gsoNoHdrLenMoved;

    VnetHeader validOnly;
    validOnly.flags = VnetHeader::kDataValid;
    validOnly.csumStart = 34; // meaningless without NEEDS_CSUM: left alone
    QTest::newRow("data valid: header unchanged")
        << udp.frame << validOnly << quint16(100) << quint16(0) << tagged << validOnly;

    const QByteArray largest(kMaxFrameBytes - 4, 'L');
    QByteArray largestTagged = largest;
    largestTagged.insert(12, hex("8100 0001"));
    QTest::newRow("largest frame that can take a tag")
        << largest << plain << quint16(1) << quint16(0) << largestTagged << plain;
}

void TestEthernetFrame::restoresVlanTag()
{
    QFETCH(QByteArray, frame);
    QFETCH(VnetHeader, header);
    QFETCH(quint16, tci);
    QFETCH(quint16, tpid);
    QFETCH(QByteArray, expectedFrame);
    QFETCH(VnetHeader, expectedHeader);

    const Status status = restoreVlanTag(frame, header, tci, tpid);
    QVERIFY2(status.ok(), status.ok() ? "" : qPrintable(status.error().message));
    QCOMPARE(frame.size(), expectedFrame.size());
    QCOMPARE(frame, expectedFrame);
    QCOMPARE(header, expectedHeader);
}

void TestEthernetFrame::refusesVlanTag_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<VnetHeader>("header");
    QTest::addColumn<QString>("message");

    QTest::newRow("empty") << QByteArray() << VnetHeader() << "0-byte frame";
    QTest::newRow("13 bytes") << kMacs + hex("08") << VnetHeader() << "13-byte frame";
    QTest::newRow("too large for a tag")
        << QByteArray(kMaxFrameBytes - 3, 'x') << VnetHeader() << "65550-byte frame beyond 65553";

    VnetHeader farStart;
    farStart.flags = VnetHeader::kNeedsCsum;
    farStart.csumStart = 0xfffc;
    QTest::newRow("csumStart would overflow")
        << kMacs + hex("0800") + QByteArray(40, 'x') << farStart << "checksum start 65532";

    VnetHeader longHdr;
    longHdr.gsoType = VnetHeader::kGsoUdpL4;
    longHdr.flags = VnetHeader::kNeedsCsum;
    longHdr.csumStart = 34;
    longHdr.hdrLen = 0xfffd;
    QTest::newRow("hdrLen would overflow")
        << kMacs + hex("0800") + QByteArray(40, 'x') << longHdr << "header length 65533";
}

void TestEthernetFrame::refusesVlanTag()
{
    QFETCH(QByteArray, frame);
    QFETCH(VnetHeader, header);
    QFETCH(QString, message);

    const QByteArray frameBefore = frame;
    const VnetHeader headerBefore = header;
    const Status status = restoreVlanTag(frame, header, 5, 0);
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("invalid_ethernet_frame"));
    QVERIFY2(status.error().message.contains(message), qPrintable(status.error().message));
    QCOMPARE(frame, frameBefore);
    QCOMPARE(header, headerBefore);
}

void TestEthernetFrame::completesChecksum_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<VnetHeader>("header");
    QTest::addColumn<QByteArray>("pseudo");
    QTest::addColumn<int>("l4Start");
    QTest::addColumn<int>("field");
    QTest::addColumn<quint16>("expected");

    auto add = [](const char *name, const PartialFrame &p) {
        QTest::newRow(name) << p.frame << p.header << p.pseudo << int(p.l4Start) << int(p.field)
                            << expectedChecksum(p);
    };
    add("UDP/IPv4, odd payload", udp4(payload(37, 1)));
    add("UDP/IPv4, even payload", udp4(payload(1472, 2)));
    add("UDP/IPv4, empty payload", udp4({}));
    add("TCP/IPv4", tcp4(payload(100, 3)));
    add("TCP/IPv4, odd payload", tcp4(payload(1, 4)));
    add("TCP/IPv4, no payload", tcp4({}));
    add("UDP/IPv6", udp6(payload(1001, 5)));
    add("UDP/IPv6, 64 KiB", udp6(payload(65000, 6)));

    PartialFrame alsoValid = udp4(payload(9, 7));
    alsoValid.header.flags |= VnetHeader::kDataValid;
    add("NEEDS_CSUM with DATA_VALID", alsoValid);
}

void TestEthernetFrame::completesChecksum()
{
    QFETCH(QByteArray, frame);
    QFETCH(VnetHeader, header);
    QFETCH(QByteArray, pseudo);
    QFETCH(int, l4Start);
    QFETCH(int, field);
    QFETCH(quint16, expected);

    const QByteArray before = frame;
    QVERIFY(!verifies(pseudo, QByteArrayView(frame).sliced(l4Start)));
    const Status status = completeChecksum(frame, header);
    QVERIFY2(status.ok(), status.ok() ? "" : qPrintable(status.error().message));

    QCOMPARE(be16(frame, field), expected);
    QVERIFY(verifies(pseudo, QByteArrayView(frame).sliced(l4Start)));
    // Only the two checksum bytes changed.
    QCOMPARE(frame.size(), before.size());
    QCOMPARE(frame.first(field), before.first(field));
    QCOMPARE(frame.sliced(field + 2), before.sliced(field + 2));

    QCOMPARE(header.flags & VnetHeader::kNeedsCsum, 0);
    QCOMPARE(header.flags & VnetHeader::kDataValid, int(VnetHeader::kDataValid));
    QCOMPARE(header.csumStart, quint16(0));
    QCOMPARE(header.csumOffset, quint16(0));
    QCOMPARE(header.gsoType, VnetHeader::kGsoNone);

    // A completed frame no longer asks for anything.
    const QByteArray done = frame;
    QVERIFY(completeChecksum(frame, header).ok());
    QCOMPARE(frame, done);
}

void TestEthernetFrame::writesZeroChecksumAsAllOnes_data()
{
    QTest::addColumn<bool>("tcp");
    QTest::newRow("UDP") << false;
    QTest::newRow("TCP") << true;
}

void TestEthernetFrame::writesZeroChecksumAsAllOnes()
{
    // Two payload bytes chosen so the segment sums to all ones and the
    // complement is 0: the kernel's CSUM_MANGLED_0 case.
    QFETCH(bool, tcp);
    const QByteArray data = payload(10, 9);
    PartialFrame p = tcp ? tcp4(data) : udp4(data);
    const qsizetype word = p.frame.size() - 2;
    p.frame[word] = 0;
    p.frame[word + 1] = 0;
    const quint16 sum = fold(referenceSum(QByteArrayView(p.frame).sliced(p.l4Start)));
    const auto filler = static_cast<quint16>(0xffff - sum);
    p.frame[word] = static_cast<char>(filler >> 8);
    p.frame[word + 1] = static_cast<char>(filler);
    QCOMPARE(expectedChecksum(p), quint16(0xffff));

    QVERIFY(completeChecksum(p.frame, p.header).ok());
    QCOMPARE(be16(p.frame, p.field), quint16(0xffff));
    QVERIFY(verifies(p.pseudo, QByteArrayView(p.frame).sliced(p.l4Start)));
}

void TestEthernetFrame::taggedEqualsUntagged()
{
    for (const PartialFrame &p :
        { udp4(payload(333, 1)), tcp4(payload(64, 2)), udp6(payload(77, 3)) }) {
        QByteArray untagged = p.frame;
        VnetHeader untaggedHeader = p.header;
        QVERIFY(completeChecksum(untagged, untaggedHeader).ok());

        QByteArray tagged = p.frame;
        VnetHeader taggedHeader = p.header;
        QVERIFY(restoreVlanTag(tagged, taggedHeader, 0x2064, 0).ok());
        QCOMPARE(taggedHeader.csumStart, quint16(p.l4Start + 4));
        QVERIFY(completeChecksum(tagged, taggedHeader).ok());

        QCOMPARE(be16(tagged, p.field + 4), be16(untagged, p.field));
        QCOMPARE(tagged.sliced(p.l4Start + 4), untagged.sliced(p.l4Start));
        QCOMPARE(taggedHeader, untaggedHeader);
    }
}

void TestEthernetFrame::crc32cVectors_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<quint32>("crc");

    QTest::newRow("check value") << QByteArray("123456789") << quint32(0xe3069283);
    QTest::newRow("empty") << QByteArray() << quint32(0);
    // RFC 3720 B.4.
    QTest::newRow("32 zeros") << QByteArray(32, '\0') << quint32(0x8a9136aa);
    QTest::newRow("32 x 0xff") << QByteArray(32, '\xff') << quint32(0x62a8ab43);
    QByteArray ascending;
    for (int i = 0; i < 32; ++i)
        ascending.append(static_cast<char>(i));
    QTest::newRow("32 ascending") << ascending << quint32(0x46dd794e);
}

void TestEthernetFrame::crc32cVectors()
{
    QFETCH(QByteArray, bytes);
    QFETCH(quint32, crc);

    QCOMPARE(crc32c(bytes), crc);
    QCOMPARE(referenceCrc32c(bytes), crc);
    for (qsizetype split = 0; split <= bytes.size(); ++split)
        QCOMPARE(
            crc32c(QByteArrayView(bytes).sliced(split), crc32c(QByteArrayView(bytes).first(split))),
            crc);
}

void TestEthernetFrame::completesSctp_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<int>("l4Start");

    const QByteArray sctp = sctpPacket();
    QTest::newRow("IPv4") << kMacs + hex("0800") + ipv4Header(132, sctp.size()) + sctp << 34;
    QTest::newRow("IPv6") << kMacs + hex("86dd") + ipv6Header(132, sctp.size()) + sctp << 54;
    // Hop-by-hop options (8 bytes, next header SCTP) before the SCTP header.
    const QByteArray hopByHop = hex("84 00 0104 00000000");
    QTest::newRow("IPv6, extension header")
        << kMacs + hex("86dd") + ipv6Header(0, hopByHop.size() + sctp.size()) + hopByHop + sctp
        << 62;
    QTest::newRow("802.1Q inline")
        << kMacs + hex("8100 0064 0800") + ipv4Header(132, sctp.size()) + sctp << 38;
    QTest::newRow("QinQ inline") << kMacs + hex("88a8 0001 8100 0064 86dd")
            + ipv6Header(132, sctp.size())
            + sctp << 62;
}

void TestEthernetFrame::completesSctp()
{
    QFETCH(QByteArray, frame);
    QFETCH(int, l4Start);

    VnetHeader header;
    header.flags = VnetHeader::kNeedsCsum;
    header.csumStart = static_cast<quint16>(l4Start);
    header.csumOffset = 8;
    const QByteArray before = frame;
    QVERIFY(completeChecksum(frame, header).ok());

    const quint32 expected = referenceCrc32c(QByteArrayView(before).sliced(l4Start));
    QCOMPARE(le32(frame, l4Start + 8), expected);
    QCOMPARE(frame.first(l4Start + 8), before.first(l4Start + 8));
    QCOMPARE(frame.sliced(l4Start + 12), before.sliced(l4Start + 12));
    QCOMPARE(header.flags, VnetHeader::kDataValid);

    // The receiver's check: the CRC with the field read as zero.
    QByteArray zeroed = frame.sliced(l4Start);
    zeroed.replace(8, 4, QByteArray(4, '\0'));
    QCOMPARE(referenceCrc32c(zeroed), le32(frame, l4Start + 8));

    // Whatever the sender left in the field does not count.
    QByteArray dirty = before;
    dirty.replace(l4Start + 8, 4, hex("deadbeef"));
    VnetHeader again;
    again.flags = VnetHeader::kNeedsCsum;
    again.csumStart = static_cast<quint16>(l4Start);
    again.csumOffset = 8;
    QVERIFY(completeChecksum(dirty, again).ok());
    QCOMPARE(dirty, frame);

    // Restoring a tag first gives the same SCTP packet.
    QByteArray tagged = before;
    VnetHeader taggedHeader;
    taggedHeader.flags = VnetHeader::kNeedsCsum;
    taggedHeader.csumStart = static_cast<quint16>(l4Start);
    taggedHeader.csumOffset = 8;
    QVERIFY(restoreVlanTag(tagged, taggedHeader, 42, 0).ok());
    QVERIFY(completeChecksum(tagged, taggedHeader).ok());
    QCOMPARE(tagged.sliced(l4Start + 4), frame.sliced(l4Start));
}

void TestEthernetFrame::refusesSctpOffset()
{
    const QByteArray sctp = sctpPacket();
    QByteArray frame = kMacs + hex("0800") + ipv4Header(132, sctp.size()) + sctp;
    VnetHeader header;
    header.flags = VnetHeader::kNeedsCsum;
    header.csumStart = 34;
    header.csumOffset = 6;
    const QByteArray before = frame;
    const VnetHeader headerBefore = header;
    const Status status = completeChecksum(frame, header);
    QVERIFY(!status.ok());
    QVERIFY2(status.error().message.contains(QStringLiteral("checksum offset 6")),
        qPrintable(status.error().message));
    QCOMPARE(frame, before);
    QCOMPARE(header, headerBefore);
}

void TestEthernetFrame::refusesOutOfRange_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<quint16>("start");
    QTest::addColumn<quint16>("offset");
    QTest::addColumn<QString>("message");

    const QByteArray udp = udp4(payload(10, 1)).frame; // 52 bytes
    QCOMPARE(udp.size(), 52);
    QTest::newRow("start past the end")
        << udp << quint16(53) << quint16(6) << "checksum start 53 lies outside the 52-byte frame";
    QTest::newRow("start far past the end")
        << udp << quint16(0xffff) << quint16(0xffff) << "checksum start 65535 lies outside";
    QTest::newRow("start at the end")
        << udp << quint16(52) << quint16(0) << "2-byte checksum field at 52 (start 52 + offset 0)";
    QTest::newRow("field half outside")
        << udp << quint16(34) << quint16(17)
        << "2-byte checksum field at 51 (start 34 + offset 17) does not fit in the 52-byte frame";
    QTest::newRow("offset far out")
        << udp << quint16(34) << quint16(0xffff) << "field at 65569 (start 34 + offset 65535)";

    const QByteArray sctp = sctpPacket().first(11);
    QTest::newRow("SCTP field half outside")
        << kMacs + hex("0800") + ipv4Header(132, sctp.size()) + sctp << quint16(34) << quint16(8)
        << "4-byte checksum field at 42 (start 34 + offset 8) does not fit in the 45-byte frame";
}

void TestEthernetFrame::refusesOutOfRange()
{
    QFETCH(QByteArray, frame);
    QFETCH(quint16, start);
    QFETCH(quint16, offset);
    QFETCH(QString, message);

    VnetHeader header;
    header.flags = VnetHeader::kNeedsCsum;
    header.csumStart = start;
    header.csumOffset = offset;
    const QByteArray before = frame;
    const VnetHeader headerBefore = header;
    const Status status = completeChecksum(frame, header);
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("invalid_ethernet_frame"));
    QVERIFY2(status.error().message.contains(message), qPrintable(status.error().message));
    QCOMPARE(frame, before);
    QCOMPARE(header, headerBefore);
}

void TestEthernetFrame::leavesGsoAlone_data()
{
    QTest::addColumn<quint8>("gsoType");
    QTest::newRow("TCPv4") << VnetHeader::kGsoTcpV4;
    QTest::newRow("TCPv4 ECN") << quint8(VnetHeader::kGsoTcpV4 | VnetHeader::kGsoEcn);
    QTest::newRow("TCPv6") << VnetHeader::kGsoTcpV6;
    QTest::newRow("UDP") << VnetHeader::kGsoUdp;
    QTest::newRow("UDP L4") << VnetHeader::kGsoUdpL4;
}

void TestEthernetFrame::leavesGsoAlone()
{
    QFETCH(quint8, gsoType);
    PartialFrame p = tcp4(payload(4000, 1));
    p.header.gsoType = gsoType;
    p.header.gsoSize = 1448;
    p.header.hdrLen = 54;
    const QByteArray before = p.frame;
    const VnetHeader headerBefore = p.header;
    QVERIFY(completeChecksum(p.frame, p.header).ok());
    QCOMPARE(p.frame, before);
    QCOMPARE(p.header, headerBefore);

    // Even with offsets that would be refused for a plain frame.
    p.header.csumStart = 0xffff;
    QVERIFY(completeChecksum(p.frame, p.header).ok());
}

void TestEthernetFrame::leavesCompleteFramesAlone()
{
    for (const quint8 flags : { quint8(0), VnetHeader::kDataValid }) {
        PartialFrame p = udp4(payload(20, 1));
        p.header.flags = flags;
        p.header.csumStart = 0xffff; // not looked at without NEEDS_CSUM
        const QByteArray before = p.frame;
        const VnetHeader headerBefore = p.header;
        QVERIFY(completeChecksum(p.frame, p.header).ok());
        QCOMPARE(p.frame, before);
        QCOMPARE(p.header, headerBefore);
    }
    QByteArray empty;
    VnetHeader none;
    QVERIFY(completeChecksum(empty, none).ok());
}

QTEST_GUILESS_MAIN(TestEthernetFrame)
#include "tst_ethernetframe.moc"
