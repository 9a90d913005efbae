#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QString>

namespace cloop::protocol {

// Binary WebSocket message = one channel frame:
//
//   u8  kind      (FrameKind)
//   u8  flags     (must be 0 in this version)
//   u32 channel   big-endian, never 0
//   ... payload by kind:
//     Open    u32 window, then UTF-8 JSON object describing what to open
//     Accept  u32 window
//     Data    the bytes (1 .. kMaxDataPayload)
//     Credit  u32 bytes the receiver consumed and grants again
//     Close   u16 CloseCode, then a UTF-8 reason
//
// The opener of a channel chooses its number: hub-opened channels are even,
// daemon-opened ones odd, so both can open at once without colliding.
enum class FrameKind : quint8
{
    Open = 1,
    Accept = 2,
    Data = 3,
    Credit = 4,
    Close = 5,
};

enum class CloseCode : quint16
{
    Normal = 0,
    Refused = 1,
    Overflow = 2,
    ProtocolError = 3,
    DeviceGone = 4,
    ConnectionLost = 5,
};

inline constexpr qsizetype kHeaderSize = 6;
inline constexpr qsizetype kMaxDataPayload = 64 * 1024;
inline constexpr qsizetype kMaxOpenMetadata = 4 * 1024;
inline constexpr qsizetype kMaxCloseReason = 1024;
inline constexpr qsizetype kMaxFrameSize = kHeaderSize + kMaxDataPayload;
inline constexpr quint32 kMaxWindow = 64u * 1024u * 1024u;

struct ChannelFrame
{
    FrameKind kind = FrameKind::Data;
    quint32 channel = 0;
    quint32 window = 0; // Open, Accept
    quint32 credit = 0; // Credit
    CloseCode closeCode = CloseCode::Normal; // Close
    QByteArray payload; // Open: JSON metadata, Data: bytes, Close: UTF-8 reason

    static ChannelFrame open(quint32 channel, quint32 window, QByteArray metadata);
    static ChannelFrame accept(quint32 channel, quint32 window);
    static ChannelFrame data(quint32 channel, QByteArray bytes);
    static ChannelFrame grant(quint32 channel, quint32 bytes);
    static ChannelFrame close(quint32 channel, CloseCode code, const QString &reason);

    QString closeReason() const { return QString::fromUtf8(payload); }
};

QByteArray encodeFrame(const ChannelFrame &frame);
// Validates everything: a frame that decodes is well-formed.
Result<ChannelFrame> decodeFrame(QByteArrayView bytes);

QString frameKindName(FrameKind kind);
QString closeCodeName(CloseCode code);

} // namespace cloop::protocol
