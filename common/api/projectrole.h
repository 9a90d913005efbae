#pragma once

#include "common/api/recordfields.h"

#include <QLatin1StringView>
#include <QStringView>

#include <optional>

namespace cloop::api {

// What a user may be in a project: administrators bind its devices and
// decide requests, maintainers may request bindings.
enum class ProjectRole
{
    Administrator,
    Maintainer
};

QLatin1StringView projectRoleName(ProjectRole role);
std::optional<ProjectRole> parseProjectRole(QStringView name);

// Lists of {"user" | "project": NAME, "role": ROLE}, as a project's members
// and an identity's roles are written.
template <typename Entry>
QList<Entry> readRoleList(
    RecordReader &read, QLatin1StringView key, QLatin1StringView who, QString Entry::*name)
{
    return read.objects<Entry>(key, [who, name](RecordReader &entry) {
        Entry role;
        role.*name = entry.text(who);
        const QString roleName = entry.text(QLatin1StringView("role"));
        if (const auto known = parseProjectRole(roleName))
            role.role = *known;
        else
            entry.fail(QStringLiteral("\"role\" is not a role this version knows: \"%1\"")
                           .arg(roleName.left(40)));
        return role;
    });
}

template <typename Entry>
QJsonArray writeRoleList(const QList<Entry> &entries, QLatin1StringView who, QString Entry::*name)
{
    QJsonArray out;
    for (const Entry &entry : entries)
        out.append(QJsonObject {
            { who, entry.*name }, { QLatin1StringView("role"), projectRoleName(entry.role) } });
    return out;
}

} // namespace cloop::api
