#pragma once

#include "common/api/projectrole.h"

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>

namespace cloop::hub {

class Database;

// A role is named once, where the admin API names it (common/api).
using ProjectRole = api::ProjectRole;
QString roleName(ProjectRole role);
std::optional<ProjectRole> parseRole(const QString &name);

struct UserRecord
{
    qint64 id = 0;
    QString name;
    bool hubAdmin = false;
    QDateTime createdAt;
};

struct ProjectMember
{
    QString user;
    ProjectRole role = ProjectRole::Maintainer;
};

struct ProjectRecord
{
    qint64 id = 0;
    QString path;
    QDateTime createdAt;
    QString createdBy;
    QList<ProjectMember> members;
};

struct RoleGrant
{
    qint64 projectId = 0;
    QString projectPath;
    ProjectRole role = ProjectRole::Maintainer;
};

// People and projects: users (hub administrators or not), projects named by
// their directory on the hub, and each user's role in each project.
class ProjectStore
{
public:
    explicit ProjectStore(Database &db)
        : m_db(db)
    { }

    Result<UserRecord> addUser(const QString &name, bool hubAdmin, const QString &actor);
    Result<UserRecord> findUser(const QString &name);
    Result<UserRecord> findUser(qint64 id);
    Result<QList<UserRecord>> users();

    Result<ProjectRecord> addProject(const QString &path, const QString &actor);
    // Checks the path first (validateProjectPath), then looks it up.
    Result<ProjectRecord> findProject(const QString &path);
    Result<ProjectRecord> findProject(qint64 id);
    Result<QList<ProjectRecord>> projects();

    // std::nullopt removes the user's role in the project.
    Result<ProjectRecord> setRole(
        qint64 projectId, qint64 userId, std::optional<ProjectRole> role, const QString &actor);
    Result<std::optional<ProjectRole>> roleIn(qint64 userId, qint64 projectId);
    Result<QList<RoleGrant>> rolesOf(qint64 userId);

    // Absolute and normalised ("/srv/projects/bench", no trailing slash, no "..").
    static Status validateProjectPath(const QString &path);

private:
    Result<QList<ProjectMember>> membersOf(qint64 projectId);

    Database &m_db;
};

} // namespace cloop::hub
