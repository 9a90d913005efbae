// The USB/IP codec: every message byte for byte against the layout of the
// kernel's usbip_protocol.rst (expected bytes are written at the documented
// absolute offsets, never by the encoder under test), decoding back, prefixes
// answered "not yet", and damaged input refused.

#include "common/device/usb/usbipprotocol.h"

#include <QtTest>

using namespace cloop::device::usb::usbip;
using cloop::Error;

namespace {

enum class Decoder
{
    Opening,
    ImportReply,
    DevlistReply,
    Urb
};

void put8(QByteArray &bytes, qsizetype at, quint8 value)
{
    bytes[at] = char(value);
}

void put16(QByteArray &bytes, qsizetype at, quint16 value)
{
    put8(bytes, at, quint8(value >> 8));
    put8(bytes, at + 1, quint8(value));
}

void put32(QByteArray &bytes, qsizetype at, quint32 value)
{
    put16(bytes, at, quint16(value >> 16));
    put16(bytes, at + 2, quint16(value));
}

void putText(QByteArray &bytes, qsizetype at, const QByteArray &text)
{
    bytes.replace(at, text.size(), text);
}

QByteArray opHeader(qsizetype size, quint16 code, quint32 status = 0, quint16 version = 0x0111)
{
    QByteArray bytes(size, '\0');
    put16(bytes, 0, version);
    put16(bytes, 2, code);
    put32(bytes, 4, status);
    return bytes;
}

QByteArray importRequestBytes(const QByteArray &busIdField)
{
    QByteArray bytes = opHeader(40, 0x8003);
    putText(bytes, 8, busIdField);
    return bytes;
}

DeviceRecord yubikey()
{
    DeviceRecord device;
    device.path = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1";
    device.busId = "1-1";
    device.busNumber = 1;
    device.deviceNumber = 2;
    device.speed = quint32(Speed::Full);
    device.vendorId = 0x1050;
    device.productId = 0x0407;
    device.bcdDevice = 0x0543;
    device.deviceClass = 0xef;
    device.deviceSubClass = 0x02;
    device.deviceProtocol = 0x01;
    device.configurationValue = 1;
    device.configurationCount = 1;
    device.interfaceCount = 2;
    device.interfaces = { { 0x03, 0x01, 0x01 }, { 0x0b, 0x00, 0x00 } };
    return device;
}

DeviceRecord hub()
{
    DeviceRecord device;
    device.path = "/sys/devices/platform/vhci/usb3/3-2.4.1";
    device.busId = "3-2.4.1";
    device.busNumber = 3;
    device.deviceNumber = 17;
    device.speed = quint32(Speed::High);
    device.vendorId = 0x05e3;
    device.productId = 0x0610;
    device.bcdDevice = 0x9226;
    device.deviceClass = 0x09;
    device.configurationValue = 1;
    device.configurationCount = 1;
    return device;
}

// The first DEVLIST record, at its absolute offsets in the reply.
QByteArray devlistReplyOfYubikey()
{
    QByteArray bytes = opHeader(12 + 312 + 2 * 4, 0x0005);
    put32(bytes, 0x008, 1);
    putText(bytes, 0x00C, "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1");
    putText(bytes, 0x10C, "1-1");
    put32(bytes, 0x12C, 1);
    put32(bytes, 0x130, 2);
    put32(bytes, 0x134, 2);
    put16(bytes, 0x138, 0x1050);
    put16(bytes, 0x13A, 0x0407);
    put16(bytes, 0x13C, 0x0543);
    put8(bytes, 0x13E, 0xef);
    put8(bytes, 0x13F, 0x02);
    put8(bytes, 0x140, 0x01);
    put8(bytes, 0x141, 1);
    put8(bytes, 0x142, 1);
    put8(bytes, 0x143, 2);
    put8(bytes, 0x144, 0x03);
    put8(bytes, 0x145, 0x01);
    put8(bytes, 0x146, 0x01);
    put8(bytes, 0x148, 0x0b);
    return bytes;
}

QByteArray importReplyOfYubikey()
{
    QByteArray bytes = opHeader(320, 0x0003);
    putText(bytes, 0x008, "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1");
    putText(bytes, 0x108, "1-1");
    put32(bytes, 0x128, 1);
    put32(bytes, 0x12C, 2);
    put32(bytes, 0x130, 2);
    put16(bytes, 0x134, 0x1050);
    put16(bytes, 0x136, 0x0407);
    put16(bytes, 0x138, 0x0543);
    put8(bytes, 0x13A, 0xef);
    put8(bytes, 0x13B, 0x02);
    put8(bytes, 0x13C, 0x01);
    put8(bytes, 0x13D, 1);
    put8(bytes, 0x13E, 1);
    put8(bytes, 0x13F, 2);
    return bytes;
}

// The rst's example CMD_SUBMIT, setup bytes chosen as zeros.
QByteArray docCapture()
{
    return QByteArray::fromHex("00000001 00000d05 0001000f 00000001 00000001"
                               "00000200 00000040 ffffffff 00000000 00000004"
                               "0000000000000000");
}

// What a decoder said, whatever its message type.
struct Outcome
{
    bool ok = false;
    bool whole = false;
    qsizetype consumed = 0;
    Error error;
};

template <typename T> Outcome outcomeOf(const cloop::Result<std::optional<Decoded<T>>> &result)
{
    if (!result.ok())
        return { false, false, 0, result.error() };
    if (!result.value())
        return { true, false, 0, {} };
    return { true, true, result.value()->consumed, {} };
}

Outcome decode(Decoder decoder, QByteArrayView bytes)
{
    switch (decoder) {
    case Decoder::Opening:
        return outcomeOf(decodeOpeningRequest(bytes));
    case Decoder::ImportReply:
        return outcomeOf(decodeImportReply(bytes));
    case Decoder::DevlistReply:
        return outcomeOf(decodeDevlistReply(bytes));
    case Decoder::Urb:
        break;
    }
    const auto header = decodeUrbHeader(bytes);
    if (!header.ok())
        return { false, false, 0, header.error() };
    return { true, true, kUrbHeaderSize, {} };
}

} // namespace

