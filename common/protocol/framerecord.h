#pragma once

#include "common/device/l2/ethernetframe.h"
#include "common/result.h"

#include <optional>

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace cloop::protocol {

// Ethernet frames as they travel on a layer-2 device channel: a sequence of
// records
//
//   u32 length   big-endian: L, the bytes that follow,
//                kMinFrameRecordBody .. kMaxFrameRecordBody
//   ... 10 bytes virtio_net_hdr (device::l2::VnetHeader, little-endian)
//   ... L - 10 bytes Ethernet frame, header included
//
// The vnet header travels with every frame so GSO and checksum-offload
// frames cross the tunnel whole and the far kernel finishes them.
inline constexpr qsizetype kFrameRecordLengthBytes = 4;
inline constexpr qsizetype kMinFrameRecordBody
    = device::l2::VnetHeader::kSize + device::l2::kEthernetHeaderBytes;
inline constexpr qsizetype kMaxFrameRecordBody
    = device::l2::VnetHeader::kSize + device::l2::kMaxFrameBytes;
inline constexpr qsizetype kMaxFrameRecordBytes = kFrameRecordLengthBytes + kMaxFrameRecordBody;

struct FrameRecord
{
    device::l2::VnetHeader header;
    QByteArray frame;

    friend bool operator==(const FrameRecord &, const FrameRecord &) = default;
};

// Whether a frame may be encoded: at least an Ethernet header, at most
// device::l2::kMaxFrameBytes (a receive path that lets bigger GRO frames
// through must drop them here rather than send what the far side refuses).
Status validateFrameRecord(QByteArrayView frame);

// Precondition: validateFrameRecord(frame) holds (asserted in debug builds).
QByteArray encodeFrameRecord(const device::l2::VnetHeader &header, QByteArrayView frame);
// Appends without reserving, so many appends to one buffer keep the
// container's amortised growth.
void appendFrameRecord(QByteArray &out, const device::l2::VnetHeader &header, QByteArrayView frame);

// Incremental decoder: feed the bytes as they arrive, in chunks of any size,
// and take the complete records with next() or takeRecords(). A length out
// of bounds fails the decoder for good (every later feed() returns the same
// error); records completed before the fault stay available.
//
// Hot path: whole records in a chunk are copied once, straight into their
// frame; only an incomplete record's bytes are held back, and they are
// appended where the rest will arrive, so no byte is ever moved twice and
// nothing is shifted. Memory: the records not yet taken plus at most one
// incomplete record; a length is checked as soon as its 4 bytes are in, and
// only a valid one reserves space.
class FrameRecordDecoder
{
public:
    Status feed(QByteArrayView bytes);

    bool next(FrameRecord &out);
    QList<FrameRecord> takeRecords();
    bool hasRecords() const { return m_taken < m_records.size(); }

    bool failed() const { return m_error.has_value(); }
    // Only valid when failed().
    const Error &error() const { return *m_error; }

    // Bytes of complete records decoded so far (taken or not).
    quint64 consumedBytes() const { return m_consumed; }
    // Bytes of an incomplete record waiting for the rest.
    qsizetype bufferedBytes() const { return m_headFill + m_frame.size(); }
    // Space held for the incomplete record's frame (bounded by kMaxFrameBytes).
    qsizetype reservedBytes() const { return m_frame.capacity(); }

private:
    static constexpr qsizetype kHeadBytes = kFrameRecordLengthBytes + device::l2::VnetHeader::kSize;

    Result<qsizetype> checkLength(const char *lengthBytes) const;
    void complete(const char *head, QByteArray frame);
    Status fail(Error error);

    QList<FrameRecord> m_records;
    qsizetype m_taken = 0; // m_records before this index went out through next()
    // An incomplete record: its length and vnet header gather in m_head,
    // then its frame in m_frame, reserved to the announced size.
    char m_head[kHeadBytes] = {};
    qsizetype m_headFill = 0;
    qsizetype m_frameSize = 0; // valid once m_headFill == kHeadBytes
    QByteArray m_frame;
    std::optional<Error> m_error;
    quint64 m_consumed = 0;
};

} // namespace cloop::protocol
