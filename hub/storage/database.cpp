#include "hub/storage/database.h"

#include "common/logging.h"
#include "hub/storage/schema.h"

#include <QAtomicInteger>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlRecord>

namespace cloop::hub {

namespace {
QString nextConnectionName()
{
    static QAtomicInteger<int> counter;
    return QStringLiteral("cloop-hub-%1").arg(counter.fetchAndAddRelaxed(1));
}
} // namespace

QString toDbTime(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
}

QDateTime fromDbTime(const QVariant &value)
{
    if (value.isNull())
        return {};
    QDateTime time = QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    time.setTimeSpec(Qt::UTC);
    return time;
}

Database::Database(QString connectionName, Dialect dialect, const Clock &clock)
    : m_connectionName(std::move(connectionName))
    , m_dialect(dialect)
    , m_clock(clock)
{ }

Database::~Database()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

Error Database::storageError(const QString &what, const QSqlError &error) const
{
    return Error::make(ErrorCode::StorageError,
        QStringLiteral("database error while %1: %2").arg(what, error.text()));
}

Result<std::unique_ptr<Database>> Database::openSqlite(const QString &path, const Clock &clock)
{
    const QFileInfo info(path);
    if (info.exists() && !info.isFile())
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("database path %1 is not a file").arg(path), true);
    const QFileInfo dirInfo(info.absolutePath());
    if (!dirInfo.isDir())
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("data folder %1 does not exist").arg(info.absolutePath()), true);

    std::unique_ptr<Database> database(new Database(nextConnectionName(), Dialect::Sqlite, clock));
    {
        QSqlDatabase db
            = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), database->m_connectionName);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
        if (!db.open())
            return Error::make(ErrorCode::StorageError,
                QStringLiteral("cannot open database %1: %2").arg(path, db.lastError().text()),
                true);
    }
    if (Status pragmas = database->applyPragmas(); !pragmas)
        return Error::make(pragmas.error().code,
            QStringLiteral("database %1 cannot be used: %2 (is it a cloop database, "
                           "and is the folder writable?)")
                .arg(path, pragmas.error().message),
            true);
    if (Status migrated = database->migrate(); !migrated)
        return Error::make(migrated.error().code,
            QStringLiteral("database %1: %2").arg(path, migrated.error().message), true);
    if (Status writable = database->probeWritable(); !writable)
        return Error::make(writable.error().code,
            QStringLiteral("database %1 is not writable: %2").arg(path, writable.error().message),
            true);
    return database;
}

Result<std::unique_ptr<Database>> Database::openPostgres(
    const QString &connectionString, const Clock &clock)
{
    std::unique_ptr<Database> database(
        new Database(nextConnectionName(), Dialect::Postgres, clock));
    {
        QSqlDatabase db
            = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), database->m_connectionName);
        // Qt's QPSQL takes the libpq keywords through the connect options.
        db.setConnectOptions(connectionString);
        if (!db.open())
            return Error::make(ErrorCode::StorageError,
                QStringLiteral("cannot connect to PostgreSQL: %1").arg(db.lastError().text()),
                true);
    }
    if (Status migrated = database->migrate(); !migrated)
        return Error::make(migrated.error().code,
            QStringLiteral("PostgreSQL: %1").arg(migrated.error().message), true);
    return database;
}

Status Database::applyPragmas()
{
    // WAL lets readers (the CLI's sqlite3 shell, backups) run beside the hub;
    // NORMAL sync is durable across process crashes in WAL mode.
    for (const char *pragma :
        { "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON" }) {
        auto result = query(QString::fromLatin1(pragma));
        if (!result)
            return result.error();
    }
    // A corrupt or foreign file is found here rather than at the first write.
    auto check = query(QStringLiteral("SELECT count(*) FROM sqlite_master"));
    if (!check)
        return check.error();
    return {};
}

Result<Rows> Database::query(const QString &sql, const QVariantList &binds)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (binds.isEmpty()) {
        // PostgreSQL cannot PREPARE DDL or transaction control; statements
        // without values run as they are.
        if (!q.exec(sql))
            return storageError(QStringLiteral("running \"%1\"").arg(sql.left(60)), q.lastError());
    } else {
        if (!q.prepare(sql))
            return storageError(
                QStringLiteral("preparing \"%1\"").arg(sql.left(60)), q.lastError());
        for (const QVariant &bind : binds)
            q.addBindValue(bind);
        if (!q.exec())
            return storageError(QStringLiteral("running \"%1\"").arg(sql.left(60)), q.lastError());
    }
    QList<QVariantList> rows;
    if (q.isSelect()) {
        const int columns = q.record().count();
        while (q.next()) {
            QVariantList row;
            row.reserve(columns);
            for (int i = 0; i < columns; ++i)
                row.append(q.value(i));
            rows.append(row);
        }
    }
    const int affected = q.numRowsAffected();
    q.finish();
    return Rows(std::move(rows), affected);
}

