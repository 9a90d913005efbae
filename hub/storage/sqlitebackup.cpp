#include "hub/storage/sqlitebackup.h"

#include "common/errorcode.h"
#include "common/logging.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

namespace cloop::hub {

using namespace Qt::StringLiterals;

namespace {

constexpr auto kFilesTable = "cloop_backup_files"_L1;

Error backupError(const QString &message)
{
    return Error::make(ErrorCode::StorageError, message);
}

// One QSqlDatabase connection of its own, removed when it goes.
class Connection
{
    Q_DISABLE_COPY_MOVE(Connection)

public:
    Connection(const QString &path, bool readOnly)
        : m_name(u"cloop-backup-"_s + QUuid::createUuid().toString(QUuid::WithoutBraces))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, m_name);
        db.setDatabaseName(path);
        // The hub may hold the write lock for a moment; a reader waits.
        db.setConnectOptions(readOnly ? u"QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"_s
                                      : u"QSQLITE_BUSY_TIMEOUT=5000"_s);
        m_open = db.open();
        if (!m_open)
            m_error = db.lastError().text();
    }
    ~Connection()
    {
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
    }

    bool isOpen() const { return m_open; }
    QString openError() const { return m_error; }

    // Runs `sql` with `binds`; the error names `purpose`, never a value.
    Result<QSqlQuery> run(const QString &sql, const QVariantList &binds, const QString &purpose)
    {
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        bool done = false;
        if (binds.isEmpty()) {
            done = query.exec(sql);
        } else {
            done = query.prepare(sql);
            for (const QVariant &bind : binds)
                query.addBindValue(bind);
            done = done && query.exec();
        }
        if (!done)
            return backupError(u"%1: %2"_s.arg(purpose, query.lastError().databaseText()));
        return query;
    }

    Status checkIntegrity(const QString &what)
    {
        auto check = run(u"PRAGMA integrity_check"_s, {}, u"checking "_s + what);
        if (!check)
            return check.error();
        if (!check->next() || check->value(0).toString() != "ok"_L1)
            return backupError(u"%1 is damaged: %2"_s.arg(what, check->value(0).toString()));
        return {};
    }

private:
    QString m_name;
    bool m_open = false;
    QString m_error;
};

QString partialPath(const QString &target)
{
    return target + u".partial-"_s + QString::number(QCoreApplication::applicationPid());
}

Status finishFile(const QString &partial, const QString &target)
{
    QFile file(partial);
    if (!file.setPermissions(QFile::ReadOwner | QFile::WriteOwner))
        return backupError(u"cannot make %1 private: %2"_s.arg(partial, file.errorString()));
    if (!file.rename(target))
        return backupError(
            u"cannot rename %1 to %2: %3"_s.arg(partial, target, file.errorString()));
    return {};
}

Status writeCopy(
    const QString &databasePath, const QString &partial, const SqliteBackup::Files &files)
{
    {
        Connection live(databasePath, true);
        if (!live.isOpen())
            return backupError(u"cannot open %1: %2"_s.arg(databasePath, live.openError()));
        if (auto copied = live.run(u"VACUUM INTO ?"_s, { partial }, u"copying the database"_s);
            !copied)
            return copied.error();
    }
    Connection copy(partial, false);
    if (!copy.isOpen())
        return backupError(u"cannot open the copy %1: %2"_s.arg(partial, copy.openError()));
    if (auto made = copy.run(
            u"CREATE TABLE %1 (name TEXT PRIMARY KEY, content BLOB NOT NULL)"_s.arg(kFilesTable),
            {}, u"adding the hub's files"_s);
        !made)
        return made.error();
    for (auto file = files.cbegin(); file != files.cend(); ++file) {
        if (auto added
            = copy.run(u"INSERT INTO %1 (name, content) VALUES (?, ?)"_s.arg(kFilesTable),
                { file.key(), file.value() }, u"adding "_s + file.key());
            !added)
            return added.error();
    }
    return copy.checkIntegrity(u"the copy"_s);
}

} // namespace

Status SqliteBackup::write(const QString &databasePath, const QString &target, const Files &files)
{
    if (!QFileInfo::exists(databasePath))
        return backupError(u"no hub database at %1"_s.arg(databasePath));
    if (QFileInfo::exists(target))
        return backupError(u"%1 exists; a backup never replaces a file"_s.arg(target));
    const QString partial = partialPath(target);
    QFile::remove(partial);
    Status written = writeCopy(databasePath, partial, files);
    if (written)
        written = finishFile(partial, target);
    if (!written)
        QFile::remove(partial);
    else
        qCInfo(lcHubDb).noquote() << "backup of" << databasePath << "written to" << target;
    return written;
}

Result<SqliteBackup::Files> SqliteBackup::restore(
    const QString &backup, const QString &databasePath)
{
    if (QFileInfo::exists(databasePath))
        return backupError(
            u"%1 exists; restore into a data folder that holds no hub"_s.arg(databasePath));
    Files files;
    {
        Connection source(backup, true);
        if (!source.isOpen())
            return backupError(u"cannot open %1: %2"_s.arg(backup, source.openError()));
        if (Status whole = source.checkIntegrity(backup); !whole)
            return whole.error();
        auto read = source.run(
            u"SELECT name, content FROM %1 ORDER BY name"_s.arg(kFilesTable), {}, u"reading"_s);
        auto schema = source.run(
            u"SELECT value FROM meta WHERE key = 'schema_version'"_s, {}, u"reading"_s);
        if (!read || !schema || !schema->next())
            return backupError(u"%1 is not a backup written by cloop hub backup"_s.arg(backup));
        while (read->next())
            files.insert(read->value(0).toString(), read->value(1).toByteArray());
    }
    const QString partial = partialPath(databasePath);
    QFile::remove(partial);
    if (!QFile::copy(backup, partial))
        return backupError(u"cannot copy %1 to %2"_s.arg(backup, partial));
    Status restored = [&]() -> Status {
        Connection copy(partial, false);
        if (!copy.isOpen())
            return backupError(u"cannot open %1: %2"_s.arg(partial, copy.openError()));
        if (auto dropped = copy.run(u"DROP TABLE %1"_s.arg(kFilesTable), {}, u"restoring"_s);
            !dropped)
            return dropped.error();
        if (auto mode = copy.run(u"PRAGMA journal_mode = WAL"_s, {}, u"restoring"_s); !mode)
            return mode.error();
        return {};
    }();
    if (restored)
        restored = finishFile(partial, databasePath);
    if (!restored) {
        QFile::remove(partial);
        return restored.error();
    }
    return files;
}

} // namespace cloop::hub
