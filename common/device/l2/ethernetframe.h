#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QByteArrayView>

namespace cloop::device::l2 {

// The pure byte work of the layer-2 path, kept apart from the sockets so it
// can be tested and fuzzed on hand-built frames: the virtio_net_hdr that
// AF_PACKET (PACKET_VNET_HDR) and TAP (IFF_VNET_HDR) put before each frame,
// re-inserting the VLAN tag AF_PACKET moved out of a received frame, and
// finishing a checksum the sender left to offload.

inline constexpr qsizetype kEthernetHeaderBytes = 14;
inline constexpr qsizetype kVlanTagBytes = 4;
// A GSO frame carries up to 64 KiB of IP packet; add the Ethernet header
// and one re-inserted tag.
inline constexpr qsizetype kMaxFrameBytes = 65535 + kEthernetHeaderBytes + kVlanTagBytes;

// struct virtio_net_hdr without num_buffers (the 10-byte default of both
// AF_PACKET and TAP). The kernel uses native byte order, little-endian on
// every target we run on; encoding it explicitly keeps the wire format the
// same should a big-endian host ever take part.
struct VnetHeader
{
    static constexpr qsizetype kSize = 10;

    static constexpr quint8 kNeedsCsum = 0x01;
    static constexpr quint8 kDataValid = 0x02;

    static constexpr quint8 kGsoNone = 0;
    static constexpr quint8 kGsoTcpV4 = 1;
    static constexpr quint8 kGsoUdp = 3;
    static constexpr quint8 kGsoTcpV6 = 4;
    static constexpr quint8 kGsoUdpL4 = 5;
    static constexpr quint8 kGsoEcn = 0x80;

    quint8 flags = 0;
    quint8 gsoType = kGsoNone;
    quint16 hdrLen = 0; // Ethernet + IP + L4 header bytes of a GSO frame; 0 = not given
    quint16 gsoSize = 0; // payload bytes per segment
    quint16 csumStart = 0; // where the L4 checksum coverage begins, from the frame start
    quint16 csumOffset = 0; // where the checksum field sits, from csumStart

    // Reads the first kSize bytes; anything after them is not looked at.
    // Field values are not judged: the kernel that finally gets the frame
    // does that, and knows its own limits.
    static Result<VnetHeader> parse(QByteArrayView bytes);
    void appendTo(QByteArray &out) const;
    // Writes exactly kSize bytes, for callers filling a buffer they sized.
    void writeTo(char *out) const;

    bool needsChecksum() const { return (flags & kNeedsCsum) != 0; }
    bool isGso() const { return (gsoType & ~kGsoEcn) != kGsoNone; }

    friend bool operator==(const VnetHeader &, const VnetHeader &) = default;
};

// Puts a tag AF_PACKET moved into auxdata back into the frame: TPID then
// TCI, big-endian, after the two MAC addresses. `tpid` 0 stands for 0x8100
// (auxdata without TP_STATUS_VLAN_TPID_VALID). The kernel counted
// csumStart (and a GSO frame's hdrLen) on the untagged frame, so both move
// by 4 with the bytes; an hdrLen of 0 says nothing and stays 0.
// Refused, leaving frame and header as they were: a frame shorter than an
// Ethernet header, one that would grow beyond kMaxFrameBytes, or an offset
// that would leave 16 bits.
Status restoreVlanTag(QByteArray &frame, VnetHeader &header, quint16 tci, quint16 tpid = 0);

// Finishes what checksum offload would have done for a NEEDS_CSUM frame, so
// a receiver that is not told about it (a segment without offload, a frame
// later forwarded as is) sees a valid L4 checksum; the header then says
// DATA_VALID with csumStart/csumOffset 0, as the kernel writes for a
// checked frame. Untouched, and not an error: frames without NEEDS_CSUM,
// and GSO frames, whose receiving kernel computes each segment's checksum
// while segmenting.
//
// Internet checksum (TCP, UDP, ICMPv6, ...), as skb_checksum_help: the
// ones'-complement sum of [csumStart, end) including the seeded field,
// complemented, stored big-endian at csumStart + csumOffset, a result of 0
// written as 0xFFFF for every protocol. The kernel does the same
// (CSUM_MANGLED_0 without looking at the protocol): UDP needs it (0 means
// "no checksum") and for TCP 0xFFFF is the other ones'-complement zero, so
// it verifies exactly like 0.
//
// SCTP (IP protocol 132, read through the Ethernet, 802.1Q/802.1ad, IPv4 or
// IPv6 headers and IPv6 extension headers) uses CRC32c over
// [csumStart, end) with the field as zero, stored little-endian at
// csumStart + 8 (any other csumOffset is refused).
//
// Refused, leaving frame and header as they were: csumStart or the field
// outside the frame.
Status completeChecksum(QByteArray &frame, VnetHeader &header);

// CRC32c (Castagnoli, reflected, as SCTP and iSCSI use it). `previous`
// continues an earlier call's result over following bytes; 0 starts anew.
quint32 crc32c(QByteArrayView bytes, quint32 previous = 0);

} // namespace cloop::device::l2
