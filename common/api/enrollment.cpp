#include "common/api/enrollment.h"

namespace cloop::api {

namespace {
// Where each kind of daemon's record stands in the answer.
template <typename Daemon> QLatin1StringView daemonKey();
template <> QLatin1StringView daemonKey<Forwarder>()
{
    return QLatin1StringView("forwarder");
}
template <> QLatin1StringView daemonKey<Executor>()
{
    return QLatin1StringView("executor");
}
} // namespace

template <typename Daemon>
Result<Enrollment<Daemon>> Enrollment<Daemon>::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("enrollment"));
    Enrollment enrollment;
    enrollment.daemon = read.nested<Daemon>(read.object(daemonKey<Daemon>()));
    enrollment.bundle = read.text(QLatin1StringView("bundle"));
    enrollment.command = read.text(QLatin1StringView("command"));
    enrollment.tokenExpiresAt = read.time(QLatin1StringView("token_expires_at"));
    return read.finish(std::move(enrollment));
}

template <typename Daemon> QJsonObject Enrollment<Daemon>::toJson() const
{
    return QJsonObject { { daemonKey<Daemon>(), daemon.toJson() },
        { QLatin1StringView("bundle"), bundle }, { QLatin1StringView("command"), command },
        { QLatin1StringView("token_expires_at"), timeOrNull(tokenExpiresAt) } };
}

template struct Enrollment<Forwarder>;
template struct Enrollment<Executor>;

} // namespace cloop::api
