#include "common/api/binding.h"

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<Binding::State>, 4> kStates { {
    { Binding::State::Active, QLatin1StringView("active") },
    { Binding::State::Unbound, QLatin1StringView("unbound") },
    { Binding::State::Expired, QLatin1StringView("expired") },
    { Binding::State::ForwarderRevoked, QLatin1StringView("forwarder_revoked") },
} };
} // namespace

QLatin1StringView Binding::stateName(State state)
{
    return nameIn(kStates, state);
}

std::optional<Binding::State> Binding::parseState(QStringView name)
{
    return valueIn(kStates, name);
}

Result<Binding> Binding::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("binding"));
    Binding binding;
    binding.id = read.integer(QLatin1StringView("id"));
    binding.forwarderId = read.integer(QLatin1StringView("forwarder_id"));
    binding.forwarder = read.text(QLatin1StringView("forwarder"));
    binding.project = read.text(QLatin1StringView("project"));
    binding.virtualExecutor = read.text(QLatin1StringView("virtual_executor"));
    binding.target = read.text(QLatin1StringView("target"));
    binding.address = read.text(QLatin1StringView("address"));
    binding.createdAt = read.time(QLatin1StringView("created_at"));
    binding.createdBy = read.text(QLatin1StringView("created_by"));
    binding.expiresAt = read.time(QLatin1StringView("expires_at"));
    binding.requestId = read.optionalInteger(QLatin1StringView("request_id"));
    binding.state = read.choice(QLatin1StringView("state"), kStates, State::Active);
    binding.endedAt = read.time(QLatin1StringView("ended_at"));
    binding.endedBy = read.text(QLatin1StringView("ended_by"));
    binding.endReason = read.text(QLatin1StringView("end_reason"));
    return read.finish(std::move(binding));
}

QJsonObject Binding::toJson() const
{
    return QJsonObject {
        { QLatin1StringView("id"), id },
        { QLatin1StringView("forwarder_id"), forwarderId },
        { QLatin1StringView("forwarder"), forwarder },
        { QLatin1StringView("project"), project },
        { QLatin1StringView("virtual_executor"), textOrNull(virtualExecutor) },
        { QLatin1StringView("target"), textOrNull(target) },
        { QLatin1StringView("address"), textOrNull(address) },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("created_by"), createdBy },
        { QLatin1StringView("expires_at"), timeOrNull(expiresAt) },
        { QLatin1StringView("request_id"), integerOrNull(requestId) },
        { QLatin1StringView("state"), stateName(state) },
        { QLatin1StringView("ended_at"), timeOrNull(endedAt) },
        { QLatin1StringView("ended_by"), textOrNull(endedBy) },
        { QLatin1StringView("end_reason"), textOrNull(endReason) },
    };
}

} // namespace cloop::api
