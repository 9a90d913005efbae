#include "common/device/l2/ethernetframe.h"

#include <array>
#include <cstring>
#include <optional>

#include <QString>
#include <QtEndian>

namespace cloop::device::l2 {

namespace {

constexpr quint16 kEtherTypeIpv4 = 0x0800;
constexpr quint16 kEtherTypeIpv6 = 0x86dd;
constexpr quint16 kTpid8021Q = 0x8100;
constexpr quint16 kTpid8021ad = 0x88a8;
constexpr quint16 kTpidQinQLegacy = 0x9100;
constexpr qsizetype kMacAddressesBytes = 12;
constexpr quint8 kIpProtocolSctp = 132;
constexpr quint16 kSctpChecksumOffset = 8;

Error invalid(const QString &what)
{
    return Error::make(QStringLiteral("invalid_ethernet_frame"), what);
}

quint8 byteAt(QByteArrayView bytes, qsizetype at)
{
    return static_cast<quint8>(bytes[at]);
}

quint16 be16At(QByteArrayView bytes, qsizetype at)
{
    return qFromBigEndian<quint16>(bytes.data() + at);
}

bool isTagProtocol(quint16 etherType)
{
    return etherType == kTpid8021Q || etherType == kTpid8021ad || etherType == kTpidQinQLegacy;
}

// The IP protocol the frame's network header names for its transport
// header, or nothing for frames that are not IP or too short to say. The
// vnet header only gives offsets, and SCTP is the one protocol whose
// offloaded checksum is not the Internet checksum.
std::optional<quint8> transportProtocol(QByteArrayView frame)
{
    if (frame.size() < kEthernetHeaderBytes)
        return std::nullopt;
    qsizetype at = kMacAddressesBytes;
    quint16 etherType = be16At(frame, at);
    // Each tag moves on by 4 bytes, so the frame's length bounds the loop.
    while (isTagProtocol(etherType)) {
        at += kVlanTagBytes;
        if (at + 2 > frame.size())
            return std::nullopt;
        etherType = be16At(frame, at);
    }
    at += 2;

    if (etherType == kEtherTypeIpv4) {
        if (at + 20 > frame.size() || (byteAt(frame, at) >> 4) != 4)
            return std::nullopt;
        return byteAt(frame, at + 9);
    }
    if (etherType != kEtherTypeIpv6)
        return std::nullopt;
    if (at + 40 > frame.size() || (byteAt(frame, at) >> 4) != 6)
        return std::nullopt;
    quint8 next = byteAt(frame, at + 6);
    at += 40;
    // Extension headers always advance by at least 8 bytes: bounded too.
    for (;;) {
        switch (next) {
        case 0: // hop-by-hop options
        case 43: // routing
        case 60: // destination options
            if (at + 2 > frame.size())
                return std::nullopt;
            next = byteAt(frame, at);
            at += (qsizetype(byteAt(frame, at + 1)) + 1) * 8;
            break;
        case 44: // fragment
            if (at + 8 > frame.size())
                return std::nullopt;
            next = byteAt(frame, at);
            at += 8;
            break;
        case 51: // authentication header counts in 4-byte units, minus 2
            if (at + 2 > frame.size())
                return std::nullopt;
            next = byteAt(frame, at);
            at += (qsizetype(byteAt(frame, at + 1)) + 2) * 4;
            break;
        default:
            return next;
        }
    }
}

void addWithCarry(quint64 &sum, quint64 word)
{
    sum += word;
    sum += sum < word ? 1 : 0;
}

// The ones'-complement sum of the bytes as big-endian 16-bit words, an odd
// last byte padded with zero (RFC 1071). Works on 64-bit words in host
// order: 2^64 and 2^16 are both 1 modulo 2^16 - 1, and a sum taken with
// every word's bytes swapped is the byte-swapped sum, so one swap at the end
// gives the big-endian result at a fraction of the cost of 16-bit steps.
quint16 onesComplementSum(QByteArrayView bytes)
{
    const char *p = bytes.data();
    qsizetype left = bytes.size();
    quint64 sum = 0;
    while (left >= 8) {
        quint64 word;
        std::memcpy(&word, p, sizeof word);
        addWithCarry(sum, word);
        p += 8;
        left -= 8;
    }
    if (left > 0) {
        // Zeros after the data are exactly the padding the RFC asks for.
        char tail[8] = {};
        std::memcpy(tail, p, static_cast<size_t>(left));
        quint64 word;
        std::memcpy(&word, tail, sizeof word);
        addWithCarry(sum, word);
    }
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffu) + (sum >> 16);
    sum = (sum & 0xffffu) + (sum >> 16);
    return qFromBigEndian(static_cast<quint16>(sum));
}

constexpr std::array<quint32, 256> makeCrc32cTable()
{
    std::array<quint32, 256> table {};
    for (quint32 i = 0; i < 256; ++i) {
        quint32 crc = i;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc >> 1) ^ ((crc & 1u) ? 0x82f63b78u : 0u);
        table[i] = crc;
    }
    return table;
}

constexpr std::array<quint32, 256> kCrc32cTable = makeCrc32cTable();

} // namespace