Q_DECLARE_METATYPE(Decoder)
Q_DECLARE_METATYPE(UrbHeader)
Q_DECLARE_METATYPE(OpStatus)

class TestUsbipProtocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void devlistRequest();
    void importRequest_data();
    void importRequest();
    void importRequestRefusesAnInvalidBusId_data();
    void importRequestRefusesAnInvalidBusId();
    void importReply();
    void importReplyRefusal_data();
    void importReplyRefusal();
    void devlistReplyOfOneDevice();
    void devlistReplyOfTwoDevices();
    void emptyDevlistReply();
    void everyPrefixIsNotYet_data();
    void everyPrefixIsNotYet();
    void malformedIsRefused_data();
    void malformedIsRefused();
    void urbHeaderOfTheDocCapture();
    void urbHeaderEncodings_data();
    void urbHeaderEncodings();
    void payloadSize_data();
    void payloadSize();
    void speedFromSysfs_data();
    void speedFromSysfs();
    void isValidBusId_data();
    void isValidBusId();
    void statusesAreDescribed();
};

void TestUsbipProtocol::devlistRequest()
{
    const QByteArray expected("\x01\x11\x80\x05\x00\x00\x00\x00", 8);
    QCOMPARE(encodeDevlistRequest(), expected);
    const auto decoded = decodeOpeningRequest(expected);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, 8);
    QCOMPARE((*decoded)->message, (OpeningRequest { OpeningRequest::Kind::Devlist, {} }));
}

void TestUsbipProtocol::importRequest_data()
{
    QTest::addColumn<QByteArray>("busId");
    QTest::newRow("1-1") << QByteArray("1-1");
    QTest::newRow("nested hub") << QByteArray("3-2.4.1");
    QTest::newRow("31 bytes") << QByteArray("123-123.123.123.123.123.123.123");
}

