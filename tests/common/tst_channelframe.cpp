// Unit tests of the binary channel frame (common/protocol/channelframe.h):
// every kind against a byte layout written out here, and every way a peer
// can send garbage.

#include "common/protocol/channelframe.h"

#include <QTest>

using namespace cloop;
using namespace cloop::protocol;

Q_DECLARE_METATYPE(cloop::protocol::ChannelFrame)

namespace {

QByteArray hex(const char *text)
{
    // fromHex skips the spaces, so layouts can be written field by field.
    return QByteArray::fromHex(QByteArray(text));
}

QByteArray u32(quint32 value)
{
    QByteArray out(4, '\0');
    out[0] = static_cast<char>(value >> 24);
    out[1] = static_cast<char>(value >> 16);
    out[2] = static_cast<char>(value >> 8);
    out[3] = static_cast<char>(value);
    return out;
}

QByteArray header(quint8 kind, quint32 channel)
{
    QByteArray out;
    out.append(static_cast<char>(kind));
    out.append('\0');
    out.append(u32(channel));
    return out;
}

} // namespace

class TestChannelFrame final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void acceptsLimits_data();
    void acceptsLimits();
    void refusesMalformed_data();
    void refusesMalformed();
    void closeFactoryKeepsReasonWithinLimit();
    void names();
};

void TestChannelFrame::roundTrip_data()
{
    QTest::addColumn<ChannelFrame>("frame");
    QTest::addColumn<QByteArray>("bytes");

    //                          kind flags channel   payload
    QTest::newRow("open") << ChannelFrame::open(7, 0x40000, QByteArrayLiteral(R"({"a":1})"))
                          << hex("01 00 00000007 00040000") + QByteArrayLiteral(R"({"a":1})");
    QTest::newRow("open, empty metadata")
        << ChannelFrame::open(0x01020304, 1, {}) << hex("01 00 01020304 00000001");
    QTest::newRow("accept") << ChannelFrame::accept(8, 0x00100000)
                            << hex("02 00 00000008 00100000");
    QTest::newRow("data") << ChannelFrame::data(0xfffffffe, QByteArrayLiteral("\x00\x01\xff z"))
                          << hex("03 00 fffffffe 0001ff207a");
    QTest::newRow("data, one byte")
        << ChannelFrame::data(1, QByteArrayLiteral("x")) << hex("03 00 00000001 78");
    QTest::newRow("credit") << ChannelFrame::grant(3, 0x12345678) << hex("04 00 00000003 12345678");
    QTest::newRow("close normal, no reason")
        << ChannelFrame::close(5, CloseCode::Normal, {}) << hex("05 00 00000005 0000");
    QTest::newRow("close refused") << ChannelFrame::close(6, CloseCode::Refused,
        QStringLiteral("busy")) << hex("05 00 00000006 0001 62757379");
    QTest::newRow("close overflow")
        << ChannelFrame::close(9, CloseCode::Overflow, {}) << hex("05 00 00000009 0002");
    QTest::newRow("close protocol error")
        << ChannelFrame::close(9, CloseCode::ProtocolError, {}) << hex("05 00 00000009 0003");
    QTest::newRow("close device gone, UTF-8 reason")
        << ChannelFrame::close(10, CloseCode::DeviceGone, QStringLiteral("\u00e9"))
        << hex("05 00 0000000a 0004 c3a9");
    QTest::newRow("close connection lost")
        << ChannelFrame::close(11, CloseCode::ConnectionLost, {}) << hex("05 00 0000000b 0005");
}

