#pragma once

#include "common/api/projectrole.h"
#include "common/api/recordfields.h"

namespace cloop::api {

// A project, named by its directory on the hub, and who has which role in
// it (GET /api/projects).
struct Project
{
    struct Member
    {
        QString user;
        ProjectRole role = ProjectRole::Maintainer;

        friend bool operator==(const Member &, const Member &) = default;
    };

    qint64 id = 0;
    QString path;
    QDateTime createdAt;
    QString createdBy;
    QList<Member> members;

    static Result<Project> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Project &, const Project &) = default;
};

} // namespace cloop::api