void TestUsbipProtocol::importRequest()
{
    QFETCH(QByteArray, busId);
    const QByteArray expected = importRequestBytes(busId);
    QCOMPARE(expected.size(), 40);
    const auto encoded = encodeImportRequest(busId);
    QVERIFY(encoded.ok());
    QCOMPARE(*encoded, expected);

    const auto decoded = decodeOpeningRequest(expected);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, 40);
    QCOMPARE((*decoded)->message, (OpeningRequest { OpeningRequest::Kind::Import, busId }));
}

void TestUsbipProtocol::importRequestRefusesAnInvalidBusId_data()
{
    QTest::addColumn<QByteArray>("busId");
    QTest::newRow("interface") << QByteArray("1-1:1.0");
    QTest::newRow("root hub") << QByteArray("usb1");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("32 bytes") << QByteArray("123-123.123.123.123.123.123.1234");
}

void TestUsbipProtocol::importRequestRefusesAnInvalidBusId()
{
    QFETCH(QByteArray, busId);
    const auto encoded = encodeImportRequest(busId);
    QVERIFY(!encoded.ok());
    QCOMPARE(encoded.error().code, QStringLiteral("invalid_busid"));
}

void TestUsbipProtocol::importReply()
{
    const QByteArray expected = importReplyOfYubikey();
    DeviceRecord device = yubikey();
    // The interface records belong to DEVLIST; the count still travels.
    device.interfaces.clear();
    QCOMPARE(encodeImportReply(OpStatus::Ok, device), expected);

    const auto decoded = decodeImportReply(expected);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, 320);
    QCOMPARE((*decoded)->message.status, 0u);
    QVERIFY((*decoded)->message.device.has_value());
    QCOMPARE(*(*decoded)->message.device, device);
    QCOMPARE((*decoded)->message.device->deviceId(), 0x00010002u);
}

void TestUsbipProtocol::importReplyRefusal_data()
{
    QTest::addColumn<OpStatus>("status");
    QTest::newRow("not available") << OpStatus::NotAvailable;
    QTest::newRow("busy") << OpStatus::DeviceBusy;
    QTest::newRow("device error") << OpStatus::DeviceError;
    QTest::newRow("no device") << OpStatus::NoDevice;
    QTest::newRow("error") << OpStatus::Error;
}

void TestUsbipProtocol::importReplyRefusal()
{
    QFETCH(OpStatus, status);
    const QByteArray expected = opHeader(8, 0x0003, quint32(status));
    QCOMPARE(encodeImportReply(status, yubikey()), expected);

    // Whatever the peer sends next is not part of the refusal.
    const auto decoded = decodeImportReply(expected + QByteArray(400, '\x01'));
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, 8);
    QCOMPARE((*decoded)->message.status, quint32(status));
    QVERIFY(!(*decoded)->message.device.has_value());
}

void TestUsbipProtocol::devlistReplyOfOneDevice()
{
    const QByteArray expected = devlistReplyOfYubikey();
    QCOMPARE(encodeDevlistReply({ yubikey() }), expected);

    const auto decoded = decodeDevlistReply(expected);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, expected.size());
    QCOMPARE((*decoded)->message, QList<DeviceRecord> { yubikey() });
}

void TestUsbipProtocol::devlistReplyOfTwoDevices()
{
    const QList<DeviceRecord> devices { yubikey(), hub() };
    const QByteArray encoded = encodeDevlistReply(devices);
    QCOMPARE(encoded.size(), 12 + (312 + 8) + 312);
    QCOMPARE(encoded.first(12 + 312 + 8).sliced(12), devlistReplyOfYubikey().sliced(12));
    QCOMPARE(encoded.mid(8, 4), QByteArray("\x00\x00\x00\x02", 4));
    // The second record starts right after the first one's interfaces.
    constexpr qsizetype second = 12 + 312 + 8;
    QCOMPARE(encoded.mid(second + 0x100, 8), QByteArray("3-2.4.1\0", 8));
    QCOMPARE(encoded.mid(second + 0x124, 4), QByteArray("\x00\x00\x00\x11", 4));
    QCOMPARE(encoded.at(second + 0x137), '\0');

    const auto decoded = decodeDevlistReply(encoded);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, encoded.size());
    QCOMPARE((*decoded)->message, devices);
}