void TestChannelFrame::roundTrip()
{
    QFETCH(ChannelFrame, frame);
    QFETCH(QByteArray, bytes);

    // When the frame is encoded, then it has exactly the documented layout.
    QCOMPARE(encodeFrame(frame).toHex(' '), bytes.toHex(' '));

    // When the layout is decoded, then every field comes back.
    const Result<ChannelFrame> decoded = decodeFrame(bytes);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->kind, frame.kind);
    QCOMPARE(decoded->channel, frame.channel);
    QCOMPARE(decoded->window, frame.window);
    QCOMPARE(decoded->credit, frame.credit);
    QCOMPARE(decoded->closeCode, frame.closeCode);
    QCOMPARE(decoded->payload, frame.payload);
    QCOMPARE(decoded->closeReason(), frame.closeReason());

    // And encoding what was decoded gives the same bytes again.
    QCOMPARE(encodeFrame(*decoded), bytes);
}

void TestChannelFrame::acceptsLimits_data()
{
    QTest::addColumn<QByteArray>("bytes");

    QTest::newRow("data of exactly kMaxDataPayload")
        << header(3, 1) + QByteArray(kMaxDataPayload, 'd');
    QTest::newRow("open metadata of exactly kMaxOpenMetadata")
        << header(1, 1) + u32(1) + QByteArray(kMaxOpenMetadata, ' ');
    QTest::newRow("close reason of exactly kMaxCloseReason")
        << header(5, 1) + hex("0000") + QByteArray(kMaxCloseReason, 'r');
    QTest::newRow("accept window kMaxWindow") << header(2, 1) + u32(kMaxWindow);
    QTest::newRow("open window 1") << header(1, 2) + u32(1);
    QTest::newRow("largest credit") << header(4, 1) + u32(0xffffffffu);
    QTest::newRow("largest channel") << header(3, 0xffffffffu) + QByteArrayLiteral("x");
}

void TestChannelFrame::acceptsLimits()
{
    QFETCH(QByteArray, bytes);
    const Result<ChannelFrame> decoded = decodeFrame(bytes);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(encodeFrame(*decoded), bytes);
}

void TestChannelFrame::refusesMalformed_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("problem"); // must appear in the error message

    QTest::newRow("empty") << QByteArray() << QStringLiteral("shorter than its 6-byte header");
    QTest::newRow("short header") << hex("03 00 000000")
                                  << QStringLiteral("frame of 5 bytes is shorter");
    QTest::newRow("unknown kind 0")
        << hex("00 00 00000001 78") << QStringLiteral("unknown frame kind 0");
    QTest::newRow("unknown kind 6")
        << hex("06 00 00000001 78") << QStringLiteral("unknown frame kind 6");
    QTest::newRow("unknown kind 255")
        << hex("ff 00 00000001 78") << QStringLiteral("unknown frame kind 255");
    QTest::newRow("non-zero flags") << hex("03 01 00000001 78") << QStringLiteral("flags 0x01");
    QTest::newRow("flags 0x80") << hex("03 80 00000001 78") << QStringLiteral("flags 0x80");
    QTest::newRow("channel 0") << hex("03 00 00000000 78") << QStringLiteral("channel 0");
    QTest::newRow("empty data") << hex("03 00 00000001") << QStringLiteral("empty data frame");
    QTest::newRow("oversized data")
        << header(3, 1) + QByteArray(kMaxDataPayload + 1, 'd')
        << QStringLiteral("exceeds the %1-byte limit").arg(kMaxFrameSize);
    QTest::newRow("zero credit") << hex("04 00 00000001 00000000")
                                 << QStringLiteral("grants nothing");
    QTest::newRow("short credit") << hex("04 00 00000001 000001")
                                  << QStringLiteral("credit frame body is 3 bytes, expected 4");
    QTest::newRow("long credit") << hex("04 00 00000001 0000000100")
                                 << QStringLiteral("credit frame body is 5 bytes, expected 4");
    QTest::newRow("accept of 3 bytes") << hex(
        "02 00 00000001 000100") << QStringLiteral("accept frame body is 3 bytes, expected 4");
    QTest::newRow("accept of 5 bytes") << hex(
        "02 00 00000001 0000010000") << QStringLiteral("accept frame body is 5 bytes, expected 4");
    QTest::newRow("accept without body")
        << hex("02 00 00000001") << QStringLiteral("body is 0 bytes, expected 4");
    QTest::newRow("accept window 0")
        << hex("02 00 00000001 00000000") << QStringLiteral("accept window 0 is outside");
    QTest::newRow("accept window > kMaxWindow")
        << header(2, 1) + u32(kMaxWindow + 1)
        << QStringLiteral("accept window %1 is outside 1..%2").arg(kMaxWindow + 1).arg(kMaxWindow);
    QTest::newRow("open window 0")
        << hex("01 00 00000001 00000000 7b7d") << QStringLiteral("open window 0 is outside");
    QTest::newRow("open window > kMaxWindow")
        << header(1, 1) + u32(0xffffffffu) << QStringLiteral("open window 4294967295");
    QTest::newRow("open without window")
        << hex("01 00 00000001 0000") << QStringLiteral("open frame without a window");
    QTest::newRow("oversize open metadata")
        << header(1, 1) + u32(1024) + QByteArray(kMaxOpenMetadata + 1, ' ')
        << QStringLiteral("open metadata of %1 bytes exceeds %2")
               .arg(kMaxOpenMetadata + 1)
               .arg(kMaxOpenMetadata);
    QTest::newRow("close without code")
        << hex("05 00 00000001 00") << QStringLiteral("close frame without a code");
    QTest::newRow("unknown close code 6")
        << hex("05 00 00000001 0006") << QStringLiteral("unknown close code 6");
    QTest::newRow("unknown close code 0xffff")
        << hex("05 00 00000001 ffff") << QStringLiteral("unknown close code 65535");
    QTest::newRow("close reason over limit")
        << header(5, 1) + hex("0000") + QByteArray(kMaxCloseReason + 1, 'r')
        << QStringLiteral("close reason of %1 bytes exceeds %2")
               .arg(kMaxCloseReason + 1)
               .arg(kMaxCloseReason);
}

