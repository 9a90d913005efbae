#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <array>
#include <optional>
#include <vector>

// RFC 6455 on the wire, for a WebSocket that holds no buffer while it has
// nothing to read or write: frames written straight into the caller's
// buffer, and a reader that keeps bytes only while a frame is incomplete.
namespace cloop::net::websocket {

enum class Opcode : quint8
{
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
};

// The close codes this side sends (RFC 6455 7.4.1).
namespace CloseCode {
inline constexpr quint16 Normal = 1000;
inline constexpr quint16 GoingAway = 1001;
inline constexpr quint16 ProtocolError = 1002;
inline constexpr quint16 InvalidPayload = 1007;
inline constexpr quint16 PolicyViolated = 1008;
inline constexpr quint16 TooBig = 1009;
// Never on the wire: what a peer "sent" when its close frame had no code.
inline constexpr quint16 NoStatus = 1005;
} // namespace CloseCode

inline constexpr qsizetype kMaxControlPayload = 125;
inline constexpr size_t kMaxHeaderSize = 14;

using MaskKey = std::array<quint8, 4>;

// RFC 6455 4.2.2: the Sec-WebSocket-Accept that answers a client's
// Sec-WebSocket-Key.
QByteArray acceptKeyFor(QByteArrayView clientKey);

// XORs `data` with the key as RFC 6455 5.3 does, as if data[0] were byte
// `offset` of the payload: eight bytes at a time, then the rest.
void applyMask(char *data, qsizetype size, MaskKey key, quint64 offset = 0);

using FrameHeader = std::array<quint8, kMaxHeaderSize>;

// Writes a frame's header into `header`: how many of its bytes it took.
qsizetype writeHeader(FrameHeader &header, Opcode opcode, quint64 length,
    const MaskKey *mask = nullptr, bool final = true);

// Appends one whole frame to `out`: the header, then the payload, masked
// when a key is given (a client masks every frame, a server none).
void appendFrame(QByteArray &out, Opcode opcode, QByteArrayView payload,
    const MaskKey *mask = nullptr, bool final = true);

// A close frame's payload: the code, then the reason cut to fit a control
// frame without splitting a UTF-8 sequence.
QByteArray closePayload(quint16 code, const QString &reason);

struct Message
{
    Opcode opcode = Opcode::Binary; // Text, Binary, Close, Ping or Pong
    QByteArray payload; // unmasked; for Close the reason alone
    QString text; // Text: the payload decoded
    quint16 closeCode = CloseCode::NoStatus; // Close
};

struct ReadFailure
{
    quint16 closeCode = CloseCode::ProtocolError;
    QString reason;
};

// Turns the bytes of one direction of a WebSocket into messages, checking
// every rule of RFC 6455 that the other side could break: reserved bits
// without an extension, unknown opcodes, lengths not in their shortest
// form, a mask where none belongs or none where one must be, control
// frames that are long or fragmented, continuations of nothing, a message
// begun inside another, text that is not UTF-8, close codes no one may
// send, and messages over the limit (counted before their bytes arrive).
class MessageReader final
{
public:
    struct Limits
    {
        qsizetype maxMessageBytes = 1024 * 1024;
        // A server reads masked frames, a client unmasked ones.
        bool peerMasks = true;
    };

    explicit MessageReader(Limits limits);

    // Takes the next bytes of the stream and appends every message they
    // complete. After a failure it takes nothing more and says the same.
    std::optional<ReadFailure> feed(QByteArrayView bytes, std::vector<Message> &messages);

    // Bytes held for an incomplete frame or message: none between messages.
    qsizetype bufferedBytes() const
    {
        return m_partial.capacity() + m_payload.capacity() + m_message.capacity();
    }
    void setMaxMessageBytes(qsizetype bytes) { m_limits.maxMessageBytes = bytes; }

private:
    struct Header
    {
        bool final = true;
        Opcode opcode = Opcode::Binary;
        bool masked = false;
        MaskKey mask {};
        quint64 length = 0;
        qsizetype size = 0; // of the header itself
    };

    // The header at the front of `bytes`, nothing while it is incomplete,
    // or a failure.
    std::optional<ReadFailure> readHeader(
        QByteArrayView bytes, std::optional<Header> &header) const;
    std::optional<ReadFailure> checkHeader(const Header &header) const;
    std::optional<ReadFailure> take(
        const Header &header, QByteArray payload, std::vector<Message> &messages);
    std::optional<ReadFailure> fail(ReadFailure failure);

    Limits m_limits;
    // The front of a header not yet whole.
    QByteArray m_partial;
    // A frame whose header was read, while its payload arrives.
    std::optional<Header> m_header;
    QByteArray m_payload;
    qsizetype m_filled = 0;
    // The fragments of a message so far.
    QByteArray m_message;
    std::optional<Opcode> m_fragmented;
    std::optional<ReadFailure> m_failure;
};

} // namespace cloop::net::websocket