Result<VnetHeader> VnetHeader::parse(QByteArrayView bytes)
{
    if (bytes.size() < kSize)
        return invalid(
            QStringLiteral("a virtio_net_hdr is %1 bytes, got %2").arg(kSize).arg(bytes.size()));
    const char *p = bytes.data();
    VnetHeader header;
    header.flags = static_cast<quint8>(p[0]);
    header.gsoType = static_cast<quint8>(p[1]);
    header.hdrLen = qFromLittleEndian<quint16>(p + 2);
    header.gsoSize = qFromLittleEndian<quint16>(p + 4);
    header.csumStart = qFromLittleEndian<quint16>(p + 6);
    header.csumOffset = qFromLittleEndian<quint16>(p + 8);
    return header;
}

void VnetHeader::writeTo(char *out) const
{
    out[0] = static_cast<char>(flags);
    out[1] = static_cast<char>(gsoType);
    qToLittleEndian(hdrLen, out + 2);
    qToLittleEndian(gsoSize, out + 4);
    qToLittleEndian(csumStart, out + 6);
    qToLittleEndian(csumOffset, out + 8);
}

void VnetHeader::appendTo(QByteArray &out) const
{
    char bytes[kSize];
    writeTo(bytes);
    out.append(bytes, kSize);
}

Status restoreVlanTag(QByteArray &frame, VnetHeader &header, quint16 tci, quint16 tpid)
{
    if (frame.size() < kEthernetHeaderBytes)
        return invalid(QStringLiteral("cannot insert a VLAN tag into a %1-byte frame: "
                                      "an Ethernet header alone is %2 bytes")
                           .arg(frame.size())
                           .arg(kEthernetHeaderBytes));
    if (frame.size() > kMaxFrameBytes - kVlanTagBytes)
        return invalid(QStringLiteral("a VLAN tag would grow the %1-byte frame beyond %2 bytes")
                           .arg(frame.size())
                           .arg(kMaxFrameBytes));
    const bool movesStart = header.needsChecksum() || header.isGso();
    const bool movesHdrLen = header.isGso() && header.hdrLen != 0;
    if (movesStart && header.csumStart > 0xffff - kVlanTagBytes)
        return invalid(QStringLiteral("checksum start %1 cannot move past a VLAN tag "
                                      "within 16 bits")
                           .arg(header.csumStart));
    if (movesHdrLen && header.hdrLen > 0xffff - kVlanTagBytes)
        return invalid(QStringLiteral("GSO header length %1 cannot grow by a VLAN tag "
                                      "within 16 bits")
                           .arg(header.hdrLen));

    char tag[kVlanTagBytes];
    qToBigEndian(tpid != 0 ? tpid : kTpid8021Q, tag);
    qToBigEndian(tci, tag + 2);
    frame.insert(kMacAddressesBytes, QByteArrayView(tag, kVlanTagBytes));
    if (movesStart)
        header.csumStart = static_cast<quint16>(header.csumStart + kVlanTagBytes);
    if (movesHdrLen)
        header.hdrLen = static_cast<quint16>(header.hdrLen + kVlanTagBytes);
    return {};
}

Status completeChecksum(QByteArray &frame, VnetHeader &header)
{
    if (!header.needsChecksum() || header.isGso())
        return {};

    const qsizetype start = header.csumStart;
    if (start > frame.size())
        return invalid(QStringLiteral("checksum start %1 lies outside the %2-byte frame")
                           .arg(start)
                           .arg(frame.size()));
    const bool sctp = transportProtocol(frame) == kIpProtocolSctp;
    if (sctp && header.csumOffset != kSctpChecksumOffset)
        return invalid(QStringLiteral("SCTP frame with checksum offset %1: "
                                      "the SCTP checksum field sits at offset %2")
                           .arg(header.csumOffset)
                           .arg(kSctpChecksumOffset));
    const qsizetype field = start + header.csumOffset;
    const qsizetype width = sctp ? 4 : 2;
    if (field + width > frame.size())
        return invalid(QStringLiteral("the %1-byte checksum field at %2 (start %3 + offset %4) "
                                      "does not fit in the %5-byte frame")
                           .arg(width)
                           .arg(field)
                           .arg(start)
                           .arg(header.csumOffset)
                           .arg(frame.size()));

    char *data = frame.data();
    if (sctp) {
        // The receiver checks the CRC with the field read as zero.
        std::memset(data + field, 0, 4);
        const quint32 crc = crc32c(QByteArrayView(data + start, frame.size() - start));
        qToLittleEndian(crc, data + field);
    } else {
        const quint16 sum = onesComplementSum(QByteArrayView(data + start, frame.size() - start));
        const auto checksum = static_cast<quint16>(~sum);
        qToBigEndian(static_cast<quint16>(checksum != 0 ? checksum : 0xffff), data + field);
    }
    header.flags
        = static_cast<quint8>((header.flags & ~VnetHeader::kNeedsCsum) | VnetHeader::kDataValid);
    header.csumStart = 0;
    header.csumOffset = 0;
    return {};
}

quint32 crc32c(QByteArrayView bytes, quint32 previous)
{
    quint32 crc = ~previous;
    for (const char c : bytes)
        crc = kCrc32cTable[(crc ^ static_cast<quint8>(c)) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

} // namespace cloop::device::l2
