#include "common/api/enrolleddaemon.h"

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<EnrolledDaemon::State>, 4> kStates { {
    { EnrolledDaemon::State::AwaitingEnrollment, QLatin1StringView("awaiting enrollment") },
    { EnrolledDaemon::State::Connected, QLatin1StringView("connected") },
    { EnrolledDaemon::State::Disconnected, QLatin1StringView("disconnected") },
    { EnrolledDaemon::State::Revoked, QLatin1StringView("revoked") },
} };
} // namespace

QLatin1StringView EnrolledDaemon::stateName(State state)
{
    return nameIn(kStates, state);
}

std::optional<EnrolledDaemon::State> EnrolledDaemon::parseState(QStringView name)
{
    return valueIn(kStates, name);
}

Result<EnrolledDaemon> EnrolledDaemon::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("daemon"));
    EnrolledDaemon daemon;
    daemon.readFrom(read);
    return read.finish(std::move(daemon));
}

void EnrolledDaemon::readFrom(RecordReader &read)
{
    id = read.integer(QLatin1StringView("id"));
    name = read.text(QLatin1StringView("name"));
    state = read.choice(QLatin1StringView("state"), kStates, State::AwaitingEnrollment);
    connected = read.flag(QLatin1StringView("connected"));
    hubMember = read.text(QLatin1StringView("hub_member"));
    lastSeen = read.time(QLatin1StringView("last_seen"));
    createdAt = read.time(QLatin1StringView("created_at"));
    createdBy = read.text(QLatin1StringView("created_by"));
    enrolledAt = read.time(QLatin1StringView("enrolled_at"));
    revokedAt = read.time(QLatin1StringView("revoked_at"));
}

void EnrolledDaemon::writeTo(QJsonObject &object) const
{
    object.insert(QLatin1StringView("id"), id);
    object.insert(QLatin1StringView("name"), name);
    object.insert(QLatin1StringView("state"), stateName(state));
    object.insert(QLatin1StringView("connected"), connected);
    object.insert(QLatin1StringView("hub_member"), textOrNull(hubMember));
    object.insert(QLatin1StringView("last_seen"), timeOrNull(lastSeen));
    object.insert(QLatin1StringView("created_at"), timeOrNull(createdAt));
    object.insert(QLatin1StringView("created_by"), createdBy);
    object.insert(QLatin1StringView("enrolled_at"), timeOrNull(enrolledAt));
    object.insert(QLatin1StringView("revoked_at"), timeOrNull(revokedAt));
}

} // namespace cloop::api
