// libFuzzer target: the incremental decoder of layer-2 frame records, and
// the VLAN and checksum helpers on every frame it decodes.
//
// Input: byte 0 says how many chunk-size bytes follow (its low 4 bits; 0 =
// feed everything at once); each of those bytes s gives a chunk of 1 + s*s
// bytes (1 .. 65026), used in turn and cyclically; the rest is the stream.
//
// Decoder invariants: no crash; decoded frames are within the record
// bounds; re-encoding the records reproduces the consumed prefix byte for
// byte; at most one record is buffered and no more space than its frame is
// reserved; chunking changes neither records nor verdict.
//
// Frame invariants, on copies, with the tag taken from the record's own
// header fields: restoreVlanTag either refuses and changes nothing or
// inserts exactly 4 bytes at 12 and moves the offsets as documented;
// completeChecksum either refuses and changes nothing, or changes nothing
// for frames it leaves alone, or changes only the checksum field, which
// then verifies (Internet checksum or CRC32c); and tagging before
// completing gives the same bytes after the tag as completing untagged.

#include <cstddef>
#include <cstdint>

#include <QtEndian>

#include "common/device/l2/ethernetframe.h"
#include "common/protocol/framerecord.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::fuzz::ChunkedInput;
using namespace cloop::protocol;
using namespace cloop::device::l2;

