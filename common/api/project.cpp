#include "common/api/project.h"

namespace cloop::api {

Result<Project> Project::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("project"));
    Project project;
    project.id = read.integer(QLatin1StringView("id"));
    project.path = read.text(QLatin1StringView("path"));
    project.createdAt = read.time(QLatin1StringView("created_at"));
    project.createdBy = read.text(QLatin1StringView("created_by"));
    project.members = readRoleList(
        read, QLatin1StringView("members"), QLatin1StringView("user"), &Member::user);
    return read.finish(std::move(project));
}

QJsonObject Project::toJson() const
{
    return QJsonObject { { QLatin1StringView("id"), id }, { QLatin1StringView("path"), path },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("created_by"), createdBy },
        { QLatin1StringView("members"),
            writeRoleList(members, QLatin1StringView("user"), &Member::user) } };
}

} // namespace cloop::api
