#pragma once

#include "common/api/projectrole.h"
#include "common/api/recordfields.h"

namespace cloop::api {

// Who an API token speaks for (GET /api/whoami).
struct Identity
{
    struct Role
    {
        QString project;
        ProjectRole role = ProjectRole::Maintainer;

        friend bool operator==(const Role &, const Role &) = default;
    };

    QString user;
    bool hubAdmin = false;
    qint64 tokenId = 0;
    QList<Role> roles;

    // The role in that project, none when there is none.
    std::optional<ProjectRole> roleIn(const QString &project) const;

    static Result<Identity> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Identity &, const Identity &) = default;
};

} // namespace cloop::api
