#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <array>
#include <optional>

// The USB/IP wire protocol, as Linux's usbip tools and drivers speak it
// (Documentation/usb/usbip_protocol.rst): the opening requests and replies
// (OP_*), and the 48-byte header of the data phase. Every multi-byte
// integer is big-endian on the wire. Everything here is pure: bytes in,
// values out, and every decoder is written for input from a peer that
// cannot be trusted.
namespace cloop::device::usb::usbip {

inline constexpr quint16 kProtocolVersion = 0x0111;

inline constexpr quint16 kOpRequestDevlist = 0x8005;
inline constexpr quint16 kOpReplyDevlist = 0x0005;
inline constexpr quint16 kOpRequestImport = 0x8003;
inline constexpr quint16 kOpReplyImport = 0x0003;

inline constexpr qsizetype kOpHeaderSize = 8;
inline constexpr qsizetype kPathSize = 256;
inline constexpr qsizetype kBusIdSize = 32;
inline constexpr qsizetype kDeviceRecordSize = 312;
inline constexpr qsizetype kInterfaceRecordSize = 4;
inline constexpr qsizetype kImportRequestSize = kOpHeaderSize + kBusIdSize; // 40
inline constexpr qsizetype kImportReplySize = kOpHeaderSize + kDeviceRecordSize; // 320
inline constexpr qsizetype kUrbHeaderSize = 48;

// A DEVLIST reply this side reads holds at most this many devices; a peer
// announcing more is refused before anything is allocated for them.
inline constexpr quint32 kMaxListedDevices = 256;

// Status of an OP reply (tools/usb/usbip/libsrc/usbip_common.h). Anything
// but Ok is a failure.
enum class OpStatus : quint32
{
    Ok = 0,
    NotAvailable = 1,
    DeviceBusy = 2,
    DeviceError = 3,
    NoDevice = 4,
    Error = 5,
};
// "no such device", "the device is busy", … (unknown values: "status N").
QString describeStatus(quint32 status);

// enum usb_device_speed (include/uapi/linux/usb/ch9.h).
enum class Speed : quint32
{
    Unknown = 0,
    Low = 1,
    Full = 2,
    High = 3,
    Wireless = 4,
    Super = 5,
    SuperPlus = 6,
};
// The sysfs `speed` attribute ("1.5", "12", "480", "5000", "10000",
// "20000"; "unknown") as the enum; nullopt for text it does not know.
// "10000" and "20000" are SuperPlus (stock usbip gets this wrong).
std::optional<Speed> speedFromSysfs(QStringView text);
// "high speed (480 Mbit/s)", for people.
inline QString describeSpeed(quint32 speed)
{
    switch (Speed(speed)) {
    case Speed::Low:
        return QStringLiteral("low speed (1.5 Mbit/s)");
    case Speed::Full:
        return QStringLiteral("full speed (12 Mbit/s)");
    case Speed::High:
        return QStringLiteral("high speed (480 Mbit/s)");
    case Speed::Wireless:
        return QStringLiteral("wireless (480 Mbit/s)");
    case Speed::Super:
        return QStringLiteral("SuperSpeed (5 Gbit/s)");
    case Speed::SuperPlus:
        return QStringLiteral("SuperSpeed+ (10 Gbit/s or more)");
    case Speed::Unknown:
        break;
    }
    return QStringLiteral("unknown speed");
}

struct InterfaceRecord
{
    quint8 interfaceClass = 0;
    quint8 interfaceSubClass = 0;
    quint8 interfaceProtocol = 0;

    friend bool operator==(const InterfaceRecord &, const InterfaceRecord &) = default;
};

// struct usbip_usb_device (312 bytes on the wire) plus, in a DEVLIST reply,
// its bNumInterfaces interface records.
struct DeviceRecord
{
    QByteArray path; // sysfs path, at most 255 bytes
    QByteArray busId; // "1-1", at most 31 bytes
    quint32 busNumber = 0;
    quint32 deviceNumber = 0;
    quint32 speed = 0; // Speed, kept raw: a peer may send any value
    quint16 vendorId = 0;
    quint16 productId = 0;
    quint16 bcdDevice = 0;
    quint8 deviceClass = 0;
    quint8 deviceSubClass = 0;
    quint8 deviceProtocol = 0;
    quint8 configurationValue = 0;
    quint8 configurationCount = 0;
    quint8 interfaceCount = 0;
    QList<InterfaceRecord> interfaces; // DEVLIST only; interfaceCount of them

    // What vhci_hcd stamps on every command: (busnum << 16) | devnum.
    quint32 deviceId() const { return (busNumber << 16) | (deviceNumber & 0xffff); }