Database::Transaction::Transaction(Database &db)
    : m_db(db)
{
    if (db.m_transactionDepth > 0) {
        // Joins the transaction already open: a store's change made inside a
        // service's transaction commits or rolls back with it.
        m_joined = true;
        m_active = true;
        ++db.m_transactionDepth;
        return;
    }
    // SQLite: take the write lock up front. A deferred transaction that
    // reads and then writes can fail with "busy" when another connection
    // wrote in between; IMMEDIATE makes the second writer wait its turn.
    auto begun = db.query(db.m_dialect == Dialect::Sqlite ? QStringLiteral("BEGIN IMMEDIATE")
                                                          : QStringLiteral("BEGIN"));
    if (!begun) {
        m_beginStatus = begun.error();
        return;
    }
    ++db.m_transactionDepth;
    db.m_rollbackOnly = false;
    m_active = true;
}

Database::Transaction::~Transaction()
{
    if (!m_active)
        return;
    --m_db.m_transactionDepth;
    if (m_joined) {
        // An inner part gave up: the whole may not commit.
        m_db.m_rollbackOnly = true;
        return;
    }
    if (auto rolledBack = m_db.query(QStringLiteral("ROLLBACK")); !rolledBack)
        qCWarning(lcHubDb).noquote() << rolledBack.error().message;
}

Status Database::Transaction::commit()
{
    if (!m_active)
        return m_beginStatus.ok() ? Status(Error::make(
                   ErrorCode::StorageError, QStringLiteral("transaction already ended")))
                                  : m_beginStatus;
    if (m_joined) {
        m_active = false;
        --m_db.m_transactionDepth;
        return {};
    }
    if (m_db.m_rollbackOnly)
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("a part of the change failed; nothing was committed"));
    if (auto committed = m_db.query(QStringLiteral("COMMIT")); !committed)
        return committed.error(); // the destructor rolls back
    m_active = false;
    --m_db.m_transactionDepth;
    return {};
}

Status Database::probeWritable()
{
    // SQLite quietly opens a file it may not write read-only, and even takes
    // the write lock; only a real write fails. Without this the hub would
    // start and then fail at its first enrollment.
    Transaction transaction(*this);
    if (!transaction.begin())
        return transaction.begin();
    auto written
        = query(QStringLiteral("UPDATE meta SET value = value WHERE key = 'schema_version'"));
    if (!written)
        return written.error();
    return {}; // rolled back by the transaction's destructor
}

int Database::currentSchemaVersion()
{
    return schema::latestVersion();
}

int Database::schemaVersion() const
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")) || !q.next())
        return 0;
    return q.value(0).toInt();
}

Status Database::migrate()
{
    {
        auto created = query(QStringLiteral(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"));
        if (!created)
            return created.error();
    }
    const int from = schemaVersion();
    const int latest = schema::latestVersion();
    if (from > latest)
        return Error::make(QStringLiteral("schema_too_new"),
            QStringLiteral("the database has schema version %1, newer than this hub "
                           "understands (%2); upgrade cloop")
                .arg(from)
                .arg(latest),
            true);
    for (int version = from + 1; version <= latest; ++version) {
        Transaction transaction(*this);
        if (!transaction.begin())
            return transaction.begin();
        const QStringList statements = schema::migrationTo(version, m_dialect == Dialect::Postgres);
        for (const QString &statement : statements) {
            auto result = query(statement);
            if (!result)
                return Error::make(result.error().code,
                    QStringLiteral("migration to schema %1 failed, nothing changed: %2")
                        .arg(version)
                        .arg(result.error().message));
        }
        auto stamped = query(from == 0 && version == 1
                ? QStringLiteral("INSERT INTO meta (key, value) VALUES ('schema_version', ?)")
                : QStringLiteral("UPDATE meta SET value = ? WHERE key = 'schema_version'"),
            { QString::number(version) });
        if (!stamped)
            return stamped.error();
        if (Status committed = transaction.commit(); !committed)
            return committed;
        qCInfo(lcHubDb) << "database migrated to schema" << version;
    }
    return {};
}

} // namespace cloop::hub
