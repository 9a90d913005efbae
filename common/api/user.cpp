#include "common/api/user.h"

namespace cloop::api {

Result<User> User::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("user"));
    User user;
    user.id = read.integer(QLatin1StringView("id"));
    user.name = read.text(QLatin1StringView("name"));
    user.hubAdmin = read.flag(QLatin1StringView("hub_admin"));
    user.createdAt = read.time(QLatin1StringView("created_at"));
    return read.finish(std::move(user));
}

QJsonObject User::toJson() const
{
    return QJsonObject { { QLatin1StringView("id"), id }, { QLatin1StringView("name"), name },
        { QLatin1StringView("hub_admin"), hubAdmin },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) } };
}

} // namespace cloop::api
