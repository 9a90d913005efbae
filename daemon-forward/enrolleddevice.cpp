#include "daemon-forward/enrolleddevice.h"

namespace cloop::forward {

namespace {
Error mismatch(const QString &message)
{
    return Error::make(QStringLiteral("device_mismatch"), message, true);
}

QString shown(const QJsonValue &value)
{
    return value.isString() ? QStringLiteral("\"%1\"").arg(value.toString().left(64))
                            : QStringLiteral("a non-string");
}
} // namespace

Result<CarriedDevice> deviceToCarry(const std::optional<protocol::DeviceSpec> &recorded,
    const std::optional<protocol::DeviceSpec> &welcomed)
{
    if (!recorded)
        return CarriedDevice { welcomed, welcomed.has_value() };
    if (welcomed && !(*welcomed == *recorded))
        return mismatch(
            QStringLiteral("the hub's welcome names %1, but this forwarder was enrolled for %2")
                .arg(welcomed->describe(), recorded->describe()));
    return CarriedDevice { recorded, false };
}

Status checkChannelNames(
    const protocol::DeviceSpec &carried, const QString &busId, const QJsonObject &metadata)
{
    const bool segment = carried.kind == protocol::DeviceSpec::Kind::Segment;
    if (const QJsonValue name = metadata.value(QLatin1String("interface")); !name.isUndefined()) {
        if (!segment || name.toString() != carried.interfaceName)
            return mismatch(
                QStringLiteral("the channel names interface %1; this forwarder carries %2 only")
                    .arg(shown(name), carried.describe()));
    }
    if (const QJsonValue asked = metadata.value(QLatin1String("busid")); !asked.isUndefined()) {
        if (segment || busId.isEmpty() || asked.toString() != busId)
            return mismatch(
                QStringLiteral("the channel names bus id %1; this forwarder carries %2 only%3")
                    .arg(shown(asked), carried.describe(),
                        segment || busId.isEmpty() ? QString()
                                                   : QStringLiteral(", now at %1").arg(busId)));
    }
    if (const QJsonValue device = metadata.value(QLatin1String("device")); !device.isUndefined()) {
        const auto named = device.isObject()
            ? protocol::DeviceSpec::fromJson(device.toObject())
            : Result<protocol::DeviceSpec>(Error::make(QString(), QString()));
        if (!named || !(*named == carried))
            return mismatch(
                QStringLiteral("the channel names %1; this forwarder carries %2 only")
                    .arg(named ? named->describe() : QStringLiteral("a device it cannot read"),
                        carried.describe()));
    }
    return {};
}

} // namespace cloop::forward
