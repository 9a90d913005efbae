#include "daemon-forward/enrolleddevice.h"

#include "common/protocol/channelopen.h"

namespace cloop::forward {

namespace {
Error mismatch(const QString &message)
{
    return Error::make(QStringLiteral("device_mismatch"), message, true);
}

QString shown(const QString &name)
{
    return QStringLiteral("\"%1\"").arg(name.left(64));
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
    // What cannot be read cannot be the carried device either.
    const auto names = protocol::ChannelNames::fromMetadata(metadata);
    if (!names)
        return mismatch(QStringLiteral("the channel names what this forwarder cannot read (%1); "
                                       "it carries %2 only")
                            .arg(names.error().message, carried.describe()));
    const bool segment = carried.kind == protocol::DeviceSpec::Kind::Segment;
    if (const auto &name = names->interfaceName) {
        if (!segment || *name != carried.interfaceName)
            return mismatch(
                QStringLiteral("the channel names interface %1; this forwarder carries %2 only")
                    .arg(shown(*name), carried.describe()));
    }
    if (const auto &asked = names->busId) {
        if (segment || busId.isEmpty() || *asked != busId)
            return mismatch(
                QStringLiteral("the channel names bus id %1; this forwarder carries %2 only%3")
                    .arg(shown(*asked), carried.describe(),
                        segment || busId.isEmpty() ? QString()
                                                   : QStringLiteral(", now at %1").arg(busId)));
    }
    if (const auto &named = names->device; named && !(*named == carried))
        return mismatch(QStringLiteral("the channel names %1; this forwarder carries %2 only")
                            .arg(named->describe(), carried.describe()));
    return {};
}

} // namespace cloop::forward
