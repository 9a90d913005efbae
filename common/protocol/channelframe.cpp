#include "common/protocol/channelframe.h"

#include <QtEndian>

namespace cloop::protocol {

namespace {

void appendU16(QByteArray &out, quint16 value)
{
    char buf[2];
    qToBigEndian(value, buf);
    out.append(buf, 2);
}

void appendU32(QByteArray &out, quint32 value)
{
    char buf[4];
    qToBigEndian(value, buf);
    out.append(buf, 4);
}

Error malformed(const QString &what)
{
    return Error::make(QStringLiteral("malformed_frame"), what);
}

} // namespace

ChannelFrame ChannelFrame::open(quint32 channel, quint32 window, QByteArray metadata)
{
    ChannelFrame frame;
    frame.kind = FrameKind::Open;
    frame.channel = channel;
    frame.window = window;
    frame.payload = std::move(metadata);
    return frame;
}

ChannelFrame ChannelFrame::accept(quint32 channel, quint32 window)
{
    ChannelFrame frame;
    frame.kind = FrameKind::Accept;
    frame.channel = channel;
    frame.window = window;
    return frame;
}

ChannelFrame ChannelFrame::data(quint32 channel, QByteArray bytes)
{
    ChannelFrame frame;
    frame.kind = FrameKind::Data;
    frame.channel = channel;
    frame.payload = std::move(bytes);
    return frame;
}

ChannelFrame ChannelFrame::grant(quint32 channel, quint32 bytes)
{
    ChannelFrame frame;
    frame.kind = FrameKind::Credit;
    frame.channel = channel;
    frame.credit = bytes;
    return frame;
}

ChannelFrame ChannelFrame::close(quint32 channel, CloseCode code, const QString &reason)
{
    ChannelFrame frame;
    frame.kind = FrameKind::Close;
    frame.channel = channel;
    frame.closeCode = code;
    // Shortened by characters, not bytes, so the reason stays valid UTF-8.
    QString shortened = reason;
    QByteArray utf8 = shortened.toUtf8();
    while (utf8.size() > kMaxCloseReason) {
        shortened.chop(1 + (utf8.size() - kMaxCloseReason) / 4);
        if (!shortened.isEmpty() && shortened.back().isHighSurrogate())
            shortened.chop(1);
        utf8 = shortened.toUtf8();
    }
    frame.payload = utf8;
    return frame;
}

QByteArray encodeFrame(const ChannelFrame &frame)
{
    QByteArray out;
    out.reserve(kHeaderSize + 6 + frame.payload.size());
    out.append(static_cast<char>(frame.kind));
    out.append('\0');
    appendU32(out, frame.channel);
    switch (frame.kind) {
    case FrameKind::Open:
        appendU32(out, frame.window);
        out.append(frame.payload);
        break;
    case FrameKind::Accept:
        appendU32(out, frame.window);
        break;
    case FrameKind::Data:
        out.append(frame.payload);
        break;
    case FrameKind::Credit:
        appendU32(out, frame.credit);
        break;
    case FrameKind::Close:
        appendU16(out, static_cast<quint16>(frame.closeCode));
        out.append(frame.payload);
        break;
    }
    return out;
}

Result<ChannelFrame> decodeFrame(QByteArrayView bytes)
{
    if (bytes.size() < kHeaderSize)
        return malformed(QStringLiteral("frame of %1 bytes is shorter than its %2-byte header")
                             .arg(bytes.size())
                             .arg(kHeaderSize));
    if (bytes.size() > kMaxFrameSize)
        return malformed(QStringLiteral("frame of %1 bytes exceeds the %2-byte limit")
                             .arg(bytes.size())
                             .arg(kMaxFrameSize));
    const auto kindByte = static_cast<quint8>(bytes[0]);
    if (kindByte < static_cast<quint8>(FrameKind::Open)
        || kindByte > static_cast<quint8>(FrameKind::Close))
        return malformed(QStringLiteral("unknown frame kind %1").arg(kindByte));
    if (bytes[1] != '\0')
        return malformed(QStringLiteral("frame flags 0x%1 are not defined in this protocol version")
                             .arg(static_cast<quint8>(bytes[1]), 2, 16, QLatin1Char('0')));

    ChannelFrame frame;
    frame.kind = static_cast<FrameKind>(kindByte);
    frame.channel = qFromBigEndian<quint32>(bytes.data() + 2);
    if (frame.channel == 0)
        return malformed(QStringLiteral("channel 0 is reserved"));

    const QByteArrayView body = bytes.sliced(kHeaderSize);
    const QString kindName = frameKindName(frame.kind);
    auto needExactly = [&](qsizetype n) -> std::optional<Error> {
        if (body.size() != n)
            return malformed(QStringLiteral("%1 frame body is %2 bytes, expected %3")
                                 .arg(kindName)
                                 .arg(body.size())
                                 .arg(n));
        return std::nullopt;
    };

    switch (frame.kind) {
    case FrameKind::Open:
        if (body.size() < 4)
            return malformed(QStringLiteral("open frame without a window"));
        frame.window = qFromBigEndian<quint32>(body.data());
        if (body.size() - 4 > kMaxOpenMetadata)
            return malformed(QStringLiteral("open metadata of %1 bytes exceeds %2")
                                 .arg(body.size() - 4)
                                 .arg(kMaxOpenMetadata));
        frame.payload = body.sliced(4).toByteArray();
        break;
    case FrameKind::Accept:
        if (auto err = needExactly(4))
            return *err;
        frame.window = qFromBigEndian<quint32>(body.data());
        break;
    case FrameKind::Data:
        if (body.isEmpty())
            return malformed(QStringLiteral("empty data frame"));
        frame.payload = body.toByteArray();
        break;
    case FrameKind::Credit:
        if (auto err = needExactly(4))
            return *err;
        frame.credit = qFromBigEndian<quint32>(body.data());
        if (frame.credit == 0)
            return malformed(QStringLiteral("credit frame grants nothing"));
        break;
    case FrameKind::Close: {
        if (body.size() < 2)
            return malformed(QStringLiteral("close frame without a code"));
        const auto code = qFromBigEndian<quint16>(body.data());
        if (code > static_cast<quint16>(CloseCode::ConnectionLost))
            return malformed(QStringLiteral("unknown close code %1").arg(code));
        frame.closeCode = static_cast<CloseCode>(code);
        if (body.size() - 2 > kMaxCloseReason)
            return malformed(QStringLiteral("close reason of %1 bytes exceeds %2")
                                 .arg(body.size() - 2)
                                 .arg(kMaxCloseReason));
        frame.payload = body.sliced(2).toByteArray();
        break;
    }
    }
    if ((frame.kind == FrameKind::Open || frame.kind == FrameKind::Accept)
        && (frame.window == 0 || frame.window > kMaxWindow))
        return malformed(QStringLiteral("%1 window %2 is outside 1..%3")
                             .arg(kindName)
                             .arg(frame.window)
                             .arg(kMaxWindow));
    return frame;
}

QString frameKindName(FrameKind kind)
{
    switch (kind) {
    case FrameKind::Open:
        return QStringLiteral("open");
    case FrameKind::Accept:
        return QStringLiteral("accept");
    case FrameKind::Data:
        return QStringLiteral("data");
    case FrameKind::Credit:
        return QStringLiteral("credit");
    case FrameKind::Close:
        return QStringLiteral("close");
    }
    return QStringLiteral("unknown");
}

QString closeCodeName(CloseCode code)
{
    switch (code) {
    case CloseCode::Normal:
        return QStringLiteral("normal");
    case CloseCode::Refused:
        return QStringLiteral("refused");
    case CloseCode::Overflow:
        return QStringLiteral("overflow");
    case CloseCode::ProtocolError:
        return QStringLiteral("protocol error");
    case CloseCode::DeviceGone:
        return QStringLiteral("device gone");
    case CloseCode::ConnectionLost:
        return QStringLiteral("connection lost");
    }
    return QStringLiteral("unknown");
}

} // namespace cloop::protocol
