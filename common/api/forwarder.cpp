#include "common/api/forwarder.h"

#include "common/api/recordtables.h"

namespace cloop::api {

using namespace Qt::StringLiterals;

Result<Forwarder> Forwarder::fromJson(const QJsonObject &object)
{
    RecordReader read(object, "forwarder"_L1);
    Forwarder forwarder;
    forwarder.readFrom(read);
    // A device this version cannot read leaves the rest of the record readable.
    if (auto spec = protocol::DeviceSpec::fromJson(read.object("device"_L1)))
        forwarder.device = *spec;
    readFields(read, forwarder, tables::forwarderFields);
    return read.finish(std::move(forwarder));
}

QJsonObject Forwarder::toJson() const
{
    QJsonObject object;
    writeTo(object);
    object.insert(
        "device"_L1, device ? QJsonValue(device->toJson()) : QJsonValue(QJsonValue::Null));
    writeFields(*this, object, tables::forwarderFields);
    return object;
}

} // namespace cloop::api
