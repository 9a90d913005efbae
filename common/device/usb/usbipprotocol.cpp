#include "common/device/usb/usbipprotocol.h"

#include <QtEndian>

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace cloop::device::usb::usbip {

namespace {

// The kernel's own bound (USBIP_MAX_ISO_PACKETS, drivers/usb/usbip): a
// count beyond it cannot come from a real URB, and bounding it keeps the
// descriptor bytes a caller reads for one header small.
constexpr qint32 kMaxIsoPackets = 1024;
constexpr qsizetype kIsoDescriptorSize = 16;
constexpr qsizetype kDevlistHeaderSize = kOpHeaderSize + 4;

// Offsets inside struct usbip_usb_device.
constexpr qsizetype kBusIdAt = 0x100;
constexpr qsizetype kBusNumberAt = 0x120;
constexpr qsizetype kDeviceNumberAt = 0x124;
constexpr qsizetype kSpeedAt = 0x128;
constexpr qsizetype kVendorAt = 0x12C;
constexpr qsizetype kProductAt = 0x12E;
constexpr qsizetype kBcdDeviceAt = 0x130;
constexpr qsizetype kDeviceClassAt = 0x132;

Error malformed(const QString &what)
{
    return Error::make(QStringLiteral("usbip_malformed"), what);
}

QString hex4(quint16 value)
{
    return QStringLiteral("0x%1").arg(value, 4, 16, QLatin1Char('0'));
}

quint8 u8At(QByteArrayView bytes, qsizetype at)
{
    return static_cast<quint8>(bytes[at]);
}

quint16 be16At(QByteArrayView bytes, qsizetype at)
{
    return qFromBigEndian<quint16>(bytes.data() + at);
}

quint32 be32At(QByteArrayView bytes, qsizetype at)
{
    return qFromBigEndian<quint32>(bytes.data() + at);
}

QByteArray opHeader(quint16 code, quint32 status, qsizetype totalSize)
{
    QByteArray out(totalSize, '\0');
    qToBigEndian(kProtocolVersion, out.data());
    qToBigEndian(code, out.data() + 2);
    qToBigEndian(status, out.data() + 4);
    return out;
}

// Judges the version and then the code as soon as their bytes are in, so a
// peer speaking something else is refused before it sends a whole message.
std::optional<Error> checkVersionAndCode(
    QByteArrayView bytes, std::initializer_list<quint16> codes, const char *where)
{
    if (bytes.size() >= 2 && be16At(bytes, 0) != kProtocolVersion)
        return malformed(QStringLiteral("USB/IP version %1 is not %2")
                             .arg(hex4(be16At(bytes, 0)), hex4(kProtocolVersion)));
    if (bytes.size() >= 4) {
        const quint16 code = be16At(bytes, 2);
        if (std::find(codes.begin(), codes.end(), code) == codes.end())
            return malformed(
                QStringLiteral("unexpected code %1 in %2").arg(hex4(code), QLatin1String(where)));
    }
    return std::nullopt;
}

// A NUL-terminated string filling a fixed field: the terminator must lie
// inside the field, or a reader in C would run past it.
std::optional<QByteArray> fixedString(QByteArrayView field)
{
    const qsizetype nul = field.indexOf('\0');
    if (nul < 0)
        return std::nullopt;
    return field.first(nul).toByteArray();
}

void writeFixedString(char *to, const QByteArray &text, qsizetype fieldSize)
{
    // Longer text is cut so the terminating NUL always fits.
    std::memcpy(to, text.constData(), size_t(qMin(text.size(), fieldSize - 1)));
}

void writeDevice(char *to, const DeviceRecord &device, quint8 interfaceCount)
{
    writeFixedString(to, device.path, kPathSize);
    writeFixedString(to + kBusIdAt, device.busId, kBusIdSize);
    qToBigEndian(device.busNumber, to + kBusNumberAt);
    qToBigEndian(device.deviceNumber, to + kDeviceNumberAt);
    qToBigEndian(device.speed, to + kSpeedAt);
    qToBigEndian(device.vendorId, to + kVendorAt);
    qToBigEndian(device.productId, to + kProductAt);
    qToBigEndian(device.bcdDevice, to + kBcdDeviceAt);
    const quint8 tail[] = { device.deviceClass, device.deviceSubClass, device.deviceProtocol,
        device.configurationValue, device.configurationCount, interfaceCount };
    std::memcpy(to + kDeviceClassAt, tail, sizeof tail);
}

// `record` is exactly kDeviceRecordSize bytes.
Result<DeviceRecord> readDevice(QByteArrayView record)
{
    DeviceRecord device;
    const auto path = fixedString(record.first(kPathSize));
    if (!path)
        return malformed(QStringLiteral("the device path has no terminating NUL"));
    const auto busId = fixedString(record.sliced(kBusIdAt, kBusIdSize));
    if (!busId)
        return malformed(QStringLiteral("the bus id has no terminating NUL"));
    device.path = *path;
    device.busId = *busId;
    device.busNumber = be32At(record, kBusNumberAt);
    device.deviceNumber = be32At(record, kDeviceNumberAt);
    device.speed = be32At(record, kSpeedAt);
    device.vendorId = be16At(record, kVendorAt);
    device.productId = be16At(record, kProductAt);
    device.bcdDevice = be16At(record, kBcdDeviceAt);
    device.deviceClass = u8At(record, kDeviceClassAt);
    device.deviceSubClass = u8At(record, kDeviceClassAt + 1);
    device.deviceProtocol = u8At(record, kDeviceClassAt + 2);
    device.configurationValue = u8At(record, kDeviceClassAt + 3);
    device.configurationCount = u8At(record, kDeviceClassAt + 4);
    device.interfaceCount = u8At(record, kDeviceClassAt + 5);
    return device;
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

} // namespace

QString describeStatus(quint32 status)
{
    switch (OpStatus(status)) {
    case OpStatus::Ok:
        return QStringLiteral("success");
    case OpStatus::NotAvailable:
        return QStringLiteral("the device is not available");
    case OpStatus::DeviceBusy:
        return QStringLiteral("the device is busy");
    case OpStatus::DeviceError:
        return QStringLiteral("the device is in an error state");
    case OpStatus::NoDevice:
        return QStringLiteral("no such device is exported");
    case OpStatus::Error:
        return QStringLiteral("the request failed");
    }
    return QStringLiteral("status %1").arg(status);
}

std::optional<Speed> speedFromSysfs(QStringView text)
{
    const QStringView t = text.trimmed();
    if (t == u"1.5")
        return Speed::Low;
    if (t == u"12")
        return Speed::Full;
    if (t == u"480")
        return Speed::High;
    if (t == u"5000")
        return Speed::Super;
    if (t == u"10000" || t == u"20000")
        return Speed::SuperPlus;
    if (t == u"unknown")
        return Speed::Unknown;
    if (t == u"53.3-480")
        return Speed::Wireless;
    return std::nullopt;
}

bool isValidBusId(QByteArrayView busId)
{
    if (busId.size() < 3 || busId.size() >= kBusIdSize)
        return false;
    // Numbers of 1..3 digits: the bus, '-', then ports joined by '.'.
    qsizetype digits = 0;
    bool sawDash = false;
    for (const char c : busId) {
        if (isDigit(c)) {
            if (++digits > 3)
                return false;
            continue;
        }
        if (digits == 0 || (c != '-' && c != '.') || (c == '-') == sawDash)
            return false;
        sawDash = true;
        digits = 0;
    }
    return sawDash && digits > 0;
}

QByteArray encodeDevlistRequest()
{
    return opHeader(kOpRequestDevlist, 0, kOpHeaderSize);
}

Result<QByteArray> encodeImportRequest(QByteArrayView busId)
{
    if (!isValidBusId(busId))
        return Error::make(QStringLiteral("invalid_busid"),
            QStringLiteral("\"%1\" is not a USB device's bus id")
                .arg(QString::fromLatin1(busId.toByteArray())));
    QByteArray out = opHeader(kOpRequestImport, 0, kImportRequestSize);
    std::memcpy(out.data() + kOpHeaderSize, busId.data(), size_t(busId.size()));
    return out;
}

QByteArray encodeDevlistReply(const QList<DeviceRecord> &devices)
{
    qsizetype size = kDevlistHeaderSize;
    for (const DeviceRecord &device : devices)
        size += kDeviceRecordSize
            + qMin(device.interfaces.size(), qsizetype(255)) * kInterfaceRecordSize;
    QByteArray out = opHeader(kOpReplyDevlist, 0, size);
    qToBigEndian(quint32(devices.size()), out.data() + kOpHeaderSize);
    char *at = out.data() + kDevlistHeaderSize;
    for (const DeviceRecord &device : devices) {
        // bNumInterfaces is one byte: more records than it can count would
        // desynchronise the reader, so they are left out.
        const auto count = quint8(qMin(device.interfaces.size(), qsizetype(255)));
        writeDevice(at, device, count);
        at += kDeviceRecordSize;
        for (qsizetype i = 0; i < count; ++i, at += kInterfaceRecordSize) {
            const InterfaceRecord &in = device.interfaces.at(i);
            at[0] = char(in.interfaceClass);
            at[1] = char(in.interfaceSubClass);
            at[2] = char(in.interfaceProtocol);
        }
    }
    return out;
}

QByteArray encodeImportReply(OpStatus status, const DeviceRecord &device)
{
    if (status != OpStatus::Ok)
        return opHeader(kOpReplyImport, quint32(status), kOpHeaderSize);
    QByteArray out = opHeader(kOpReplyImport, 0, kImportReplySize);
    // No interface records follow here, so bNumInterfaces is the device's
    // own count, not the size of `interfaces`.
    writeDevice(out.data() + kOpHeaderSize, device, device.interfaceCount);
    return out;
}

Result<std::optional<Decoded<OpeningRequest>>> decodeOpeningRequest(QByteArrayView bytes)
{
    if (auto error
        = checkVersionAndCode(bytes, { kOpRequestDevlist, kOpRequestImport }, "an opening request"))
        return *error;
    if (bytes.size() < kOpHeaderSize)
        return std::optional<Decoded<OpeningRequest>>();
    if (const quint32 status = be32At(bytes, 4); status != 0)
        return malformed(QStringLiteral("a request carries status %1 instead of 0").arg(status));
    if (be16At(bytes, 2) == kOpRequestDevlist)
        return std::optional(
            Decoded<OpeningRequest> { { OpeningRequest::Kind::Devlist, {} }, kOpHeaderSize });

    // The bus id is judged as far as it has arrived: once its NUL is in,
    // the text is complete and everything after it must be padding.
    const QByteArrayView field
        = bytes.sliced(kOpHeaderSize).first(qMin(bytes.size() - kOpHeaderSize, kBusIdSize));
    const qsizetype nul = field.indexOf('\0');
    if (nul < 0) {
        if (field.size() == kBusIdSize)
            return malformed(QStringLiteral("the bus id has no terminating NUL"));
        return std::optional<Decoded<OpeningRequest>>();
    }
    const QByteArrayView busId = field.first(nul);
    if (!isValidBusId(busId))
        return malformed(QStringLiteral("the bus id \"%1\" is not a USB device's bus id")
                             .arg(QString::fromLatin1(busId.toByteArray())));
    for (const char c : field.sliced(nul))
        if (c != '\0')
            return malformed(QStringLiteral("the bus id has bytes other than NUL after its end"));
    if (field.size() < kBusIdSize)
        return std::optional<Decoded<OpeningRequest>>();
    return std::optional(Decoded<OpeningRequest> {
        { OpeningRequest::Kind::Import, busId.toByteArray() }, kImportRequestSize });
}

Result<std::optional<Decoded<ImportReply>>> decodeImportReply(QByteArrayView bytes)
{
    if (auto error = checkVersionAndCode(bytes, { kOpReplyImport }, "an IMPORT reply"))
        return *error;
    if (bytes.size() < kOpHeaderSize)
        return std::optional<Decoded<ImportReply>>();
    const quint32 status = be32At(bytes, 4);
    // A refusal is the header alone (usbip_net_send_op_common, nothing after).
    if (status != 0)
        return std::optional(Decoded<ImportReply> { { status, std::nullopt }, kOpHeaderSize });
    if (bytes.size() < kImportReplySize)
        return std::optional<Decoded<ImportReply>>();
    auto device = readDevice(bytes.sliced(kOpHeaderSize, kDeviceRecordSize));
    if (!device)
        return device.error();
    return std::optional(
        Decoded<ImportReply> { { 0, std::move(device).value() }, kImportReplySize });
}

Result<std::optional<Decoded<QList<DeviceRecord>>>> decodeDevlistReply(QByteArrayView bytes)
{
    using Answer = std::optional<Decoded<QList<DeviceRecord>>>;
    if (auto error = checkVersionAndCode(bytes, { kOpReplyDevlist }, "a DEVLIST reply"))
        return *error;
    if (bytes.size() < kOpHeaderSize)
        return Answer();
    if (const quint32 status = be32At(bytes, 4); status != 0)
        return malformed(
            QStringLiteral("the peer refused the device list: %1").arg(describeStatus(status)));
    if (bytes.size() < kDevlistHeaderSize)
        return Answer();
    const quint32 count = be32At(bytes, kOpHeaderSize);
    if (count > kMaxListedDevices)
        return malformed(QStringLiteral("a DEVLIST reply of %1 devices exceeds the limit of %2")
                             .arg(count)
                             .arg(kMaxListedDevices));

    QList<DeviceRecord> devices;
    // The count is the peer's word; only records that have arrived are
    // room worth making.
    devices.reserve(
        qMin(qsizetype(count), (bytes.size() - kDevlistHeaderSize) / kDeviceRecordSize));
    qsizetype at = kDevlistHeaderSize;
    for (quint32 i = 0; i < count; ++i) {
        if (bytes.size() - at < kDeviceRecordSize)
            return Answer();
        auto device = readDevice(bytes.sliced(at, kDeviceRecordSize));
        if (!device)
            return device.error();
        at += kDeviceRecordSize;
        const qsizetype interfaces = device->interfaceCount;
        if (bytes.size() - at < interfaces * kInterfaceRecordSize)
            return Answer();
        device->interfaces.reserve(interfaces);
        for (qsizetype j = 0; j < interfaces; ++j, at += kInterfaceRecordSize)
            device->interfaces.append(
                { u8At(bytes, at), u8At(bytes, at + 1), u8At(bytes, at + 2) });
        devices.append(std::move(device).value());
    }
    return std::optional(Decoded<QList<DeviceRecord>> { std::move(devices), at });
}

QByteArray encodeUrbHeader(const UrbHeader &header)
{
    QByteArray out(kUrbHeaderSize, '\0');
    char *p = out.data();
    qToBigEndian(quint32(header.command), p);
    qToBigEndian(header.sequence, p + 0x04);
    qToBigEndian(header.deviceId, p + 0x08);
    qToBigEndian(header.direction, p + 0x0C);
    qToBigEndian(header.endpoint, p + 0x10);
    switch (header.command) {
    case UrbCommand::CmdSubmit:
    case UrbCommand::CmdUnlink:
        qToBigEndian(header.flags, p + 0x14);
        break;
    case UrbCommand::RetSubmit:
    case UrbCommand::RetUnlink:
        qToBigEndian(header.status, p + 0x14);
        break;
    }
    // The unlink messages' union is only one word; the rest stays zero.
    if (header.command == UrbCommand::CmdSubmit || header.command == UrbCommand::RetSubmit) {
        qToBigEndian(header.length, p + 0x18);
        qToBigEndian(header.startFrame, p + 0x1C);
        qToBigEndian(header.packetCount, p + 0x20);
        qToBigEndian(header.interval, p + 0x24);
        std::memcpy(p + 0x28, header.setup.data(), header.setup.size());
    }
    return out;
}

Result<UrbHeader> decodeUrbHeader(QByteArrayView bytes)
{
    if (bytes.size() < kUrbHeaderSize)
        return malformed(QStringLiteral("a URB header of %1 bytes is short of %2")
                             .arg(bytes.size())
                             .arg(kUrbHeaderSize));
    const quint32 command = be32At(bytes, 0);
    if (command < quint32(UrbCommand::CmdSubmit) || command > quint32(UrbCommand::RetUnlink))
        return malformed(QStringLiteral("unknown URB command %1").arg(command));
    UrbHeader header;
    header.command = UrbCommand(command);
    header.sequence = be32At(bytes, 0x04);
    header.deviceId = be32At(bytes, 0x08);
    header.direction = be32At(bytes, 0x0C);
    header.endpoint = be32At(bytes, 0x10);
    if (header.command == UrbCommand::CmdSubmit || header.command == UrbCommand::CmdUnlink)
        header.flags = be32At(bytes, 0x14);
    else
        header.status = qint32(be32At(bytes, 0x14));
    // Bytes 0x18.. of the unlink messages are padding and are not read.
    if (header.command == UrbCommand::CmdSubmit || header.command == UrbCommand::RetSubmit) {
        header.length = qint32(be32At(bytes, 0x18));
        header.startFrame = qint32(be32At(bytes, 0x1C));
        header.packetCount = qint32(be32At(bytes, 0x20));
        header.interval = qint32(be32At(bytes, 0x24));
        std::memcpy(header.setup.data(), bytes.data() + 0x28, header.setup.size());
    }
    return header;
}

// -1 for a header no real URB produces: a negative length, a direction
// that is neither OUT nor IN, or a packet count below -1 (the non-ISO
// marker) or above kMaxIsoPackets. The caller treats the peer as broken.
qsizetype payloadSize(const UrbHeader &header, quint32 directionOfCommand)
{
    if (header.command == UrbCommand::CmdUnlink || header.command == UrbCommand::RetUnlink)
        return 0;
    if (header.length < 0 || header.packetCount < -1 || header.packetCount > kMaxIsoPackets)
        return -1;
    const quint32 direction
        = header.command == UrbCommand::CmdSubmit ? header.direction : directionOfCommand;
    if (direction != kDirectionOut && direction != kDirectionIn)
        return -1;
    const bool dataFollows
        = (header.command == UrbCommand::CmdSubmit) == (direction == kDirectionOut);
    qsizetype size = dataFollows ? qsizetype(header.length) : 0;
    if (header.packetCount > 0)
        size += qsizetype(header.packetCount) * kIsoDescriptorSize;
    return size;
}

} // namespace cloop::device::usb::usbip