void TestUsbipProtocol::emptyDevlistReply()
{
    const QByteArray expected = opHeader(12, 0x0005);
    QCOMPARE(encodeDevlistReply({}), expected);
    const auto decoded = decodeDevlistReply(expected);
    QVERIFY(decoded.ok());
    QVERIFY(decoded->has_value());
    QCOMPARE((*decoded)->consumed, 12);
    QVERIFY((*decoded)->message.isEmpty());
}

void TestUsbipProtocol::everyPrefixIsNotYet_data()
{
    QTest::addColumn<Decoder>("decoder");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("DEVLIST request")
        << Decoder::Opening << QByteArray("\x01\x11\x80\x05\x00\x00\x00\x00", 8);
    QTest::newRow("IMPORT request") << Decoder::Opening << importRequestBytes("3-2.4.1");
    QTest::newRow("IMPORT reply") << Decoder::ImportReply << importReplyOfYubikey();
    QTest::newRow("IMPORT refusal") << Decoder::ImportReply << opHeader(8, 0x0003, 4);
    QTest::newRow("DEVLIST reply") << Decoder::DevlistReply << devlistReplyOfYubikey();
    QTest::newRow("DEVLIST reply of two")
        << Decoder::DevlistReply << encodeDevlistReply({ hub(), yubikey() });
    QTest::newRow("empty DEVLIST reply") << Decoder::DevlistReply << opHeader(12, 0x0005);
}

void TestUsbipProtocol::everyPrefixIsNotYet()
{
    QFETCH(Decoder, decoder);
    QFETCH(QByteArray, message);
    for (qsizetype size = 0; size < message.size(); ++size) {
        const Outcome outcome = decode(decoder, message.first(size));
        if (!outcome.ok || outcome.whole)
            QFAIL(qPrintable(
                QStringLiteral("a prefix of %1 bytes: %2")
                    .arg(size)
                    .arg(outcome.ok ? QStringLiteral("decoded whole") : outcome.error.message)));
    }
    const Outcome whole = decode(decoder, message);
    QVERIFY2(whole.ok, qPrintable(whole.error.message));
    QVERIFY(whole.whole);
    QCOMPARE(whole.consumed, message.size());

    const Outcome followed
        = decode(decoder, message + encodeDevlistRequest() + QByteArray(500, '\xff'));
    QVERIFY(followed.ok && followed.whole);
    QCOMPARE(followed.consumed, message.size());
}