namespace {

quint16 sum16(QByteArrayView bytes)
{
    quint32 sum = 0;
    for (qsizetype i = 0; i < bytes.size(); i += 2) {
        const quint32 high = static_cast<quint8>(bytes[i]);
        const quint32 low = i + 1 < bytes.size() ? static_cast<quint8>(bytes[i + 1]) : 0;
        sum += (high << 8) | low;
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return static_cast<quint16>(sum);
}

quint16 onesAdd(quint16 a, quint16 b)
{
    const quint32 sum = quint32(a) + b;
    return static_cast<quint16>((sum & 0xffff) + (sum >> 16));
}

bool sameOutside(QByteArrayView a, QByteArrayView b, qsizetype from, qsizetype to)
{
    return a.size() == b.size() && a.first(from) == b.first(from) && a.sliced(to) == b.sliced(to);
}

void checkCompletion(const FrameRecord &record)
{
    const VnetHeader before = record.header;
    QByteArray frame = record.frame;
    VnetHeader header = before;
    const bool ok = completeChecksum(frame, header).ok();
    const bool acts = before.needsChecksum() && !before.isGso();
    if (!ok || !acts) {
        check(acts || ok, "frames left alone are not refused");
        check(frame == record.frame && header == before,
            "a refused or left-alone frame is unchanged");
        return;
    }
    check((header.flags & VnetHeader::kNeedsCsum) == 0
            && (header.flags & VnetHeader::kDataValid) != 0,
        "a completed frame says DATA_VALID and not NEEDS_CSUM");
    check(header.csumStart == 0 && header.csumOffset == 0 && header.gsoType == before.gsoType
            && header.hdrLen == before.hdrLen && header.gsoSize == before.gsoSize,
        "completion clears the offsets and nothing else");

    const qsizetype start = before.csumStart;
    const qsizetype field = start + before.csumOffset;
    check(field + 2 <= frame.size(), "a completed field lies in the frame");
    const QByteArrayView done(frame);
    const QByteArrayView seeded(record.frame);
    if (sameOutside(done, seeded, field, field + 2)) {
        // The seed and what completion adds cancel out: the completed
        // segment plus the seed sums to all ones.
        const quint16 seed = qFromBigEndian<quint16>(seeded.data() + field);
        // Only for a field on a 16-bit boundary of the segment: at an odd
        // offset the field straddles two words and the identity does not
        // hold (the kernel writes such a field just the same).
        const bool verifies
            = before.csumOffset % 2 != 0 || onesAdd(sum16(done.sliced(start)), seed) == 0xffff;
        const bool crcVerifies = before.csumOffset == 8 && field + 4 <= frame.size() && [&] {
            QByteArray zeroed = frame.sliced(start);
            zeroed.replace(8, 4, QByteArray(4, '\0'));
            return crc32c(zeroed) == qFromLittleEndian<quint32>(done.data() + field);
        }();
        check(verifies || crcVerifies, "a completed Internet checksum verifies");
        check(qFromBigEndian<quint16>(done.data() + field) != 0 || crcVerifies,
            "a completed Internet checksum is never written as 0");
    } else {
        check(before.csumOffset == 8 && field + 4 <= frame.size()
                && sameOutside(done, seeded, field, field + 4),
            "completion changes only the checksum field");
        QByteArray zeroed = frame.sliced(start);
        zeroed.replace(8, 4, QByteArray(4, '\0'));
        check(crc32c(zeroed) == qFromLittleEndian<quint32>(done.data() + field),
            "a completed SCTP CRC32c verifies");
    }
}

void checkTagging(const FrameRecord &record)
{
    const VnetHeader before = record.header;
    const auto tci = static_cast<quint16>(before.gsoSize ^ before.csumOffset);
    const quint16 tpid = (before.flags & 0x80) != 0 ? before.hdrLen
        : (before.flags & 0x40) != 0                ? quint16(0x88a8)
                                                    : quint16(0);
    QByteArray tagged = record.frame;
    VnetHeader header = before;
    if (!restoreVlanTag(tagged, header, tci, tpid).ok()) {
        check(tagged == record.frame && header == before, "a refused tag changes nothing");
        return;
    }
    check(tagged.size() == record.frame.size() + 4, "a tag adds 4 bytes");
    check(tagged.size() <= kMaxFrameBytes, "a tagged frame stays within the limit");
    check(
        tagged.first(12) == record.frame.first(12) && tagged.sliced(16) == record.frame.sliced(12),
        "the tag goes after the MAC addresses and nothing else moves");
    check(qFromBigEndian<quint16>(tagged.constData() + 12) == (tpid != 0 ? tpid : 0x8100)
            && qFromBigEndian<quint16>(tagged.constData() + 14) == tci,
        "the tag is TPID then TCI, big-endian");
    const bool moves = before.needsChecksum() || before.isGso();
    check(header.csumStart == (moves ? before.csumStart + 4 : before.csumStart),
        "csumStart moves with the tag exactly when it means something");
    const bool hdrMoves = before.isGso() && before.hdrLen != 0;
    check(header.hdrLen == (hdrMoves ? before.hdrLen + 4 : before.hdrLen),
        "hdrLen moves with the tag for GSO frames that give it");
    check(header.flags == before.flags && header.gsoType == before.gsoType
            && header.gsoSize == before.gsoSize && header.csumOffset == before.csumOffset,
        "a tag changes no other header field");

    // A checksum over the MAC addresses has no tagged equivalent, and a
    // TPID that is no tag protocol hides the IP header (and SCTP with it).
    const quint16 tagProtocol = tpid != 0 ? tpid : 0x8100;
    if (before.csumStart < 12
        || (tagProtocol != 0x8100 && tagProtocol != 0x88a8 && tagProtocol != 0x9100))
        return;
    QByteArray untagged = record.frame;
    VnetHeader untaggedHeader = before;
    const bool untaggedOk = completeChecksum(untagged, untaggedHeader).ok();
    const bool taggedOk = completeChecksum(tagged, header).ok();
    check(untaggedOk == taggedOk, "a tag does not change whether completion works");
    if (untaggedOk)
        check(tagged.sliced(16) == untagged.sliced(12),
            "completing after tagging gives the same bytes as completing untagged");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ChunkedInput input(QByteArrayView(data, static_cast<qsizetype>(size)));
    const QByteArrayView stream = input.stream();

    FrameRecordDecoder chunked;
    QList<FrameRecord> records;
    input.forEachChunk([&](QByteArrayView bytes, qsizetype index, qsizetype fed) {
        const bool ok = chunked.feed(bytes).ok();
        // Alternate the two ways of taking records.
        if (index % 2 == 0) {
            records += chunked.takeRecords();
        } else {
            FrameRecord record;
            while (chunked.next(record))
                records.append(std::move(record));
        }
        check(chunked.bufferedBytes() < kMaxFrameRecordBytes,
            "the decoder buffers less than one whole record");
        check(chunked.reservedBytes() <= kMaxFrameBytes + 64,
            "the decoder reserves no more than one frame");
        if (!ok)
            return false;
        check(chunked.consumedBytes() + quint64(chunked.bufferedBytes()) == quint64(fed),
            "a healthy decoder accounts for every byte fed");
        return true;
    });
    check(!chunked.hasRecords(), "every record was taken");
    check(chunked.failed()
            || chunked.consumedBytes() + quint64(chunked.bufferedBytes()) == quint64(stream.size()),
        "a decoder that did not fail took the whole stream");
    if (chunked.failed()) {
        check(chunked.bufferedBytes() == 0 && chunked.reservedBytes() == 0,
            "a failed decoder holds nothing");
        check(!chunked.feed(stream.first(qMin(stream.size(), qsizetype(20)))).ok(),
            "a failed decoder stays failed");
    }

    QByteArray encoded;
    for (const FrameRecord &record : records) {
        check(validateFrameRecord(record.frame).ok(), "decoded frames are within bounds");
        appendFrameRecord(encoded, record.header, record.frame);
    }
    cloop::fuzz::checkAgainstWholeDecoding(stream, chunked, records, encoded);

    for (const FrameRecord &record : records) {
        checkCompletion(record);
        checkTagging(record);
    }
    return 0;
}
