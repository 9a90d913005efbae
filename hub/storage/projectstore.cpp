#include "hub/storage/projectstore.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"

#include <QDir>

namespace cloop::hub {

using namespace Qt::StringLiterals;

namespace {

constexpr auto kUserColumns = "SELECT id, name, hub_admin, created_at FROM users"_L1;

UserRecord readUser(const Rows &q)
{
    return UserRecord { q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toInt() != 0,
        fromDbTime(q.value(3)) };
}

Error notFound(const QString &what)
{
    return Error::make(QStringLiteral("not_found"), what);
}

} // namespace

QString roleName(ProjectRole role)
{
    return QString(api::projectRoleName(role));
}

std::optional<ProjectRole> parseRole(const QString &name)
{
    return api::parseProjectRole(name);
}

Status ProjectStore::validateProjectPath(const QString &path)
{
    if (path.isEmpty() || !path.startsWith(QLatin1Char('/')) || QDir::cleanPath(path) != path
        || path == QLatin1String("/") || path.size() > 4096 || path.contains(QChar(u'\0')))
        return Error::make(QStringLiteral("invalid_project"),
            QStringLiteral("a project is named by its absolute directory on the hub, such as "
                           "/srv/projects/bench (no trailing slash, no \"..\"); \"%1\" is not one")
                .arg(path.left(200)));
    return {};
}

Result<UserRecord> ProjectStore::addUser(const QString &name, bool hubAdmin, const QString &actor)
{
    if (Status valid = ForwarderStore::validateName(name); !valid)
        return Error::make(QStringLiteral("invalid_name"),
            QStringLiteral("user name \"%1\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
                .arg(name.left(80)));
    Database::Transaction transaction(m_db);
    if (auto existing = findUser(name); existing)
        return Error::make(QStringLiteral("user_exists"),
            QStringLiteral("a user named \"%1\" already exists").arg(name));
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO users (name, hub_admin, created_at) VALUES (?, ?, ?) RETURNING id"),
        { name, hubAdmin ? 1 : 0, toDbTime(m_db.now()) });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(ErrorCode::StorageError, QStringLiteral("user insert returned no id"));
    const qint64 id = inserted->value(0).toLongLong();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kUserAdd,
            QStringLiteral("user:%1").arg(name), { { QStringLiteral("hub_admin"), hubAdmin } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = findUser(id);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

Result<UserRecord> ProjectStore::findUser(const QString &name)
{
    return m_db.queryOne(kUserColumns + " WHERE name = ?"_L1, { name }, readUser,
        notFound(QStringLiteral("no user named \"%1\"").arg(name.left(80))));
}

Result<UserRecord> ProjectStore::findUser(qint64 id)
{
    return m_db.queryOne(kUserColumns + " WHERE id = ?"_L1, { id }, readUser,
        notFound(QStringLiteral("no user with id %1").arg(id)));
}

Result<QList<UserRecord>> ProjectStore::users()
{
    return m_db.queryAll(kUserColumns + " ORDER BY name"_L1, {}, readUser);
}

Result<ProjectRecord> ProjectStore::addProject(const QString &path, const QString &actor)
{
    if (Status valid = validateProjectPath(path); !valid)
        return valid.error();
    Database::Transaction transaction(m_db);
    if (auto existing = findProject(path); existing)
        return Error::make(QStringLiteral("project_exists"),
            QStringLiteral("project %1 already exists").arg(path));
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO projects (path, created_at, created_by) VALUES (?, ?, ?) RETURNING id"),
        { path, toDbTime(m_db.now()), actor });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(
            ErrorCode::StorageError, QStringLiteral("project insert returned no id"));
    const qint64 id = inserted->value(0).toLongLong();
    if (Status audited = AuditLog(m_db).append(
            actor, auditaction::kProjectAdd, QStringLiteral("project:%1").arg(path));
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = findProject(id);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

Result<QList<ProjectMember>> ProjectStore::membersOf(qint64 projectId)
{
    auto q = m_db.query(
        QStringLiteral(
            "SELECT u.name, r.role FROM project_roles r JOIN users u ON u.id = r.user_id "
            "WHERE r.project_id = ? ORDER BY u.name"),
        { projectId });
    if (!q)
        return q.error();
    QList<ProjectMember> members;
    while (q->next()) {
        if (const auto role = parseRole(q->value(1).toString()))
            members.append(ProjectMember { q->value(0).toString(), *role });
    }
    return members;
}

Result<ProjectRecord> ProjectStore::findProject(const QString &path)
{
    // A malformed path is told apart from an unknown project.
    if (Status valid = validateProjectPath(path); !valid)
        return valid.error();
    auto q = m_db.query(QStringLiteral("SELECT id FROM projects WHERE path = ?"), { path });
    if (!q)
        return q.error();
    if (!q->next())
        return notFound(QStringLiteral("no project %1 (add it with `cloop project add %1`)")
                            .arg(path.left(200)));
    return findProject(q->value(0).toLongLong());
}

Result<ProjectRecord> ProjectStore::findProject(qint64 id)
{
    auto q = m_db.query(
        QStringLiteral("SELECT id, path, created_at, created_by FROM projects WHERE id = ?"),
        { id });
    if (!q)
        return q.error();
    if (!q->next())
        return notFound(QStringLiteral("no project with id %1").arg(id));
    ProjectRecord project { q->value(0).toLongLong(), q->value(1).toString(),
        fromDbTime(q->value(2)), q->value(3).toString(), {} };
    auto members = membersOf(project.id);
    if (!members)
        return members.error();
    project.members = *members;
    return project;
}

Result<QList<ProjectRecord>> ProjectStore::projects()
{
    auto q = m_db.query(QStringLiteral("SELECT id FROM projects ORDER BY path"));
    if (!q)
        return q.error();
    QList<ProjectRecord> out;
    while (q->next()) {
        auto project = findProject(q->value(0).toLongLong());
        if (!project)
            return project.error();
        out.append(*project);
    }
    return out;
}

Result<ProjectRecord> ProjectStore::setRole(
    qint64 projectId, qint64 userId, std::optional<ProjectRole> role, const QString &actor)
{
    Database::Transaction transaction(m_db);
    auto project = findProject(projectId);
    if (!project)
        return project.error();
    auto user = findUser(userId);
    if (!user)
        return user.error();
    auto removed = m_db.query(
        QStringLiteral("DELETE FROM project_roles WHERE project_id = ? AND user_id = ?"),
        { projectId, userId });
    if (!removed)
        return removed.error();
    if (role) {
        auto granted = m_db.query(
            QStringLiteral("INSERT INTO project_roles (project_id, user_id, role, granted_at, "
                           "granted_by) VALUES (?, ?, ?, ?, ?)"),
            { projectId, userId, roleName(*role), toDbTime(m_db.now()), actor });
        if (!granted)
            return granted.error();
    }
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kProjectRole,
            QStringLiteral("project:%1").arg(project->path),
            { { QStringLiteral("user"), user->name },
                { QStringLiteral("role"), role ? roleName(*role) : QStringLiteral("none") } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = findProject(projectId);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

Result<std::optional<ProjectRole>> ProjectStore::roleIn(qint64 userId, qint64 projectId)
{
    auto q = m_db.query(
        QStringLiteral("SELECT role FROM project_roles WHERE user_id = ? AND project_id = ?"),
        { userId, projectId });
    if (!q)
        return q.error();
    if (!q->next())
        return std::optional<ProjectRole>();
    return parseRole(q->value(0).toString());
}

Result<QList<RoleGrant>> ProjectStore::rolesOf(qint64 userId)
{
    auto q = m_db.query(
        QStringLiteral("SELECT p.id, p.path, r.role FROM project_roles r JOIN projects p ON "
                       "p.id = r.project_id WHERE r.user_id = ? ORDER BY p.path"),
        { userId });
    if (!q)
        return q.error();
    QList<RoleGrant> grants;
    while (q->next()) {
        if (const auto role = parseRole(q->value(2).toString()))
            grants.append(RoleGrant { q->value(0).toLongLong(), q->value(1).toString(), *role });
    }
    return grants;
}

} // namespace cloop::hub