void TestUsbipProtocol::malformedIsRefused_data()
{
    QTest::addColumn<Decoder>("decoder");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    QByteArray badVersion = importRequestBytes("1-1");
    put16(badVersion, 0, 0x0106);
    QTest::newRow("version") << Decoder::Opening << badVersion
                             << QStringLiteral("USB/IP version 0x0106 is not 0x0111");
    QTest::newRow("version, header only") << Decoder::Opening << badVersion.first(8)
                                          << QStringLiteral("USB/IP version 0x0106 is not 0x0111");
    QTest::newRow("version of a reply") << Decoder::DevlistReply << opHeader(12, 0x0005, 0, 0x0100)
                                        << QStringLiteral("version 0x0100");
    QTest::newRow("code") << Decoder::Opening << opHeader(8, 0x8006)
                          << QStringLiteral("unexpected code 0x8006 in an opening request");
    QTest::newRow("a reply as a request")
        << Decoder::Opening << opHeader(8, 0x0005) << QStringLiteral("unexpected code 0x0005");
    QTest::newRow("code of an import reply")
        << Decoder::ImportReply << opHeader(8, 0x0005) << QStringLiteral("unexpected code 0x0005");
    QTest::newRow("code of a devlist reply") << Decoder::DevlistReply << opHeader(12, 0x8005)
                                             << QStringLiteral("unexpected code 0x8005");
    QTest::newRow("status in a DEVLIST request")
        << Decoder::Opening << opHeader(8, 0x8005, 1) << QStringLiteral("status 1");
    QTest::newRow("status in an IMPORT request")
        << Decoder::Opening << opHeader(8, 0x8003, 5) << QStringLiteral("status 5");
    QTest::newRow("bus id without NUL")
        << Decoder::Opening << importRequestBytes(QByteArray(32, '1'))
        << QStringLiteral("the bus id has no terminating NUL");
    QTest::newRow("garbage after the NUL")
        << Decoder::Opening << importRequestBytes(QByteArray("1-1\0x", 5))
        << QStringLiteral("after its end");
    QTest::newRow("garbage after the NUL, early")
        << Decoder::Opening << importRequestBytes(QByteArray("1-1\0x", 5)).first(13)
        << QStringLiteral("after its end");
    QTest::newRow("interface bus id")
        << Decoder::Opening << importRequestBytes("1-1:1.0")
        << QStringLiteral("the bus id \"1-1:1.0\" is not a USB device's bus id");
    QTest::newRow("root hub bus id") << Decoder::Opening << importRequestBytes("usb1")
                                     << QStringLiteral("the bus id \"usb1\" is not");
    QTest::newRow("empty bus id") << Decoder::Opening << importRequestBytes({})
                                  << QStringLiteral("the bus id \"\" is not");

    QByteArray tooMany = opHeader(12, 0x0005);
    put32(tooMany, 8, 70000);
    QTest::newRow("ndev") << Decoder::DevlistReply << tooMany
                          << QStringLiteral(
                                 "a DEVLIST reply of 70000 devices exceeds the limit of 256");
    put32(tooMany, 8, 257);
    QTest::newRow("ndev 257") << Decoder::DevlistReply << tooMany << QStringLiteral("257 devices");
    QTest::newRow("refused device list")
        << Decoder::DevlistReply << opHeader(8, 0x0005, 4)
        << QStringLiteral("the peer refused the device list: no such device is exported");
    QByteArray unterminatedPath = devlistReplyOfYubikey();
    unterminatedPath.replace(0x00C, 256, QByteArray(256, 'p'));
    QTest::newRow("path without NUL") << Decoder::DevlistReply << unterminatedPath
                                      << QStringLiteral("the device path has no terminating NUL");
    QByteArray unterminatedBusId = importReplyOfYubikey();
    unterminatedBusId.replace(0x108, 32, QByteArray(32, '1'));
    QTest::newRow("reply bus id without NUL")
        << Decoder::ImportReply << unterminatedBusId
        << QStringLiteral("the bus id has no terminating NUL");

    QByteArray unknownCommand = docCapture();
    put32(unknownCommand, 0, 5);
    QTest::newRow("URB command 5")
        << Decoder::Urb << unknownCommand << QStringLiteral("unknown URB command 5");
    put32(unknownCommand, 0, 0);
    QTest::newRow("URB command 0")
        << Decoder::Urb << unknownCommand << QStringLiteral("unknown URB command 0");
    QTest::newRow("short URB header")
        << Decoder::Urb << docCapture().first(47) << QStringLiteral("short");
}

void TestUsbipProtocol::malformedIsRefused()
{
    QFETCH(Decoder, decoder);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const Outcome outcome = decode(decoder, bytes);
    QVERIFY(!outcome.ok);
    QCOMPARE(outcome.error.code, QStringLiteral("usbip_malformed"));
    QVERIFY2(outcome.error.message.contains(message), qPrintable(outcome.error.message));
}

void TestUsbipProtocol::urbHeaderOfTheDocCapture()
{
    const QByteArray capture = docCapture();
    const auto decoded = decodeUrbHeader(capture);
    QVERIFY(decoded.ok());
    UrbHeader expected;
    expected.command = UrbCommand::CmdSubmit;
    expected.sequence = 0xd05;
    expected.deviceId = 0x0001000f;
    expected.direction = kDirectionIn;
    expected.endpoint = 1;
    expected.flags = 0x200;
    expected.length = 64;
    expected.startFrame = -1;
    expected.packetCount = 0;
    expected.interval = 4;
    QCOMPARE(*decoded, expected);
    QCOMPARE(encodeUrbHeader(*decoded), capture);
    // Only the first 48 bytes are the header.
    QCOMPARE(*decodeUrbHeader(capture + "trailing payload"), expected);
}