    friend bool operator==(const DeviceRecord &, const DeviceRecord &) = default;
};

// A bus id as sysfs names a USB device: "B-P[.P…]" with decimal numbers,
// 3..31 bytes. Interfaces ("1-1:1.0") and root hubs ("usb1") are not.
bool isValidBusId(QByteArrayView busId);

// --- Encoding (this side's messages) ---------------------------------------

QByteArray encodeDevlistRequest();
// Refused ("invalid_busid") when the bus id is not valid.
Result<QByteArray> encodeImportRequest(QByteArrayView busId);
// Every device with its interface records (interfaceCount is written as
// the number of records in `interfaces`).
QByteArray encodeDevlistReply(const QList<DeviceRecord> &devices);
// The 8-byte header alone unless status is Ok; then the header and the
// device record without interfaces (320 bytes).
QByteArray encodeImportReply(OpStatus status, const DeviceRecord &device = {});

// --- Decoding (the peer's messages) ------------------------------------------
//
// All decoders take what has arrived so far. They answer "not yet" (an
// empty optional) while a well-formed message is still incomplete, the
// message and the number of bytes it took once it is whole, and an error
// (code "usbip_malformed", a message saying what is wrong) as soon as the
// bytes cannot become a valid message: a wrong version, an unexpected
// code, a non-zero status in a request, a bus id without its terminating
// NUL or with characters a bus id cannot have, a count beyond the limits.

// What a consumer may ask first on a connection.
struct OpeningRequest
{
    enum class Kind
    {
        Devlist,
        Import
    };
    Kind kind = Kind::Devlist;
    QByteArray busId; // Import only

    friend bool operator==(const OpeningRequest &, const OpeningRequest &) = default;
};

template <typename T> struct Decoded
{
    T message;
    qsizetype consumed = 0;
};

// The server side's parser of the one request that opens a connection.
// An Import whose bus id is well-formed but not one this side carries is
// NOT an error here: the caller answers it on the wire.
Result<std::optional<Decoded<OpeningRequest>>> decodeOpeningRequest(QByteArrayView bytes);

struct ImportReply
{
    quint32 status = 0;
    std::optional<DeviceRecord> device; // when status is 0
};
Result<std::optional<Decoded<ImportReply>>> decodeImportReply(QByteArrayView bytes);
Result<std::optional<Decoded<QList<DeviceRecord>>>> decodeDevlistReply(QByteArrayView bytes);

// --- Data phase ----------------------------------------------------------------

enum class UrbCommand : quint32
{
    CmdSubmit = 1,
    CmdUnlink = 2,
    RetSubmit = 3,
    RetUnlink = 4,
};

inline constexpr quint32 kDirectionOut = 0;
inline constexpr quint32 kDirectionIn = 1;

// struct usbip_header: the basic part and the command's union, flattened.
// Field meaning by command (rst table):
//   CMD_SUBMIT: flags = transfer_flags, length = transfer_buffer_length,
//               startFrame, packetCount, interval, setup
//   RET_SUBMIT: status, length = actual_length, startFrame, packetCount,
//               errorCount (in `interval`)
//   CMD_UNLINK: unlinkSequence (in `flags`)
//   RET_UNLINK: status
struct UrbHeader
{
    UrbCommand command = UrbCommand::CmdSubmit;
    quint32 sequence = 0;
    quint32 deviceId = 0;
    quint32 direction = kDirectionOut;
    quint32 endpoint = 0;
    quint32 flags = 0; // transfer_flags, or unlink_seqnum
    qint32 status = 0; // RET_*: 0 or -errno
    qint32 length = 0;
    qint32 startFrame = 0;
    qint32 packetCount = 0;
    qint32 interval = 0; // error_count in RET_SUBMIT
    std::array<quint8, 8> setup {};

    friend bool operator==(const UrbHeader &, const UrbHeader &) = default;
};

QByteArray encodeUrbHeader(const UrbHeader &header);
// Exactly kUrbHeaderSize bytes are read; an unknown command is an error.
Result<UrbHeader> decodeUrbHeader(QByteArrayView bytes);

// How many bytes follow a header on the wire (rst "Framing"): OUT data
// after CMD_SUBMIT, IN data after RET_SUBMIT (the caller knows the
// direction of the command it answers), and 16 bytes per ISO packet
// descriptor when packetCount is neither 0 nor -1.
qsizetype payloadSize(const UrbHeader &header, quint32 directionOfCommand);

} // namespace cloop::device::usb::usbip