void TestChannelFrame::refusesMalformed()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, problem);

    // When garbage is decoded, then it is an error value, not a crash.
    const Result<ChannelFrame> decoded = decodeFrame(bytes);
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, QStringLiteral("malformed_frame"));
    QVERIFY2(decoded.error().message.contains(problem),
        qPrintable(QStringLiteral("message \"%1\" does not say \"%2\"")
                       .arg(decoded.error().message, problem)));
}

void TestChannelFrame::closeFactoryKeepsReasonWithinLimit()
{
    // Given a reason longer than the wire allows,
    const QString reason(kMaxCloseReason + 100, QLatin1Char('x'));
    // when a close frame is built from it,
    const ChannelFrame frame = ChannelFrame::close(4, CloseCode::DeviceGone, reason);
    // then the encoding is still one the peer accepts.
    QCOMPARE(frame.payload.size(), kMaxCloseReason);
    const Result<ChannelFrame> decoded = decodeFrame(encodeFrame(frame));
    QVERIFY(decoded.ok());
    QCOMPARE(decoded->closeCode, CloseCode::DeviceGone);
    QCOMPARE(decoded->closeReason(), reason.left(kMaxCloseReason));
}

void TestChannelFrame::names()
{
    QCOMPARE(frameKindName(FrameKind::Open), QStringLiteral("open"));
    QCOMPARE(frameKindName(FrameKind::Accept), QStringLiteral("accept"));
    QCOMPARE(frameKindName(FrameKind::Data), QStringLiteral("data"));
    QCOMPARE(frameKindName(FrameKind::Credit), QStringLiteral("credit"));
    QCOMPARE(frameKindName(FrameKind::Close), QStringLiteral("close"));
    QCOMPARE(closeCodeName(CloseCode::Normal), QStringLiteral("normal"));
    QCOMPARE(closeCodeName(CloseCode::Refused), QStringLiteral("refused"));
    QCOMPARE(closeCodeName(CloseCode::ConnectionLost), QStringLiteral("connection lost"));
}

QTEST_GUILESS_MAIN(TestChannelFrame)
#include "tst_channelframe.moc"
