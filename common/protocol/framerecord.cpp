#include "common/protocol/framerecord.h"

#include <cstring>
#include <utility>

#include <QString>
#include <QtEndian>

namespace cloop::protocol {

using device::l2::VnetHeader;

namespace {

Error malformed(const QString &what)
{
    return Error::make(QStringLiteral("malformed_frame_record"), what);
}

void writeHead(char *head, const VnetHeader &header, qsizetype frameSize)
{
    qToBigEndian(static_cast<quint32>(VnetHeader::kSize + frameSize), head);
    header.writeTo(head + kFrameRecordLengthBytes);
}

} // namespace

Status validateFrameRecord(QByteArrayView frame)
{
    if (frame.size() < device::l2::kEthernetHeaderBytes)
        return malformed(
            QStringLiteral("a %1-byte frame is shorter than an Ethernet header").arg(frame.size()));
    if (frame.size() > device::l2::kMaxFrameBytes)
        return malformed(QStringLiteral("a %1-byte frame exceeds the %2-byte limit")
                             .arg(frame.size())
                             .arg(device::l2::kMaxFrameBytes));
    return {};
}

void appendFrameRecord(QByteArray &out, const VnetHeader &header, QByteArrayView frame)
{
    Q_ASSERT(validateFrameRecord(frame).ok());
    char head[kFrameRecordLengthBytes + VnetHeader::kSize];
    writeHead(head, header, frame.size());
    out.append(head, sizeof head);
    out.append(frame);
}

QByteArray encodeFrameRecord(const VnetHeader &header, QByteArrayView frame)
{
    QByteArray out;
    out.reserve(kFrameRecordLengthBytes + VnetHeader::kSize + frame.size());
    appendFrameRecord(out, header, frame);
    return out;
}

Result<qsizetype> FrameRecordDecoder::checkLength(const char *lengthBytes) const
{
    const quint32 length = qFromBigEndian<quint32>(lengthBytes);
    if (length < quint32(kMinFrameRecordBody))
        return malformed(QStringLiteral("frame record at stream byte %1 declares %2 bytes, "
                                        "fewer than the %3 of a vnet header and an Ethernet "
                                        "header")
                             .arg(m_consumed)
                             .arg(length)
                             .arg(kMinFrameRecordBody));
    if (length > quint32(kMaxFrameRecordBody))
        return malformed(QStringLiteral("frame record at stream byte %1 declares %2 bytes, "
                                        "more than the %3-byte limit")
                             .arg(m_consumed)
                             .arg(length)
                             .arg(kMaxFrameRecordBody));
    return qsizetype(length);
}

void FrameRecordDecoder::complete(const char *head, QByteArray frame)
{
    auto header
        = VnetHeader::parse(QByteArrayView(head + kFrameRecordLengthBytes, VnetHeader::kSize));
    Q_ASSERT(header.ok());
    m_consumed += quint64(kHeadBytes + frame.size());
    m_records.append(FrameRecord { *header, std::move(frame) });
}

Status FrameRecordDecoder::fail(Error error)
{
    m_headFill = 0;
    m_frameSize = 0;
    m_frame = QByteArray();
    m_error = std::move(error);
    return *m_error;
}

Status FrameRecordDecoder::feed(QByteArrayView bytes)
{
    if (m_error)
        return *m_error;
    while (!bytes.isEmpty()) {
        // Fast path: a whole record in what is left of the chunk.
        if (m_headFill == 0 && bytes.size() >= kFrameRecordLengthBytes) {
            const auto body = checkLength(bytes.data());
            if (!body)
                return fail(body.error());
            const qsizetype total = kFrameRecordLengthBytes + *body;
            if (bytes.size() >= total) {
                complete(bytes.data(), bytes.sliced(kHeadBytes, total - kHeadBytes).toByteArray());
                bytes = bytes.sliced(total);
                continue;
            }
        }
        // Slow path: gather an incomplete record, length and vnet header first.
        if (m_headFill < kHeadBytes) {
            const bool hadLength = m_headFill >= kFrameRecordLengthBytes;
            const qsizetype take = qMin(kHeadBytes - m_headFill, bytes.size());
            std::memcpy(m_head + m_headFill, bytes.data(), static_cast<size_t>(take));
            m_headFill += take;
            bytes = bytes.sliced(take);
            if (!hadLength && m_headFill >= kFrameRecordLengthBytes) {
                const auto body = checkLength(m_head);
                if (!body)
                    return fail(body.error());
                m_frameSize = *body - VnetHeader::kSize;
            }
            if (m_headFill < kHeadBytes)
                break;
            m_frame.reserve(m_frameSize);
        }
        const qsizetype take = qMin(m_frameSize - m_frame.size(), bytes.size());
        m_frame.append(bytes.first(take));
        bytes = bytes.sliced(take);
        if (m_frame.size() == m_frameSize) {
            complete(m_head, std::exchange(m_frame, QByteArray()));
            m_headFill = 0;
            m_frameSize = 0;
        }
    }
    return {};
}

bool FrameRecordDecoder::next(FrameRecord &out)
{
    if (m_taken >= m_records.size())
        return false;
    out = std::move(m_records[m_taken]);
    ++m_taken;
    if (m_taken == m_records.size()) {
        // Keeps the list's capacity for the next feed.
        m_records.clear();
        m_taken = 0;
    }
    return true;
}

QList<FrameRecord> FrameRecordDecoder::takeRecords()
{
    if (m_taken > 0) {
        m_records.remove(0, m_taken);
        m_taken = 0;
    }
    return std::exchange(m_records, {});
}

} // namespace cloop::protocol