void TestUsbipProtocol::urbHeaderEncodings_data()
{
    QTest::addColumn<UrbHeader>("header");
    QTest::addColumn<QByteArray>("expected");
    // A header decoded from `expected` has zeros where the message has no field.
    QTest::addColumn<UrbHeader>("decoded");

    UrbHeader unlink;
    unlink.command = UrbCommand::CmdUnlink;
    unlink.sequence = 0xd06;
    unlink.deviceId = 0x0001000f;
    unlink.direction = kDirectionOut;
    unlink.endpoint = 0;
    unlink.flags = 0xd05;
    UrbHeader unlinkWithJunk = unlink;
    unlinkWithJunk.length = 64;
    unlinkWithJunk.interval = 4;
    unlinkWithJunk.setup = { 1, 2, 3, 4, 5, 6, 7, 8 };
    QByteArray unlinkBytes(48, '\0');
    put32(unlinkBytes, 0x00, 2);
    put32(unlinkBytes, 0x04, 0xd06);
    put32(unlinkBytes, 0x08, 0x0001000f);
    put32(unlinkBytes, 0x14, 0xd05);
    QTest::newRow("CMD_UNLINK") << unlink << unlinkBytes << unlink;
    QTest::newRow("CMD_UNLINK, submit fields ignored") << unlinkWithJunk << unlinkBytes << unlink;

    UrbHeader retUnlink;
    retUnlink.command = UrbCommand::RetUnlink;
    retUnlink.sequence = 0xd06;
    retUnlink.status = -104; // -ECONNRESET: the URB was unlinked
    QByteArray retUnlinkBytes(48, '\0');
    put32(retUnlinkBytes, 0x00, 4);
    put32(retUnlinkBytes, 0x04, 0xd06);
    put32(retUnlinkBytes, 0x14, quint32(-104));
    QTest::newRow("RET_UNLINK") << retUnlink << retUnlinkBytes << retUnlink;

    UrbHeader retSubmit;
    retSubmit.command = UrbCommand::RetSubmit;
    retSubmit.sequence = 0xd05;
    retSubmit.status = -32; // -EPIPE: a stall
    retSubmit.length = 18;
    retSubmit.startFrame = 7;
    retSubmit.packetCount = 3;
    retSubmit.interval = 1;
    QByteArray retSubmitBytes(48, '\0');
    put32(retSubmitBytes, 0x00, 3);
    put32(retSubmitBytes, 0x04, 0xd05);
    put32(retSubmitBytes, 0x14, quint32(-32));
    put32(retSubmitBytes, 0x18, 18);
    put32(retSubmitBytes, 0x1C, 7);
    put32(retSubmitBytes, 0x20, 3);
    put32(retSubmitBytes, 0x24, 1);
    QTest::newRow("RET_SUBMIT") << retSubmit << retSubmitBytes << retSubmit;

    UrbHeader control;
    control.command = UrbCommand::CmdSubmit;
    control.sequence = 1;
    control.deviceId = 0x00030011;
    control.direction = kDirectionIn;
    control.length = 18;
    control.packetCount = -1;
    control.setup = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 }; // GET_DESCRIPTOR(device)
    QByteArray controlBytes(48, '\0');
    put32(controlBytes, 0x00, 1);
    put32(controlBytes, 0x04, 1);
    put32(controlBytes, 0x08, 0x00030011);
    put32(controlBytes, 0x0C, 1);
    put32(controlBytes, 0x18, 18);
    put32(controlBytes, 0x20, quint32(-1));
    putText(controlBytes, 0x28, QByteArray("\x80\x06\x00\x01\x00\x00\x12\x00", 8));
    QTest::newRow("CMD_SUBMIT with setup") << control << controlBytes << control;
}

