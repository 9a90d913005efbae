#include "common/net/websocketframes.h"

#include <QCryptographicHash>
#include <QStringDecoder>
#include <QtEndian>

#include <cstring>

namespace cloop::net::websocket {

namespace {

constexpr quint8 kFinal = 0x80;
constexpr quint8 kReserved = 0x70;
constexpr quint8 kOpcodeBits = 0x0F;
constexpr quint8 kMasked = 0x80;
constexpr quint8 kLengthBits = 0x7F;
constexpr quint8 kLength16 = 126;
constexpr quint8 kLength64 = 127;

bool isControl(Opcode opcode)
{
    return static_cast<quint8>(opcode) >= 0x8;
}

bool isKnown(quint8 opcode)
{
    switch (static_cast<Opcode>(opcode)) {
    case Opcode::Continuation:
    case Opcode::Text:
    case Opcode::Binary:
    case Opcode::Close:
    case Opcode::Ping:
    case Opcode::Pong:
        return true;
    }
    return false;
}

// RFC 6455 7.4: what a peer may put in a close frame (1004-1006 and 1015
// are reserved for reporting, never sent).
bool isSendableCloseCode(quint16 code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014)
        || (code >= 3000 && code <= 4999);
}

std::optional<QString> decodeUtf8(QByteArrayView bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder.decode(bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

} // namespace

QByteArray acceptKeyFor(QByteArrayView clientKey)
{
    QCryptographicHash sha1(QCryptographicHash::Sha1);
    sha1.addData(clientKey);
    sha1.addData("258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    return sha1.result().toBase64();
}

void applyMask(char *data, qsizetype size, MaskKey key, quint64 offset)
{
    // The key repeats every four bytes, so a pattern of eight starting at
    // `offset` serves every aligned word and, byte by byte, the tail.
    std::array<quint8, 8> pattern {};
    for (size_t i = 0; i < pattern.size(); ++i)
        pattern[i] = key[(offset + i) % key.size()];
    quint64 word = 0;
    std::memcpy(&word, pattern.data(), sizeof word);
    qsizetype at = 0;
    for (; at + qsizetype(sizeof word) <= size; at += sizeof word) {
        quint64 chunk = 0;
        std::memcpy(&chunk, data + at, sizeof chunk);
        chunk ^= word;
        std::memcpy(data + at, &chunk, sizeof chunk);
    }
    for (; at < size; ++at)
        data[at] = static_cast<char>(data[at] ^ pattern[size_t(at) % pattern.size()]);
}

qsizetype writeHeader(
    FrameHeader &header, Opcode opcode, quint64 length, const MaskKey *mask, bool final)
{
    qsizetype size = 2;
    header[0] = static_cast<quint8>((final ? kFinal : 0) | static_cast<quint8>(opcode));
    const quint8 maskBit = mask ? kMasked : 0;
    if (length < kLength16) {
        header[1] = static_cast<quint8>(maskBit | length);
    } else if (length <= 0xFFFF) {
        header[1] = maskBit | kLength16;
        qToBigEndian(static_cast<quint16>(length), header.data() + 2);
        size += 2;
    } else {
        header[1] = maskBit | kLength64;
        qToBigEndian(length, header.data() + 2);
        size += 8;
    }
    if (mask) {
        std::memcpy(header.data() + size, mask->data(), mask->size());
        size += qsizetype(mask->size());
    }
    return size;
}

void appendFrame(
    QByteArray &out, Opcode opcode, QByteArrayView payload, const MaskKey *mask, bool final)
{
    FrameHeader header {};
    const qsizetype size
        = writeHeader(header, opcode, static_cast<quint64>(payload.size()), mask, final);
    const qsizetype start = out.size();
    out.reserve(start + size + payload.size());
    out.append(reinterpret_cast<const char *>(header.data()), size);
    out.append(payload.data(), payload.size());
    if (mask)
        applyMask(out.data() + start + size, payload.size(), *mask);
}

QByteArray closePayload(quint16 code, const QString &reason)
{
    QByteArray payload(2, Qt::Uninitialized);
    qToBigEndian(code, payload.data());
    QByteArray utf8 = reason.toUtf8();
    qsizetype room = kMaxControlPayload - payload.size();
    if (utf8.size() > room) {
        // Back up to the start of a sequence: continuation bytes are 10xxxxxx.
        while (room > 0 && (static_cast<quint8>(utf8.at(room)) & 0xC0) == 0x80)
            --room;
        utf8.truncate(room);
    }
    payload.append(utf8);
    return payload;
}

MessageReader::MessageReader(Limits limits)
    : m_limits(limits)
{ }

std::optional<ReadFailure> MessageReader::fail(ReadFailure failure)
{
    m_failure = failure;
    m_partial = {};
    m_message = {};
    m_payload = {};
    m_header.reset();
    return failure;
}

std::optional<ReadFailure> MessageReader::readHeader(
    QByteArrayView bytes, std::optional<Header> &header) const
{
    header.reset();
    if (bytes.size() < 2)
        return std::nullopt;
    const auto *data = reinterpret_cast<const quint8 *>(bytes.data());
    Header read;
    if (data[0] & kReserved)
        return ReadFailure { CloseCode::ProtocolError, QStringLiteral("reserved bits set") };
    const quint8 opcode = data[0] & kOpcodeBits;
    if (!isKnown(opcode))
        return ReadFailure { CloseCode::ProtocolError,
            QStringLiteral("unknown opcode 0x%1").arg(opcode, 0, 16) };
    read.final = data[0] & kFinal;
    read.opcode = static_cast<Opcode>(opcode);
    read.masked = data[1] & kMasked;
    const quint8 length = data[1] & kLengthBits;
    qsizetype size = 2;
    if (length == kLength16) {
        if (bytes.size() < size + 2)
            return std::nullopt;
        read.length = qFromBigEndian<quint16>(data + size);
        size += 2;
        if (read.length < kLength16)
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a length not in its shortest form") };
    } else if (length == kLength64) {
        if (bytes.size() < size + 8)
            return std::nullopt;
        read.length = qFromBigEndian<quint64>(data + size);
        size += 8;
        if (read.length >> 63)
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a length with its top bit set") };
        if (read.length <= 0xFFFF)
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a length not in its shortest form") };
    } else {
        read.length = length;
    }
    if (read.masked) {
        if (bytes.size() < size + qsizetype(read.mask.size()))
            return std::nullopt;
        std::memcpy(read.mask.data(), data + size, read.mask.size());
        size += qsizetype(read.mask.size());
    }
    read.size = size;
    header = read;
    return std::nullopt;
}

std::optional<ReadFailure> MessageReader::checkHeader(const Header &header) const
{
    if (header.masked != m_limits.peerMasks)
        return ReadFailure { CloseCode::ProtocolError,
            header.masked ? QStringLiteral("a masked frame from a server")
                          : QStringLiteral("an unmasked frame from a client") };
    if (isControl(header.opcode)) {
        if (!header.final)
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a fragmented control frame") };
        if (header.length > quint64(kMaxControlPayload))
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a control frame of %1 bytes").arg(header.length) };
        return std::nullopt;
    }
    if (header.opcode == Opcode::Continuation && !m_fragmented)
        return ReadFailure { CloseCode::ProtocolError,
            QStringLiteral("a continuation frame outside a message") };
    if (header.opcode != Opcode::Continuation && m_fragmented)
        return ReadFailure { CloseCode::ProtocolError,
            QStringLiteral("a message begun inside another") };
    const auto most = static_cast<quint64>(m_limits.maxMessageBytes);
    const quint64 sofar = header.opcode == Opcode::Continuation ? quint64(m_message.size()) : 0;
    if (header.length > most - std::min(sofar, most))
        return ReadFailure { CloseCode::TooBig,
            QStringLiteral("a message over %1 bytes").arg(m_limits.maxMessageBytes) };
    return std::nullopt;
}

std::optional<ReadFailure> MessageReader::take(
    const Header &header, QByteArray payload, std::vector<Message> &messages)
{
    if (header.masked)
        applyMask(payload.data(), payload.size(), header.mask);

    Message message;
    message.opcode = header.opcode;
    switch (header.opcode) {
    case Opcode::Ping:
    case Opcode::Pong:
        message.payload = std::move(payload);
        messages.push_back(std::move(message));
        return std::nullopt;
    case Opcode::Close: {
        if (payload.size() == 1)
            return ReadFailure { CloseCode::ProtocolError,
                QStringLiteral("a close frame of one byte") };
        if (payload.size() >= 2) {
            message.closeCode = qFromBigEndian<quint16>(payload.constData());
            if (!isSendableCloseCode(message.closeCode))
                return ReadFailure { CloseCode::ProtocolError,
                    QStringLiteral("close code %1").arg(message.closeCode) };
            const auto reason = decodeUtf8(QByteArrayView(payload).sliced(2));
            if (!reason)
                return ReadFailure { CloseCode::InvalidPayload,
                    QStringLiteral("a close reason that is not UTF-8") };
            message.text = *reason;
            message.payload = payload.sliced(2);
        }
        messages.push_back(std::move(message));
        return std::nullopt;
    }
    case Opcode::Text:
    case Opcode::Binary:
        if (!header.final) {
            m_fragmented = header.opcode;
            m_message = std::move(payload);
            return std::nullopt;
        }
        break;
    case Opcode::Continuation:
        m_message.append(payload);
        if (!header.final)
            return std::nullopt;
        message.opcode = *std::exchange(m_fragmented, std::nullopt);
        payload = std::exchange(m_message, QByteArray());
        break;
    }
    if (message.opcode == Opcode::Text) {
        auto text = decodeUtf8(payload);
        if (!text)
            return ReadFailure { CloseCode::InvalidPayload,
                QStringLiteral("a text message that is not UTF-8") };
        message.text = std::move(*text);
    }
    message.payload = std::move(payload);
    messages.push_back(std::move(message));
    return std::nullopt;
}

std::optional<ReadFailure> MessageReader::feed(QByteArrayView bytes, std::vector<Message> &messages)
{
    if (m_failure)
        return m_failure;
    while (!bytes.isEmpty()) {
        if (!m_header) {
            // A header is at most 14 bytes: join what is held to enough of
            // the new bytes to read one.
            QByteArrayView view = bytes;
            std::array<char, kMaxHeaderSize> joined {};
            const qsizetype held = m_partial.size();
            if (held > 0) {
                const qsizetype more = std::min(bytes.size(), qsizetype(kMaxHeaderSize) - held);
                std::memcpy(joined.data(), m_partial.constData(), size_t(held));
                std::memcpy(joined.data() + held, bytes.data(), size_t(more));
                view = QByteArrayView(joined.data(), held + more);
            }
            std::optional<Header> header;
            if (auto failure = readHeader(view, header))
                return fail(*failure);
            if (!header) {
                // Fewer than 14 bytes in all, so every one of them is held.
                m_partial.append(bytes);
                return std::nullopt;
            }
            if (auto failure = checkHeader(*header))
                return fail(*failure);
            bytes = bytes.sliced(header->size - held);
            m_partial = {};
            const auto length = static_cast<qsizetype>(header->length);
            if (bytes.size() >= length) {
                // The whole payload is here: one copy, into the message.
                QByteArray payload(bytes.first(length).toByteArray());
                bytes = bytes.sliced(length);
                if (auto failure = take(*header, std::move(payload), messages))
                    return fail(*failure);
                continue;
            }
            m_header = header;
            m_payload = QByteArray(length, Qt::Uninitialized);
            m_filled = 0;
        }
        const qsizetype wanted = m_payload.size() - m_filled;
        const qsizetype now = std::min(wanted, bytes.size());
        std::memcpy(m_payload.data() + m_filled, bytes.data(), size_t(now));
        m_filled += now;
        bytes = bytes.sliced(now);
        if (m_filled < m_payload.size())
            return std::nullopt;
        const Header header = *std::exchange(m_header, std::nullopt);
        if (auto failure = take(header, std::exchange(m_payload, QByteArray()), messages))
            return fail(*failure);
    }
    return std::nullopt;
}

} // namespace cloop::net::websocket
