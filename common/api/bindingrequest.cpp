#include "common/api/bindingrequest.h"

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<BindingRequest::State>, 5> kStates { {
    { BindingRequest::State::Pending, QLatin1StringView("pending") },
    { BindingRequest::State::Approved, QLatin1StringView("approved") },
    { BindingRequest::State::Denied, QLatin1StringView("denied") },
    { BindingRequest::State::Expired, QLatin1StringView("expired") },
    { BindingRequest::State::Cancelled, QLatin1StringView("cancelled") },
} };
} // namespace

QLatin1StringView BindingRequest::stateName(State state)
{
    return nameIn(kStates, state);
}

std::optional<BindingRequest::State> BindingRequest::parseState(QStringView name)
{
    return valueIn(kStates, name);
}

Result<BindingRequest> BindingRequest::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("request"));
    BindingRequest request;
    request.id = read.integer(QLatin1StringView("id"));
    request.forwarderId = read.integer(QLatin1StringView("forwarder_id"));
    request.forwarder = read.text(QLatin1StringView("forwarder"));
    request.project = read.text(QLatin1StringView("project"));
    request.requestedBy = read.text(QLatin1StringView("requested_by"));
    request.reason = read.text(QLatin1StringView("reason"));
    request.ttl = read.text(QLatin1StringView("ttl"));
    request.ttlSeconds = read.integer(QLatin1StringView("ttl_seconds"));
    request.virtualExecutor = read.text(QLatin1StringView("virtual_executor"));
    request.target = read.text(QLatin1StringView("target"));
    request.address = read.text(QLatin1StringView("address"));
    request.createdAt = read.time(QLatin1StringView("created_at"));
    request.expiresAt = read.time(QLatin1StringView("expires_at"));
    request.state = read.choice(QLatin1StringView("state"), kStates, State::Pending);
    request.decidedBy = read.text(QLatin1StringView("decided_by"));
    request.decidedAt = read.time(QLatin1StringView("decided_at"));
    request.decisionReason = read.text(QLatin1StringView("decision_reason"));
    request.bindingId = read.optionalInteger(QLatin1StringView("binding_id"));
    return read.finish(std::move(request));
}

QJsonObject BindingRequest::toJson() const
{
    return QJsonObject {
        { QLatin1StringView("id"), id },
        { QLatin1StringView("forwarder_id"), forwarderId },
        { QLatin1StringView("forwarder"), forwarder },
        { QLatin1StringView("project"), project },
        { QLatin1StringView("requested_by"), requestedBy },
        { QLatin1StringView("reason"), reason },
        { QLatin1StringView("ttl"), ttl },
        { QLatin1StringView("ttl_seconds"), ttlSeconds },
        { QLatin1StringView("virtual_executor"), textOrNull(virtualExecutor) },
        { QLatin1StringView("target"), textOrNull(target) },
        { QLatin1StringView("address"), textOrNull(address) },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("expires_at"), timeOrNull(expiresAt) },
        { QLatin1StringView("state"), stateName(state) },
        { QLatin1StringView("decided_by"), textOrNull(decidedBy) },
        { QLatin1StringView("decided_at"), timeOrNull(decidedAt) },
        { QLatin1StringView("decision_reason"), textOrNull(decisionReason) },
        { QLatin1StringView("binding_id"), integerOrNull(bindingId) },
    };
}

} // namespace cloop::api
