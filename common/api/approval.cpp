#include "common/api/approval.h"

namespace cloop::api {

Result<Approval> Approval::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("approval"));
    Approval approval;
    approval.request = read.nested<BindingRequest>(read.object(QLatin1StringView("request")));
    approval.binding = read.nested<Binding>(read.object(QLatin1StringView("binding")));
    return read.finish(std::move(approval));
}

QJsonObject Approval::toJson() const
{
    return QJsonObject { { QLatin1StringView("request"), request.toJson() },
        { QLatin1StringView("binding"), binding.toJson() } };
}

} // namespace cloop::api