void TestUsbipProtocol::urbHeaderEncodings()
{
    QFETCH(UrbHeader, header);
    QFETCH(QByteArray, expected);
    QFETCH(UrbHeader, decoded);
    QCOMPARE(encodeUrbHeader(header), expected);
    const auto back = decodeUrbHeader(expected);
    QVERIFY(back.ok());
    QCOMPARE(*back, decoded);
}

void TestUsbipProtocol::payloadSize_data()
{
    QTest::addColumn<UrbHeader>("header");
    QTest::addColumn<quint32>("directionOfCommand");
    QTest::addColumn<qsizetype>("size");

    UrbHeader submit;
    submit.command = UrbCommand::CmdSubmit;
    submit.length = 64;
    submit.direction = kDirectionOut;
    QTest::newRow("OUT submit") << submit << kDirectionOut << qsizetype(64);
    UrbHeader nonIso = submit;
    nonIso.packetCount = -1;
    QTest::newRow("OUT submit, packet count -1") << nonIso << kDirectionOut << qsizetype(64);
    submit.direction = kDirectionIn;
    QTest::newRow("IN submit") << submit << kDirectionIn << qsizetype(0);
    UrbHeader isoOut = submit;
    isoOut.direction = kDirectionOut;
    isoOut.packetCount = 3;
    QTest::newRow("ISO OUT submit, 3 packets") << isoOut << kDirectionOut << qsizetype(64 + 48);
    UrbHeader isoIn = submit;
    isoIn.packetCount = 3;
    QTest::newRow("ISO IN submit, 3 packets") << isoIn << kDirectionIn << qsizetype(48);

    UrbHeader ret;
    ret.command = UrbCommand::RetSubmit;
    ret.length = 18;
    QTest::newRow("RET_SUBMIT of IN") << ret << kDirectionIn << qsizetype(18);
    QTest::newRow("RET_SUBMIT of OUT") << ret << kDirectionOut << qsizetype(0);
    ret.packetCount = 3;
    QTest::newRow("RET_SUBMIT of ISO IN") << ret << kDirectionIn << qsizetype(18 + 48);
    ret.packetCount = -1;
    QTest::newRow("RET_SUBMIT, packet count -1") << ret << kDirectionIn << qsizetype(18);

    UrbHeader unlink;
    unlink.command = UrbCommand::CmdUnlink;
    unlink.length = 64;
    QTest::newRow("CMD_UNLINK") << unlink << kDirectionOut << qsizetype(0);
    unlink.command = UrbCommand::RetUnlink;
    QTest::newRow("RET_UNLINK") << unlink << kDirectionIn << qsizetype(0);

    UrbHeader negative = isoOut;
    negative.length = -1;
    QTest::newRow("negative length") << negative << kDirectionOut << qsizetype(-1);
    UrbHeader fewPackets = isoOut;
    fewPackets.packetCount = -2;
    QTest::newRow("packet count -2") << fewPackets << kDirectionOut << qsizetype(-1);
    UrbHeader manyPackets = isoOut;
    manyPackets.packetCount = 1025;
    QTest::newRow("packet count 1025") << manyPackets << kDirectionOut << qsizetype(-1);
    manyPackets.packetCount = 1024;
    QTest::newRow("packet count 1024") << manyPackets << kDirectionOut << qsizetype(64 + 16 * 1024);
    UrbHeader strangeDirection = submit;
    strangeDirection.direction = 2;
    QTest::newRow("direction 2") << strangeDirection << kDirectionOut << qsizetype(-1);
}

void TestUsbipProtocol::payloadSize()
{
    QFETCH(UrbHeader, header);
    QFETCH(quint32, directionOfCommand);
    QFETCH(qsizetype, size);
    QCOMPARE(cloop::device::usb::usbip::payloadSize(header, directionOfCommand), size);
}

