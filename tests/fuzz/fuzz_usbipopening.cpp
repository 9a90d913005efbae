// libFuzzer target: the USB/IP decoders a peer's bytes reach first (the
// opening request, the IMPORT and DEVLIST replies, the URB header), all on
// the same input.
//
// Invariants: no crash and no read outside the input; a decoded message
// took no more than the input, and encoding it again gives a message that
// decodes to the same values and length (the opening request, which admits
// no padding but zeros, byte for byte); "not yet" and errors are stable
// under truncation: a shorter prefix of a whole message is never an error
// or whole, and a prefix that is an error stays one.

#include <cstddef>
#include <cstdint>

#include "common/device/usb/usbipprotocol.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
namespace usbip = cloop::device::usb::usbip;

namespace {

template <typename Decode> void checkPrefixes(QByteArrayView bytes, Decode &&decode)
{
    const auto whole = decode(bytes);
    // Two prefixes are enough to catch a verdict that changes with length
    // without making each run quadratic.
    for (const qsizetype size : { bytes.size() / 2, bytes.size() - 1 }) {
        if (size < 0)
            continue;
        const auto prefix = decode(bytes.first(size));
        if (!prefix.ok()) {
            check(!whole.ok(), "an error in a prefix is an error in the whole");
        } else if (whole.ok() && whole.value() && size < whole.value()->consumed) {
            check(!prefix.value(), "a prefix of a message is not yet whole");
        } else if (prefix.value()) {
            check(
                whole.ok() && whole.value() && whole.value()->consumed == prefix.value()->consumed,
                "more bytes after a whole message do not change it");
        }
    }
}

void checkDevice(const usbip::DeviceRecord &device)
{
    check(device.path.size() < usbip::kPathSize && !device.path.contains('\0'),
        "path fits its field");
    check(device.busId.size() < usbip::kBusIdSize && !device.busId.contains('\0'),
        "bus id fits its field");
}

void openingRequest(QByteArrayView bytes)
{
    const auto decoded = usbip::decodeOpeningRequest(bytes);
    if (!decoded.ok()) {
        check(decoded.error().code == QLatin1String("usbip_malformed")
                && !decoded.error().message.isEmpty(),
            "opening errors are usbip_malformed with a message");
        return;
    }
    if (!decoded.value())
        return;
    const auto &[request, consumed] = *decoded.value();
    check(consumed <= bytes.size(), "an opening request fits the input");
    QByteArray encoded;
    if (request.kind == usbip::OpeningRequest::Kind::Devlist) {
        check(consumed == usbip::kOpHeaderSize && request.busId.isEmpty(),
            "DEVLIST is a bare header");
        encoded = usbip::encodeDevlistRequest();
    } else {
        check(consumed == usbip::kImportRequestSize, "IMPORT is 40 bytes");
        check(usbip::isValidBusId(request.busId), "an accepted bus id is valid");
        const auto again = usbip::encodeImportRequest(request.busId);
        check(again.ok(), "an accepted bus id encodes");
        encoded = again.value();
    }
    check(QByteArrayView(encoded) == bytes.first(consumed), "encode(decode(request)) == its bytes");
}

void importReply(QByteArrayView bytes)
{
    const auto decoded = usbip::decodeImportReply(bytes);
    if (!decoded.ok() || !decoded.value())
        return;
    const auto &[reply, consumed] = *decoded.value();
    check(consumed <= bytes.size(), "an IMPORT reply fits the input");
    check(reply.device.has_value() == (reply.status == 0), "a device exactly when the status is 0");
    check(consumed == (reply.device ? usbip::kImportReplySize : usbip::kOpHeaderSize),
        "IMPORT reply size");
    if (reply.device) {
        checkDevice(*reply.device);
        check(reply.device->interfaces.isEmpty(), "an IMPORT reply has no interface records");
    }
    const QByteArray encoded = usbip::encodeImportReply(
        usbip::OpStatus(reply.status), reply.device.value_or(usbip::DeviceRecord()));
    const auto again = usbip::decodeImportReply(encoded);
    check(again.ok() && again.value() && again.value()->consumed == encoded.size(),
        "a re-encoded reply decodes");
    check(again.value()->message.status == reply.status
            && again.value()->message.device == reply.device,
        "decode(encode(reply)) == reply");
}

void devlistReply(QByteArrayView bytes)
{
    const auto decoded = usbip::decodeDevlistReply(bytes);
    if (!decoded.ok() || !decoded.value())
        return;
    const auto &[devices, consumed] = *decoded.value();
    check(devices.size() <= qsizetype(usbip::kMaxListedDevices), "no more devices than the limit");
    qsizetype expected = usbip::kOpHeaderSize + 4;
    for (const usbip::DeviceRecord &device : devices) {
        checkDevice(device);
        check(
            device.interfaces.size() == device.interfaceCount, "every announced interface is read");
        expected += usbip::kDeviceRecordSize + device.interfaceCount * usbip::kInterfaceRecordSize;
    }
    check(consumed == expected && consumed <= bytes.size(),
        "a DEVLIST reply is as long as its records");
    const QByteArray encoded = usbip::encodeDevlistReply(devices);
    check(encoded.size() == consumed, "a re-encoded DEVLIST reply is as long");
    const auto again = usbip::decodeDevlistReply(encoded);
    check(again.ok() && again.value() && again.value()->message == devices,
        "decode(encode(devices)) == devices");
}

void urbHeader(QByteArrayView bytes)
{
    const auto decoded = usbip::decodeUrbHeader(bytes);
    check(decoded.ok() || !decoded.error().message.isEmpty(), "URB errors have a message");
    if (!decoded.ok())
        return;
    const QByteArray encoded = usbip::encodeUrbHeader(decoded.value());
    check(encoded.size() == usbip::kUrbHeaderSize, "a URB header is 48 bytes");
    check(QByteArrayView(encoded).first(0x18) == bytes.first(0x18),
        "the common fields re-encode as they were");
    const auto again = usbip::decodeUrbHeader(encoded);
    check(again.ok() && again.value() == decoded.value(), "decode(encode(header)) == header");
    for (const quint32 direction : { usbip::kDirectionOut, usbip::kDirectionIn }) {
        const qsizetype payload = usbip::payloadSize(decoded.value(), direction);
        check(payload >= -1 && payload <= qsizetype(INT32_MAX) + 1024 * 16,
            "payload size is bounded");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    openingRequest(bytes);
    importReply(bytes);
    devlistReply(bytes);
    urbHeader(bytes);
    checkPrefixes(bytes, [](QByteArrayView b) { return usbip::decodeOpeningRequest(b); });
    checkPrefixes(bytes, [](QByteArrayView b) { return usbip::decodeImportReply(b); });
    checkPrefixes(bytes, [](QByteArrayView b) { return usbip::decodeDevlistReply(b); });
    return 0;
}
