#include "common/api/identity.h"

namespace cloop::api {

std::optional<ProjectRole> Identity::roleIn(const QString &project) const
{
    for (const Role &held : roles) {
        if (held.project == project)
            return held.role;
    }
    return std::nullopt;
}

Result<Identity> Identity::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("identity"));
    Identity identity;
    identity.user = read.text(QLatin1StringView("user"));
    identity.hubAdmin = read.flag(QLatin1StringView("hub_admin"));
    identity.tokenId = read.integer(QLatin1StringView("token_id"));
    identity.roles = readRoleList(
        read, QLatin1StringView("roles"), QLatin1StringView("project"), &Role::project);
    return read.finish(std::move(identity));
}

QJsonObject Identity::toJson() const
{
    return QJsonObject { { QLatin1StringView("user"), user },
        { QLatin1StringView("hub_admin"), hubAdmin }, { QLatin1StringView("token_id"), tokenId },
        { QLatin1StringView("roles"),
            writeRoleList(roles, QLatin1StringView("project"), &Role::project) } };
}

} // namespace cloop::api
