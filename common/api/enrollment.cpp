#include "common/api/enrollment.h"

#include "common/api/recordschema.h"

namespace cloop::api {

using namespace Qt::StringLiterals;

namespace {
// Where each kind of daemon's record stands in the answer.
template <typename Daemon> constexpr QLatin1StringView kDaemonKey;
template <> constexpr QLatin1StringView kDaemonKey<Forwarder> = "forwarder"_L1;
template <> constexpr QLatin1StringView kDaemonKey<Executor> = "executor"_L1;

template <typename Daemon>
constexpr std::tuple kFields {
    Field { kDaemonKey<Daemon>, &Enrollment<Daemon>::daemon },
    Field { "bundle"_L1, &Enrollment<Daemon>::bundle },
    Field { "command"_L1, &Enrollment<Daemon>::command },
    Field { "install_command"_L1, &Enrollment<Daemon>::installCommand },
    Field { "token_expires_at"_L1, &Enrollment<Daemon>::tokenExpiresAt },
};
} // namespace

template <typename Daemon>
Result<Enrollment<Daemon>> Enrollment<Daemon>::fromJson(const QJsonObject &object)
{
    return readRecord<Enrollment>(object, "enrollment"_L1, kFields<Daemon>);
}

template <typename Daemon> QJsonObject Enrollment<Daemon>::toJson() const
{
    return writeRecord(*this, kFields<Daemon>);
}

template struct Enrollment<Forwarder>;
template struct Enrollment<Executor>;

} // namespace cloop::api
