#include "common/net/websocketframes.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

using namespace cloop::net::websocket;
using namespace Qt::StringLiterals;

namespace {

MessageReader::Limits serverSide(qsizetype maxMessageBytes = 1024 * 1024)
{
    return { maxMessageBytes, true };
}

MessageReader::Limits clientSide(qsizetype maxMessageBytes = 1024 * 1024)
{
    return { maxMessageBytes, false };
}

QByteArray bytesOf(std::initializer_list<int> values)
{
    QByteArray bytes;
    for (int value : values)
        bytes.append(static_cast<char>(value));
    return bytes;
}

// Everything the reader makes of `stream`, fed in pieces of `piece` bytes.
std::vector<Message> readAll(
    MessageReader::Limits limits, const QByteArray &stream, qsizetype piece = 0)
{
    MessageReader reader(limits);
    std::vector<Message> messages;
    const qsizetype step = piece > 0 ? piece : std::max<qsizetype>(stream.size(), 1);
    for (qsizetype at = 0; at < stream.size(); at += step) {
        const auto failure = reader.feed(
            QByteArrayView(stream).sliced(at, std::min(step, stream.size() - at)), messages);
        if (failure) {
            qWarning() << "read failure:" << failure->reason;
            return {};
        }
    }
    return messages;
}

} // namespace

