#include "common/protocol/channelopen.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/net/huburls.h"
#include "common/protocol/controlmessage.h"
#include "common/protocol/fieldreader.h"

#include <QJsonValue>

#include <algorithm>

namespace cloop::protocol {

namespace {

inline constexpr QLatin1StringView kKind { "kind" };
inline constexpr QLatin1StringView kRunId { "run_id" };
inline constexpr QLatin1StringView kBindingId { "binding_id" };
inline constexpr QLatin1StringView kInterface { "interface" };
inline constexpr QLatin1StringView kBusId { "busid" };
inline constexpr QLatin1StringView kDevice { "device" };
inline constexpr QLatin1StringView kPurpose { "purpose" };
inline constexpr QLatin1StringView kTestPurpose { "test" };
inline constexpr QLatin1StringView kName { "name" };
inline constexpr QLatin1StringView kDeviceKind { "device_kind" };
inline constexpr QLatin1StringView kDirect { "direct" };
inline constexpr QLatin1StringView kLeg { "leg" };
inline constexpr QLatin1StringView kUrl { "url" };
inline constexpr QLatin1StringView kTicket { "ticket" };
inline constexpr qsizetype kStreamTicketLength = 43;

QString subjectOf(QLatin1StringView kind)
{
    return QStringLiteral("%1 channel").arg(kind);
}

// The kind is checked first: the rest of the fields only mean something
// for the kind they belong to.
Status expectKind(const QJsonObject &metadata, QLatin1StringView kind)
{
    const QJsonValue given = metadata.value(kKind);
    if (given.isString() && given.toString() == kind)
        return {};
    return protocolError(given.isString()
            ? QStringLiteral("a %1 channel was expected, not \"%2\"")
                  .arg(kind, given.toString().left(40))
            : QStringLiteral("a %1 channel was expected; the opening has no \"kind\"").arg(kind));
}

template <typename T> Result<T> finish(const FieldReader &read, T open)
{
    if (read.error())
        return *read.error();
    return open;
}

// A leg's object under `key`: a hub URL (ws:// to loopback only, as every
// hub URL a daemon is given) or none for the hub the tunnel reaches, and a
// ticket.
std::optional<DirectLeg> readLeg(FieldReader &read, QLatin1StringView key)
{
    if (!read.has(key) || read.error())
        return std::nullopt;
    FieldReader fields(read.optionalObject(key),
        key == kDirect ? QStringLiteral("the direct leg") : QStringLiteral("the leg"));
    DirectLeg leg;
    if (fields.has(kUrl))
        leg.url = fields.string(kUrl, 512);
    leg.ticket = fields.string(kTicket, kStreamTicketLength);
    if (!fields.error() && !leg.url.isEmpty()) {
        if (auto url = net::parseHubUrl(leg.url, net::PlaintextHubUrls::LoopbackOnly); !url)
            fields.fail(QStringLiteral("\"url\" is not a hub URL: %1").arg(url.error().message));
    }
    if (!fields.error() && !isValidStreamTicket(leg.ticket))
        fields.fail(QStringLiteral("\"ticket\" is not a stream ticket"));
    if (fields.error()) {
        read.fail(fields.error()->message);
        return std::nullopt;
    }
    return leg;
}

void writeLeg(QJsonObject &metadata, QLatin1StringView key, const std::optional<DirectLeg> &leg)
{
    if (!leg)
        return;
    QJsonObject fields { { kTicket, leg->ticket } };
    if (!leg->url.isEmpty())
        fields.insert(kUrl, leg->url);
    metadata.insert(key, fields);
}

void readRunAndBinding(FieldReader &read, qint64 &runId, qint64 &bindingId)
{
    runId = read.integer(kRunId, 1, kMaxWireId);
    bindingId = read.integer(kBindingId, 1, kMaxWireId);
}

void writeRunAndBinding(QJsonObject &metadata, qint64 runId, qint64 bindingId)
{
    metadata.insert(kRunId, runId);
    metadata.insert(kBindingId, bindingId);
}

// What every opening to a forwarder starts with: its kind, and what it
// may name.
Result<ChannelNames> readForwarderOpening(const QJsonObject &metadata, QLatin1StringView kind)
{
    if (Status expected = expectKind(metadata, kind); !expected)
        return expected.error();
    return ChannelNames::fromMetadata(metadata);
}

QJsonObject opening(QLatin1StringView kind)
{
    return QJsonObject { { kKind, kind } };
}

} // namespace

Result<ChannelNames> ChannelNames::fromMetadata(const QJsonObject &metadata)
{
    FieldReader read(metadata, QStringLiteral("channel"));
    ChannelNames names;
    if (read.has(kInterface))
        names.interfaceName = read.string(kInterface, 64, false);
    if (read.has(kBusId))
        names.busId = read.string(kBusId, 31, false);
    if (read.has(kDevice)) {
        const QJsonValue device = metadata.value(kDevice);
        if (!device.isObject()) {
            read.fail(QStringLiteral("\"device\" must be an object"));
        } else if (auto spec = DeviceSpec::fromJson(device.toObject()); !spec) {
            read.fail(QStringLiteral("\"device\": %1").arg(spec.error().message));
        } else {
            names.device = *spec;
        }
    }
    return finish(read, std::move(names));
}

void ChannelNames::writeTo(QJsonObject &metadata) const
{
    if (interfaceName)
        metadata.insert(kInterface, *interfaceName);
    if (busId)
        metadata.insert(kBusId, *busId);
    if (device)
        metadata.insert(kDevice, device->toJson());
}

Result<RunLogOpen> RunLogOpen::fromMetadata(const QJsonObject &metadata)
{
    if (Status kind = expectKind(metadata, channelkind::kRunLog); !kind)
        return kind.error();
    FieldReader read(metadata, subjectOf(channelkind::kRunLog));
    RunLogOpen open;
    open.runId = read.integer(kRunId, 1, kMaxWireId);
    return finish(read, open);
}

QJsonObject RunLogOpen::toMetadata() const
{
    QJsonObject metadata = opening(channelkind::kRunLog);
    metadata.insert(kRunId, runId);
    return metadata;
}

Result<SegmentOpen> SegmentOpen::fromMetadata(const QJsonObject &metadata)
{
    auto names = readForwarderOpening(metadata, channelkind::kSegment);
    if (!names)
        return names.error();
    FieldReader read(metadata, subjectOf(channelkind::kSegment));
    SegmentOpen open;
    readRunAndBinding(read, open.runId, open.bindingId);
    open.names = *names;
    open.leg = readLeg(read, kLeg);
    return finish(read, std::move(open));
}

QJsonObject SegmentOpen::toMetadata() const
{
    QJsonObject metadata = opening(channelkind::kSegment);
    writeRunAndBinding(metadata, runId, bindingId);
    names.writeTo(metadata);
    writeLeg(metadata, kLeg, leg);
    return metadata;
}

Result<UsbOpen> UsbOpen::fromMetadata(const QJsonObject &metadata)
{
    auto names = readForwarderOpening(metadata, channelkind::kUsb);
    if (!names)
        return names.error();
    FieldReader read(metadata, subjectOf(channelkind::kUsb));
    UsbOpen open;
    open.names = *names;
    if (read.has(kPurpose)) {
        if (read.string(kPurpose, 16) != kTestPurpose && !read.error())
            read.fail(QStringLiteral("\"purpose\" must be \"test\" when given"));
        open.purpose = Purpose::Test;
    }
    if (open.purpose == Purpose::Run) {
        readRunAndBinding(read, open.runId, open.bindingId);
        open.leg = readLeg(read, kLeg);
    } else if (read.has(kLeg) && !read.error()) {
        read.fail(QStringLiteral("a test's USB/IP connection has no leg"));
    }
    return finish(read, std::move(open));
}

QJsonObject UsbOpen::toMetadata() const
{
    QJsonObject metadata = opening(channelkind::kUsb);
    if (purpose == Purpose::Test)
        metadata.insert(kPurpose, kTestPurpose);
    else
        writeRunAndBinding(metadata, runId, bindingId);
    names.writeTo(metadata);
    if (purpose == Purpose::Run)
        writeLeg(metadata, kLeg, leg);
    return metadata;
}

Result<DeviceTestOpen> DeviceTestOpen::fromMetadata(const QJsonObject &metadata)
{
    auto names = readForwarderOpening(metadata, channelkind::kDeviceTest);
    if (!names)
        return names.error();
    return DeviceTestOpen { *names };
}

QJsonObject DeviceTestOpen::toMetadata() const
{
    QJsonObject metadata = opening(channelkind::kDeviceTest);
    names.writeTo(metadata);
    return metadata;
}

Result<AgentDeviceOpen> AgentDeviceOpen::fromMetadata(const QJsonObject &metadata)
{
    if (Status kind = expectKind(metadata, channelkind::kDevice); !kind)
        return kind.error();
    FieldReader read(metadata, subjectOf(channelkind::kDevice));
    AgentDeviceOpen open;
    readRunAndBinding(read, open.runId, open.bindingId);
    open.name = read.string(kName, 64);
    if (!read.error() && !isValidForwardedDeviceName(open.name))
        read.fail(QStringLiteral("\"name\" is not a device name"));
    // Hubs before USB devices named no kind: a segment was meant.
    if (read.has(kDeviceKind)) {
        const QString kind = read.string(kDeviceKind, 16);
        if (const auto known = parseDeviceKind(kind))
            open.deviceKind = *known;
        else if (!read.error())
            read.fail(QStringLiteral("this agent cannot attach \"%1\" devices").arg(kind));
    }
    if (open.deviceKind == DeviceSpec::Kind::Usb) {
        open.busId = read.string(kBusId, 31);
        if (!read.error() && !device::usb::usbip::isValidBusId(open.busId.toLatin1()))
            read.fail(QStringLiteral("\"busid\" is not a USB bus id"));
    }
    open.direct = readLeg(read, kDirect);
    return finish(read, std::move(open));
}

QJsonObject AgentDeviceOpen::toMetadata() const
{
    QJsonObject metadata = opening(channelkind::kDevice);
    writeRunAndBinding(metadata, runId, bindingId);
    metadata.insert(kName, name);
    metadata.insert(kDeviceKind, deviceKindName(deviceKind));
    if (deviceKind == DeviceSpec::Kind::Usb)
        metadata.insert(kBusId, busId);
    writeLeg(metadata, kDirect, direct);
    return metadata;
}

bool isValidStreamTicket(const QString &ticket)
{
    return ticket.size() == kStreamTicketLength
        && std::all_of(ticket.cbegin(), ticket.cend(), [](QChar c) {
               return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z')
                   || (c >= u'0' && c <= u'9') || c == u'-' || c == u'_';
           });
}

Result<ChannelOpen> parseChannelOpen(const QJsonObject &metadata)
{
    const auto as = [](auto parsed) -> Result<ChannelOpen> {
        if (!parsed)
            return parsed.error();
        return ChannelOpen { std::move(*parsed) };
    };
    const QJsonValue kind = metadata.value(kKind);
    if (!kind.isString())
        return protocolError(QStringLiteral("a channel's opening needs a \"kind\""));
    const QString name = kind.toString();
    if (name == channelkind::kRunLog)
        return as(RunLogOpen::fromMetadata(metadata));
    if (name == channelkind::kSegment)
        return as(SegmentOpen::fromMetadata(metadata));
    if (name == channelkind::kUsb)
        return as(UsbOpen::fromMetadata(metadata));
    if (name == channelkind::kDeviceTest)
        return as(DeviceTestOpen::fromMetadata(metadata));
    if (name == channelkind::kDevice)
        return as(AgentDeviceOpen::fromMetadata(metadata));
    return protocolError(QStringLiteral("unknown channel kind \"%1\"").arg(name.left(40)));
}

QJsonObject serializeChannelOpen(const ChannelOpen &open)
{
    return std::visit([](const auto &value) { return value.toMetadata(); }, open);
}

QLatin1StringView channelOpenKind(const ChannelOpen &open)
{
    static_assert(channelkind::kAll.size() == std::variant_size_v<ChannelOpen>,
        "every kind of opening is named, in the order of ChannelOpen");
    return channelkind::kAll[open.index()];
}

QString claimedChannelKind(const QJsonObject &metadata)
{
    return metadata.value(kKind).toString().left(40);
}

} // namespace cloop::protocol