void TestUsbipProtocol::speedFromSysfs_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("speed"); // -1: not known
    QTest::newRow("low") << QStringLiteral("1.5") << int(Speed::Low);
    QTest::newRow("full") << QStringLiteral("12") << int(Speed::Full);
    QTest::newRow("high") << QStringLiteral("480\n") << int(Speed::High);
    QTest::newRow("super") << QStringLiteral("5000") << int(Speed::Super);
    QTest::newRow("super plus") << QStringLiteral("10000") << int(Speed::SuperPlus);
    QTest::newRow("super plus 2x2") << QStringLiteral(" 20000 ") << int(Speed::SuperPlus);
    QTest::newRow("unknown") << QStringLiteral("unknown\n") << int(Speed::Unknown);
    QTest::newRow("wireless") << QStringLiteral("53.3-480") << int(Speed::Wireless);
    QTest::newRow("empty") << QString() << -1;
    QTest::newRow("number") << QStringLiteral("481") << -1;
    QTest::newRow("word") << QStringLiteral("fast") << -1;
    QTest::newRow("inner space") << QStringLiteral("1 2") << -1;
}

void TestUsbipProtocol::speedFromSysfs()
{
    QFETCH(QString, text);
    QFETCH(int, speed);
    const std::optional<Speed> parsed = cloop::device::usb::usbip::speedFromSysfs(text);
    QCOMPARE(parsed.has_value(), speed >= 0);
    if (parsed)
        QCOMPARE(int(*parsed), speed);
}

void TestUsbipProtocol::isValidBusId_data()
{
    QTest::addColumn<QByteArray>("busId");
    QTest::addColumn<bool>("valid");
    QTest::newRow("1-1") << QByteArray("1-1") << true;
    QTest::newRow("3-2.4.1") << QByteArray("3-2.4.1") << true;
    QTest::newRow("12-3") << QByteArray("12-3") << true;
    QTest::newRow("three digits") << QByteArray("123-456") << true;
    QTest::newRow("31 bytes") << QByteArray("123-123.123.123.123.123.123.123") << true;
    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("1-") << QByteArray("1-") << false;
    QTest::newRow("-1") << QByteArray("-1") << false;
    QTest::newRow("interface") << QByteArray("1-1:1.0") << false;
    QTest::newRow("root hub") << QByteArray("usb1") << false;
    QTest::newRow("trailing space") << QByteArray("1-1 ") << false;
    QTest::newRow("trailing newline") << QByteArray("1-1\n") << false;
    QTest::newRow("32 bytes") << QByteArray("123-123.123.123.123.123.123.1234") << false;
    QTest::newRow("four digits") << QByteArray("1234-1") << false;
    QTest::newRow("port of four digits") << QByteArray("1-1234") << false;
    QTest::newRow("sign") << QByteArray("+1-1") << false;
    QTest::newRow("two dashes") << QByteArray("1-1-1") << false;
    QTest::newRow("dot before dash") << QByteArray("1.1-1") << false;
    QTest::newRow("empty port") << QByteArray("1-1..2") << false;
    QTest::newRow("trailing dot") << QByteArray("1-1.") << false;
    QTest::newRow("no dash") << QByteArray("111") << false;
    QTest::newRow("embedded NUL") << QByteArray("1-1\0", 4) << false;
}

void TestUsbipProtocol::isValidBusId()
{
    QFETCH(QByteArray, busId);
    QFETCH(bool, valid);
    QCOMPARE(cloop::device::usb::usbip::isValidBusId(busId), valid);
}

void TestUsbipProtocol::statusesAreDescribed()
{
    QCOMPARE(describeStatus(4), QStringLiteral("no such device is exported"));
    QCOMPARE(describeStatus(2), QStringLiteral("the device is busy"));
    QCOMPARE(describeStatus(70000), QStringLiteral("status 70000"));
    QSet<QString> texts;
    for (quint32 status = 0; status <= 5; ++status)
        texts.insert(describeStatus(status));
    QCOMPARE(texts.size(), 6);
}

QTEST_APPLESS_MAIN(TestUsbipProtocol)
#include "tst_usbipprotocol.moc"