class TestWebSocketFrames : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theMaskIsAppliedAsRfc6455Says_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("offset");
        for (int size : { 0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 1001 })
            for (int offset : { 0, 1, 2, 3, 5 })
                QTest::addRow("%d bytes from %d", size, offset) << size << offset;
    }
    void theMaskIsAppliedAsRfc6455Says()
    {
        QFETCH(int, size);
        QFETCH(int, offset);
        const MaskKey key { 0x37, 0xfa, 0x21, 0x3d };
        QByteArray data(size, Qt::Uninitialized);
        for (int i = 0; i < size; ++i)
            data[i] = static_cast<char>(i * 7 + 3);
        QByteArray expected = data;
        // RFC 6455 5.3: octet i of the payload XOR octet (i mod 4) of the key.
        for (int i = 0; i < size; ++i)
            expected[i] = static_cast<char>(expected[i] ^ key[(offset + i) % 4]);
        applyMask(data.data(), data.size(), key, static_cast<quint64>(offset));
        QCOMPARE(data, expected);
    }

    // The examples of RFC 6455 5.7, byte for byte both ways.
    void theRfcExamplesAreWrittenAndReadExactly()
    {
        QByteArray unmasked;
        appendFrame(unmasked, Opcode::Text, "Hello");
        QCOMPARE(unmasked, bytesOf({ 0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f }));

        const MaskKey key { 0x37, 0xfa, 0x21, 0x3d };
        QByteArray masked;
        appendFrame(masked, Opcode::Text, "Hello", &key);
        QCOMPARE(
            masked, bytesOf({ 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58 }));
        auto read = readAll(serverSide(), masked);
        QCOMPARE(read.size(), 1u);
        QCOMPARE(read[0].opcode, Opcode::Text);
        QCOMPARE(read[0].text, u"Hello"_s);

        QByteArray fragments;
        appendFrame(fragments, Opcode::Text, "Hel", nullptr, false);
        appendFrame(fragments, Opcode::Continuation, "lo");
        QCOMPARE(fragments, bytesOf({ 0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f }));
        read = readAll(clientSide(), fragments);
        QCOMPARE(read.size(), 1u);
        QCOMPARE(read[0].text, u"Hello"_s);

        QByteArray ping;
        appendFrame(ping, Opcode::Ping, "Hello");
        QCOMPARE(ping, bytesOf({ 0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f }));

        QByteArray medium;
        appendFrame(medium, Opcode::Binary, QByteArray(256, 'x'));
        QCOMPARE(medium.left(4), bytesOf({ 0x82, 0x7e, 0x01, 0x00 }));
        QByteArray large;
        appendFrame(large, Opcode::Binary, QByteArray(65536, 'x'));
        QCOMPARE(large.left(10), bytesOf({ 0x82, 0x7f, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00 }));
    }

    void theAcceptKeyIsTheRfcs()
    {
        // RFC 6455 1.3's example.
        QCOMPARE(acceptKeyFor("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="_ba);
    }

    void everyLengthSurvivesEverySplit_data()
    {
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("piece");
        for (int length : { 0, 1, 125, 126, 127, 65535, 65536, 70006 })
            for (int piece : { 1, 5, 13, 4096, 16384, 0 })
                // Long frames byte by byte take long and prove nothing more.
                if (length < 4096 || piece == 0 || piece >= 13)
                    QTest::addRow("%d bytes in pieces of %d", length, piece) << length << piece;
    }
    void everyLengthSurvivesEverySplit()
    {
        QFETCH(int, length);
        QFETCH(int, piece);
        QByteArray payload(length, Qt::Uninitialized);
        QRandomGenerator random(static_cast<quint32>(length));
        for (char &byte : payload)
            byte = static_cast<char>(random.bounded(256));
        const MaskKey key { 1, 2, 3, 4 };
        QByteArray stream;
        appendFrame(stream, Opcode::Binary, payload, &key);
        appendFrame(stream, Opcode::Ping, "beat", &key);
        appendFrame(stream, Opcode::Binary, payload, &key);

        const auto read = readAll(serverSide(), stream, piece);
        QCOMPARE(read.size(), 3u);
        QCOMPARE(read[0].opcode, Opcode::Binary);
        QCOMPARE(read[0].payload, payload);
        QCOMPARE(read[1].opcode, Opcode::Ping);
        QCOMPARE(read[1].payload, "beat"_ba);
        QCOMPARE(read[2].payload, payload);
    }

    void controlFramesMayComeBetweenFragments()
    {
        QByteArray stream;
        appendFrame(stream, Opcode::Binary, "one ", nullptr, false);
        appendFrame(stream, Opcode::Ping, "p");
        appendFrame(stream, Opcode::Continuation, "two ", nullptr, false);
        appendFrame(stream, Opcode::Pong, "q");
        appendFrame(stream, Opcode::Continuation, "three");
        const auto read = readAll(clientSide(), stream);
        QCOMPARE(read.size(), 3u);
        QCOMPARE(read[0].opcode, Opcode::Ping);
        QCOMPARE(read[1].opcode, Opcode::Pong);
        QCOMPARE(read[2].opcode, Opcode::Binary);
        QCOMPARE(read[2].payload, "one two three"_ba);
    }

    void aCloseFrameCarriesItsCodeAndReason()
    {
        QByteArray stream;
        appendFrame(
            stream, Opcode::Close, closePayload(CloseCode::GoingAway, u"the hub is stopping"_s));
        appendFrame(stream, Opcode::Close, {});
        const auto read = readAll(clientSide(), stream);
        QCOMPARE(read.size(), 2u);
        QCOMPARE(read[0].closeCode, CloseCode::GoingAway);
        QCOMPARE(read[0].text, u"the hub is stopping"_s);
        QCOMPARE(read[1].closeCode, CloseCode::NoStatus);
        QVERIFY(read[1].text.isEmpty());
    }

    void aLongCloseReasonIsCutBetweenCharacters()
    {
        // 'é' is two bytes: 62 of them and one more byte than fits.
        const QString reason = QString(62, QChar(0xe9)) + u"!"_s;
        const QByteArray payload = closePayload(CloseCode::Normal, reason);
        QVERIFY(payload.size() <= kMaxControlPayload);
        QCOMPARE(payload.size(), 2 + 61 * 2); // 123 bytes of room would split the 62nd
        QByteArray stream;
        appendFrame(stream, Opcode::Close, payload);
        const auto read = readAll(clientSide(), stream);
        QCOMPARE(read.size(), 1u);
        QCOMPARE(read[0].text, QString(61, QChar(0xe9)));
    }

    void brokenStreamsAreRefusedWithTheRightCode_data()
    {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<bool>("fromClient");
        QTest::addColumn<int>("closeCode");
        QTest::addColumn<QString>("reason");

        const auto masked = [](std::initializer_list<int> head, QByteArray payload) {
            QByteArray frame = bytesOf(head);
            frame += bytesOf({ 0, 0, 0, 0 }); // a zero key leaves the payload as it is
            return frame + payload;
        };
        QTest::addRow("reserved bit") << masked({ 0xc2, 0x81 }, "x") << true
                                      << int(CloseCode::ProtocolError) << u"reserved bits"_s;
        QTest::addRow("unknown opcode") << masked({ 0x83, 0x81 }, "x") << true
                                        << int(CloseCode::ProtocolError) << u"unknown opcode"_s;
        QTest::addRow("unmasked from a client")
            << bytesOf({ 0x82, 0x01, 0x78 }) << true << int(CloseCode::ProtocolError)
            << u"unmasked frame from a client"_s;
        QTest::addRow("masked from a server")
            << masked({ 0x82, 0x81 }, "x") << false << int(CloseCode::ProtocolError)
            << u"masked frame from a server"_s;
        QTest::addRow("fragmented ping")
            << masked({ 0x09, 0x81 }, "x") << true << int(CloseCode::ProtocolError)
            << u"fragmented control frame"_s;
        QTest::addRow("long ping")
            << masked({ 0x89, 0xfe, 0x00, 0x7e }, QByteArray(126, 'x')) << true
            << int(CloseCode::ProtocolError) << u"control frame of 126 bytes"_s;
        QTest::addRow("continuation of nothing")
            << masked({ 0x80, 0x81 }, "x") << true << int(CloseCode::ProtocolError)
            << u"continuation frame outside a message"_s;
        QTest::addRow("message inside a message")
            << masked({ 0x02, 0x81 }, "x") + masked({ 0x82, 0x81 }, "y") << true
            << int(CloseCode::ProtocolError) << u"message begun inside another"_s;
        QTest::addRow("16-bit length that fits in 7")
            << masked({ 0x82, 0xfe, 0x00, 0x05 }, "hello") << true << int(CloseCode::ProtocolError)
            << u"shortest form"_s;
        QTest::addRow("64-bit length that fits in 16")
            << masked({ 0x82, 0xff, 0, 0, 0, 0, 0, 0, 0x01, 0x00 }, {}) << true
            << int(CloseCode::ProtocolError) << u"shortest form"_s;
        QTest::addRow("64-bit length with its top bit")
            << masked({ 0x82, 0xff, 0x80, 0, 0, 0, 0, 1, 0, 0 }, {}) << true
            << int(CloseCode::ProtocolError) << u"top bit"_s;
        // Refused on its header, before its megabyte is sent.
        QTest::addRow("over the limit") << masked({ 0x82, 0xff, 0, 0, 0, 0, 0, 0x10, 0, 1 }, {})
                                        << true << int(CloseCode::TooBig) << u"over"_s;
        QTest::addRow("fragments over the limit")
            << masked({ 0x02, 0xff, 0, 0, 0, 0, 0, 0x08, 0, 0 }, QByteArray(0x80000, 'x'))
                + masked({ 0x80, 0xff, 0, 0, 0, 0, 0, 0x08, 0, 1 }, {})
            << true << int(CloseCode::TooBig) << u"over"_s;
        QTest::addRow("text not UTF-8") << masked({ 0x81, 0x82 }, "\xc3\x28") << true
                                        << int(CloseCode::InvalidPayload) << u"not UTF-8"_s;
        QTest::addRow("text with a surrogate") << masked({ 0x81, 0x83 }, "\xed\xa0\x80") << true
                                               << int(CloseCode::InvalidPayload) << u"not UTF-8"_s;
        QTest::addRow("close of one byte") << masked({ 0x88, 0x81 }, "\x03") << true
                                           << int(CloseCode::ProtocolError) << u"one byte"_s;
        QTest::addRow("close code reserved for reports")
            << masked({ 0x88, 0x82 }, "\x03\xed") << true << int(CloseCode::ProtocolError)
            << u"close code 1005"_s;
        QTest::addRow("close reason not UTF-8")
            << masked({ 0x88, 0x84 }, "\x03\xe8\xc3\x28") << true << int(CloseCode::InvalidPayload)
            << u"not UTF-8"_s;
    }
    void brokenStreamsAreRefusedWithTheRightCode()
    {
        QFETCH(QByteArray, stream);
        QFETCH(bool, fromClient);
        QFETCH(int, closeCode);
        QFETCH(QString, reason);
        MessageReader reader(MessageReader::Limits { 1024 * 1024, fromClient });
        std::vector<Message> messages;
        const auto failure = reader.feed(stream, messages);
        QVERIFY(failure);
        QCOMPARE(int(failure->closeCode), closeCode);
        QVERIFY2(failure->reason.contains(reason), qPrintable(failure->reason));
        QVERIFY(messages.empty());
        QCOMPARE(reader.bufferedBytes(), 0);

        // Nothing after a failure is read, however well-formed.
        QByteArray good;
        const MaskKey key { 9, 9, 9, 9 };
        appendFrame(good, Opcode::Binary, "fine", fromClient ? &key : nullptr);
        const auto again = reader.feed(good, messages);
        QVERIFY(again);
        QCOMPARE(again->reason, failure->reason);
        QVERIFY(messages.empty());
    }

    void nothingIsHeldBetweenMessages()
    {
        MessageReader reader(serverSide());
        const MaskKey key { 5, 6, 7, 8 };
        QByteArray frame;
        appendFrame(frame, Opcode::Binary, QByteArray(40000, 'z'), &key);
        std::vector<Message> messages;
        QVERIFY(!reader.feed(QByteArrayView(frame).first(3), messages));
        QVERIFY(reader.bufferedBytes() > 0);
        QVERIFY(!reader.feed(QByteArrayView(frame).sliced(3, 20000), messages));
        QVERIFY(reader.bufferedBytes() >= 40000);
        QVERIFY(!reader.feed(QByteArrayView(frame).sliced(20003), messages));
        QCOMPARE(messages.size(), 1u);
        QCOMPARE(messages[0].payload, QByteArray(40000, 'z'));
        QCOMPARE(reader.bufferedBytes(), 0);
    }

    // Qt's own WebSocket client, on a real TCP connection, reads what we
    // write and we read what it writes, masked, fragmented or not.
    void qtsWebSocketClientAgreesWithUs()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        QWebSocket client;
        client.setOutgoingFrameSize(30000); // so that its long messages come in fragments
        client.open(QUrl(u"ws://127.0.0.1:%1/"_s.arg(server.serverPort())));
        QVERIFY(server.waitForNewConnection(5000));
        std::unique_ptr<QTcpSocket> peer(server.nextPendingConnection());

        QByteArray head;
        QTRY_VERIFY_WITH_TIMEOUT((head += peer->readAll(), head.contains("\r\n\r\n")), 5000);
        QByteArray key;
        for (const QByteArray &line : head.split('\n'))
            if (line.toLower().startsWith("sec-websocket-key:"))
                key = line.mid(line.indexOf(':') + 1).trimmed();
        QVERIFY(!key.isEmpty());
        const QByteArray accept = QCryptographicHash::hash(
            key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11", QCryptographicHash::Sha1)
                                      .toBase64();
        QSignalSpy connected(&client, &QWebSocket::connected);
        peer->write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Accept: "
            + accept + "\r\n\r\n");
        QVERIFY(connected.wait(5000));

        QByteArray big(70000, Qt::Uninitialized);
        for (int i = 0; i < big.size(); ++i)
            big[i] = static_cast<char>(i % 251);
        client.sendTextMessage(u"héllo"_s);
        client.sendBinaryMessage(big);
        client.ping("beat");
        MessageReader reader(serverSide());
        std::vector<Message> messages;
        std::optional<ReadFailure> failure;
        const auto readPeer = [&] {
            if (!failure)
                failure = reader.feed(peer->readAll(), messages);
            return failure.has_value();
        };
        QTRY_VERIFY_WITH_TIMEOUT(readPeer() || messages.size() >= 3, 5000);
        QVERIFY(!failure);
        QCOMPARE(messages.size(), 3u);
        QCOMPARE(messages[0].text, u"héllo"_s);
        QCOMPARE(messages[1].opcode, Opcode::Binary);
        QCOMPARE(messages[1].payload, big);
        QCOMPARE(messages[2].opcode, Opcode::Ping);
        QCOMPARE(messages[2].payload, "beat"_ba);

        QSignalSpy texts(&client, &QWebSocket::textMessageReceived);
        QSignalSpy binaries(&client, &QWebSocket::binaryMessageReceived);
        QSignalSpy pongs(&client, &QWebSocket::pong);
        QSignalSpy closed(&client, &QWebSocket::disconnected);
        QByteArray out;
        appendFrame(out, Opcode::Pong, "beat");
        appendFrame(out, Opcode::Text, u"wörld"_s.toUtf8());
        appendFrame(out, Opcode::Binary, QByteArrayView(big).first(40000), nullptr, false);
        appendFrame(out, Opcode::Continuation, QByteArrayView(big).sliced(40000));
        peer->write(out);
        QTRY_COMPARE_WITH_TIMEOUT(binaries.size(), 1, 5000);
        QCOMPARE(texts.size(), 1);
        QCOMPARE(texts[0][0].toString(), u"wörld"_s);
        QCOMPARE(binaries[0][0].toByteArray(), big);
        QCOMPARE(pongs.size(), 1);

        messages.clear();
        client.close(QWebSocketProtocol::CloseCodeGoingAway, u"done here"_s);
        QTRY_VERIFY_WITH_TIMEOUT(readPeer() || !messages.empty(), 5000);
        QVERIFY(!failure);
        QCOMPARE(messages[0].opcode, Opcode::Close);
        QCOMPARE(messages[0].closeCode, CloseCode::GoingAway);
        QCOMPARE(messages[0].text, u"done here"_s);
        out.clear();
        appendFrame(out, Opcode::Close, closePayload(CloseCode::GoingAway, u"done here"_s));
        peer->write(out);
        peer->disconnectFromHost();
        QTRY_COMPARE_WITH_TIMEOUT(closed.size(), 1, 5000);
        QCOMPARE(client.closeCode(), QWebSocketProtocol::CloseCodeGoingAway);
    }
};

QTEST_MAIN(TestWebSocketFrames)
#include "tst_websocketframes.moc"
