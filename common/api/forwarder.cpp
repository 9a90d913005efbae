#include "common/api/forwarder.h"

namespace cloop::api {

Result<Forwarder> Forwarder::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("forwarder"));
    Forwarder forwarder;
    forwarder.readFrom(read);
    if (auto spec = protocol::DeviceSpec::fromJson(read.object(QLatin1StringView("device"))))
        forwarder.device = *spec;
    forwarder.deviceDescription = read.text(QLatin1StringView("device_description"));
    forwarder.usbBusId = read.optionalText(QLatin1StringView("usb_busid"));
    return read.finish(std::move(forwarder));
}

QJsonObject Forwarder::toJson() const
{
    QJsonObject object;
    writeTo(object);
    object.insert(QLatin1StringView("device"),
        device ? QJsonValue(device->toJson()) : QJsonValue(QJsonValue::Null));
    object.insert(QLatin1StringView("device_description"), deviceDescription);
    object.insert(QLatin1StringView("usb_busid"), textOrNull(usbBusId));
    return object;
}

} // namespace cloop::api
