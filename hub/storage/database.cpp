#include "hub/storage/database.h"

#include "common/util/duration.h"

#include "common/logging.h"
#include "hub/storage/schema.h"

#include <QAtomicInteger>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlRecord>

#include <cstdio>
#include <utility>

namespace cloop::hub {

namespace {
QString nextConnectionName()
{
    static QAtomicInteger<int> counter;
    return QStringLiteral("cloop-hub-%1").arg(counter.fetchAndAddRelaxed(1));
}

// The session lock a PostgreSQL database is migrated under ("cloop").
constexpr qint64 kMigrationLockKey = 0x636c6f6f70;

Error badConnectionString(const QString &why)
{
    // The string itself is never quoted back: it may hold a password.
    return Error::make(ErrorCode::StorageError,
        QStringLiteral("the PostgreSQL connection string %1; it takes libpq's keyword form, "
                       "such as \"host=db.example dbname=cloop user=cloop password=…\"")
            .arg(why),
        true);
}

// The server's own words, first line only: its DETAIL line repeats a row's
// values and its LINE line the statement with them, and a data error quotes
// the value it could not read.
QString postgresMessage(const QSqlError &error)
{
    QString text = error.databaseText().section(QLatin1Char('\n'), 0, 0).trimmed();
    for (const char *severity : { "ERROR:", "FATAL:", "PANIC:" }) {
        if (text.startsWith(QLatin1String(severity)))
            text = text.mid(qstrlen(severity)).trimmed();
    }
    const QString state = error.nativeErrorCode();
    if (state.startsWith(QLatin1String("22"))) {
        if (const qsizetype quote = text.indexOf(QLatin1String(": \"")); quote >= 0)
            text.truncate(quote);
    }
    if (text.isEmpty())
        text = error.driverText();
    if (!state.isEmpty())
        text += QStringLiteral(" (SQLSTATE %1)").arg(state);
    return text;
}
} // namespace

Result<QList<std::pair<QString, QString>>> parsePostgresKeywords(const QString &text)
{
    if (text.startsWith(QLatin1String("postgresql://"))
        || text.startsWith(QLatin1String("postgres://")))
        return badConnectionString(QStringLiteral("is a URL, which Qt's driver does not read"));
    QList<std::pair<QString, QString>> pairs;
    qsizetype i = 0;
    const qsizetype size = text.size();
    const auto skipSpaces = [&] {
        while (i < size && text.at(i).isSpace())
            ++i;
    };
    for (skipSpaces(); i < size; skipSpaces()) {
        const qsizetype keyStart = i;
        while (i < size && text.at(i) != QLatin1Char('=') && !text.at(i).isSpace())
            ++i;
        const QString key = text.mid(keyStart, i - keyStart);
        skipSpaces();
        if (key.isEmpty() || i >= size || text.at(i) != QLatin1Char('='))
            return badConnectionString(QStringLiteral("has a word without \"=\""));
        ++i;
        skipSpaces();
        QString value;
        const bool quoted = i < size && text.at(i) == QLatin1Char('\'');
        if (quoted)
            ++i;
        bool closed = !quoted;
        while (i < size) {
            const QChar c = text.at(i++);
            if (c == QLatin1Char('\\') && i < size) {
                value.append(text.at(i++));
            } else if (quoted && c == QLatin1Char('\'')) {
                closed = true;
                break;
            } else if (!quoted && c.isSpace()) {
                break;
            } else {
                value.append(c);
            }
        }
        if (!closed)
            return badConnectionString(QStringLiteral("has a quote that is not closed"));
        pairs.append({ key, value });
    }
    return pairs;
}

QString quotePostgresKeyword(QString value)
{
    value.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    value.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') + value + QLatin1Char('\'');
}

QString toDbTime(const QDateTime &time)
{
    // By hand: every record of a listing carries several times, and
    // QDateTime::toString parses its format pattern at each call.
    const QDateTime utc = time.toUTC();
    const QDate date = utc.date();
    const QTime clock = utc.time();
    char text[40];
    const int length
        = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", date.year(),
            date.month(), date.day(), clock.hour(), clock.minute(), clock.second(), clock.msec());
    return QString::fromLatin1(text, length);
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
    m_abortedStatements.clear(); // before their connection goes
    m_prepared.clear();
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

Error Database::storageError(const QString &what, const QSqlError &error)
{
    // SQLITE_FULL (SQLite's own code for a write that met ENOSPC), and
    // PostgreSQL's disk_full.
    if (error.nativeErrorCode() == QLatin1String(m_dialect == Dialect::Sqlite ? "13" : "53100"))
        return full(QStringLiteral("%1: %2").arg(
            what, m_dialect == Dialect::Sqlite ? error.databaseText() : postgresMessage(error)));
    if (m_dialect == Dialect::Sqlite)
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("database error while %1: %2").arg(what, error.text()));
    // The driver may still call the connection open when the server has
    // just ended it; the server's own codes say so (class 08: the
    // connection; 57P01-03: the server shutting down or not yet up).
    const QString state = error.nativeErrorCode();
    const bool serverGone = state.startsWith(QLatin1String("08")) || state == QLatin1String("57P01")
        || state == QLatin1String("57P02") || state == QLatin1String("57P03");
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    if (serverGone && db.isOpen() && m_transactionDepth == 0)
        db.close(); // opened again at the next statement
    if (serverGone || !db.isOpen())
        return unreachable(QStringLiteral("the connection to PostgreSQL (%1) was lost while %2: %3")
                               .arg(m_target, what, postgresMessage(error)));
    return Error::make(ErrorCode::StorageError,
        QStringLiteral("database error while %1: %2").arg(what, postgresMessage(error)));
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
    database->m_target = info.absoluteFilePath();
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
    auto keywords = parsePostgresKeywords(connectionString);
    if (!keywords)
        return keywords.error();
    std::unique_ptr<Database> database(
        new Database(nextConnectionName(), Dialect::Postgres, clock));
    QStringList target;
    {
        QSqlDatabase db
            = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), database->m_connectionName);
        // The driver quotes what its setters are given; the options it
        // passes on as they are, but with every ';' made a space, which
        // would break a password.
        QStringList options;
        for (const auto &[key, value] : std::as_const(*keywords)) {
            if (key == QLatin1String("host")) {
                db.setHostName(value);
            } else if (key == QLatin1String("port")) {
                bool isNumber = false;
                db.setPort(value.toInt(&isNumber));
                if (!isNumber)
                    return badConnectionString(QStringLiteral("has a port that is not a number"));
            } else if (key == QLatin1String("dbname")) {
                db.setDatabaseName(value);
            } else if (key == QLatin1String("user")) {
                db.setUserName(value);
            } else if (key == QLatin1String("password")) {
                db.setPassword(value);
            } else {
                options.append(key + QLatin1Char('=') + quotePostgresKeyword(value));
            }
            static const QStringList kNamesTheServer { QStringLiteral("host"),
                QStringLiteral("hostaddr"), QStringLiteral("port"), QStringLiteral("dbname"),
                QStringLiteral("user") };
            if (kNamesTheServer.contains(key))
                target.append(key + QLatin1Char('=') + value);
        }
        database->m_target = target.join(QLatin1Char(' '));
        db.setConnectOptions(options.join(QLatin1Char(' ')));
        if (!db.open())
            return Error::make(ErrorCode::StorageError,
                QStringLiteral("cannot connect to PostgreSQL (%1): %2")
                    .arg(database->m_target, db.lastError().databaseText().simplified()),
                true);
    }
    if (Status session = database->prepareSession(); !session)
        return session.error();
    const QString where = QStringLiteral("PostgreSQL (%1)").arg(database->m_target);
    // A standby takes the connection and refuses every write; say so before
    // the migration fails at its first statement.
    auto readOnly
        = database->query(QStringLiteral("SELECT current_setting('transaction_read_only')"));
    if (!readOnly)
        return Error::make(readOnly.error().code,
            QStringLiteral("%1: %2").arg(where, readOnly.error().message), true);
    if (readOnly->next() && readOnly->value(0).toString() == QLatin1String("on"))
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("%1 is not writable: its transactions are read-only (a standby, or "
                           "default_transaction_read_only is on); the hub needs the primary")
                .arg(where),
            true);
    if (Status migrated = database->migrate(); !migrated)
        return Error::make(migrated.error().code,
            QStringLiteral("%1: %2").arg(where, migrated.error().message), true);
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

Error Database::full(const QString &why)
{
    if (m_transactionDepth > 0)
        m_fullInTransaction = true;
    if (!m_fullSince.isValid()) {
        m_fullSince = m_clock.now();
        qCWarning(lcHubDb).noquote() << "no space left for the records in" << location()
                                     << "- changes are refused until space is freed:" << why;
    }
    return Error::make(QString(kStorageFull),
        QStringLiteral("the hub's %1 has no space left (since %2): nothing was changed; "
                       "its operator must free space there")
            .arg(m_dialect == Dialect::Sqlite ? QStringLiteral("data folder")
                                              : QStringLiteral("database server"),
                m_fullSince.toString(Qt::ISODate)));
}

void Database::noteWritten()
{
    if (!m_fullSince.isValid())
        return;
    qCInfo(lcHubDb).noquote() << "space for the records in" << location()
                              << "is back: changes are made again";
    m_fullSince = QDateTime();
}

Error Database::unreachable(const QString &why)
{
    if (!m_unreachableSince.isValid()) {
        m_unreachableSince = m_clock.now();
        qCWarning(lcHubDb).noquote() << "the cluster database is unreachable:" << why;
    }
    return Error::make(QString(kDatabaseUnreachable),
        QStringLiteral("the cluster database is unreachable (since %1; nothing was changed): %2")
            .arg(util::formatUtcTime(m_unreachableSince), why));
}

Status Database::reconnect()
{
    if (m_lastReconnectAttempt.isValid()
        && m_lastReconnectAttempt.elapsed() < m_reconnectPause.count())
        return unreachable(QStringLiteral("PostgreSQL (%1) did not answer the last attempt; the "
                                          "hub tries again within %2 ms")
                               .arg(m_target)
                               .arg(m_reconnectPause.count()));
    const bool retrying = m_lastReconnectAttempt.isValid();
    m_lastReconnectAttempt.start();
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    db.close();
    if (!db.open()) {
        if (retrying)
            m_reconnectPause = std::min(m_reconnectPause * 2, kMaxReconnectPause);
        return unreachable(QStringLiteral("the connection to PostgreSQL (%1) was lost and cannot "
                                          "be opened again: %2")
                               .arg(m_target, db.lastError().databaseText().simplified()));
    }
    m_reconnectPause = kReconnectPause;
    if (Status session = prepareSession(); !session)
        return session;
    m_lastReconnectAttempt.invalidate();
    if (m_unreachableSince.isValid())
        qCInfo(lcHubDb).noquote() << "connected to PostgreSQL again:" << m_target
                                  << "(unreachable since"
                                  << m_unreachableSince.toString(Qt::ISODate) + QLatin1Char(')');
    else
        qCInfo(lcHubDb).noquote() << "connected to PostgreSQL again:" << m_target;
    m_unreachableSince = {};
    return {};
}

void Database::afterCommit(std::function<void()> work)
{
    // Inside a transaction that could not begin: it never commits.
    if (m_failedBegin)
        return;
    if (m_transactionDepth == 0) {
        work();
        return;
    }
    m_afterCommit.push_back(std::move(work));
}

Database::SideConnection::~SideConnection()
{
    if (connectionName.isEmpty())
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(connectionName);
}

Result<std::unique_ptr<Database::SideConnection>> Database::addSideConnection(
    const QString &purpose) const
{
    if (m_dialect != Dialect::Postgres)
        return Error::make(ErrorCode::StorageError,
            QStringLiteral("a %1 connection needs PostgreSQL").arg(purpose));
    auto side = std::make_unique<SideConnection>();
    side->connectionName = nextConnectionName() + QLatin1Char('-') + purpose;
    QSqlDatabase::cloneDatabase(m_connectionName, side->connectionName);
    return side;
}

Status Database::prepareSession()
{
    // The server's notices ("relation meta already exists, skipping" at
    // every start) would go to stderr unlabelled.
    auto quiet = query(QStringLiteral("SET client_min_messages TO warning"));
    if (!quiet)
        return quiet.error();
    return {};
}

Result<Rows> Database::query(const QString &sql, const QVariantList &binds)
{
    if (m_failedBegin)
        return *m_failedBegin;
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    if (m_dialect == Dialect::Postgres && !db.isOpen()) {
        // A new connection would run the rest of a transaction outside it.
        if (m_transactionDepth > 0) {
            m_rollbackOnly = true;
            return unreachable(
                QStringLiteral("the connection to PostgreSQL (%1) was lost during a change; "
                               "nothing of it was committed")
                    .arg(m_target));
        }
        if (Status reopened = reconnect(); !reopened)
            return reopened.error();
    }
    QElapsedTimer took;
    if (m_statementObserver)
        took.start();
    if (m_dialect == Dialect::Sqlite && !binds.isEmpty()) {
        Result<Rows> rows = runPrepared(db, sql, binds);
        if (m_statementObserver)
            m_statementObserver(std::chrono::nanoseconds(took.nsecsElapsed()));
        noteIfWritten(sql, rows);
        return rows;
    }
    QSqlQuery q(db);
    Result<Rows> rows = run(q, sql, binds);
    if (m_statementObserver)
        m_statementObserver(std::chrono::nanoseconds(took.nsecsElapsed()));
    if (!rows && m_dialect == Dialect::Postgres && m_transactionDepth > 0) {
        // PostgreSQL gives a transaction up at its first failed statement
        // and answers a COMMIT there with a quiet rollback, not an error.
        m_rollbackOnly = true;
        // Until the rollback the server refuses to free the statement too.
        m_abortedStatements.push_back(std::make_unique<QSqlQuery>(std::move(q)));
    }
    noteIfWritten(sql, rows);
    return rows;
}

void Database::noteIfWritten(const QString &sql, const Result<Rows> &rows)
{
    if (!m_fullSince.isValid() || !rows || rows->numRowsAffected() <= 0)
        return;
    // The statements are the code's own: a change starts with its verb.
    static const QRegularExpression change(QStringLiteral("^\\s*(INSERT|UPDATE|DELETE)\\b"),
        QRegularExpression::CaseInsensitiveOption);
    if (!change.match(sql).hasMatch())
        return;
    if (m_transactionDepth > 0)
        m_transactionWrote = true;
    else
        noteWritten();
}

Result<Rows> Database::run(QSqlQuery &q, const QString &sql, const QVariantList &binds)
{
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
    return readRows(q);
}

Result<Rows> Database::runPrepared(QSqlDatabase &db, const QString &sql, const QVariantList &binds)
{
    // The set of statements is the code's own, a few hundred at most; one
    // built from data would only refill it.
    constexpr size_t kMaxPrepared = 512;
    auto found = m_prepared.find(sql);
    if (found == m_prepared.end()) {
        if (m_prepared.size() >= kMaxPrepared)
            m_prepared.clear();
        auto q = std::make_unique<QSqlQuery>(db);
        q->setForwardOnly(true);
        if (!q->prepare(sql))
            return storageError(
                QStringLiteral("preparing \"%1\"").arg(sql.left(60)), q->lastError());
        found = m_prepared.emplace(sql, std::move(q)).first;
    }
    QSqlQuery &q = *found->second;
    for (int i = 0; i < binds.size(); ++i)
        q.bindValue(i, binds.at(i));
    if (!q.exec()) {
        Error error
            = storageError(QStringLiteral("running \"%1\"").arg(sql.left(60)), q.lastError());
        // Prepared again next time rather than trusted after a failure.
        m_prepared.erase(found);
        return error;
    }
    return readRows(q);
}

Result<Rows> Database::readRows(QSqlQuery &q)
{
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
    if (db.m_failedBegin) {
        m_beginStatus = *db.m_failedBegin;
        return;
    }
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
        db.m_failedBegin = begun.error();
        m_ownsFailedBegin = true;
        return;
    }
    ++db.m_transactionDepth;
    db.m_rollbackOnly = false;
    db.m_transactionWrote = false;
    m_active = true;
}

Database::Transaction::~Transaction()
{
    if (m_ownsFailedBegin)
        m_db.m_failedBegin.reset();
    if (!m_active)
        return;
    --m_db.m_transactionDepth;
    if (m_joined) {
        // An inner part gave up: the whole may not commit.
        m_db.m_rollbackOnly = true;
        return;
    }
    // The server rolls back the transaction of a connection that ended.
    const bool connectionLost = m_db.m_dialect == Dialect::Postgres
        && !QSqlDatabase::database(m_db.m_connectionName, false).isOpen();
    if (!connectionLost) {
        // SQLite rolls a transaction back itself when the disk is full; its
        // answer to this ROLLBACK then says there is none, as expected.
        const bool rolledBackAlready
            = m_db.m_dialect == Dialect::Sqlite && std::exchange(m_db.m_fullInTransaction, false);
        if (auto rolledBack = m_db.query(QStringLiteral("ROLLBACK"));
            !rolledBack && !rolledBackAlready)
            qCWarning(lcHubDb).noquote() << rolledBack.error().message;
    }
    m_db.m_fullInTransaction = false;
    m_db.m_abortedStatements.clear();
    m_db.m_afterCommit.clear();
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
    if (std::exchange(m_db.m_transactionWrote, false))
        m_db.noteWritten();
    // Taken first: the work may open transactions of its own.
    const std::vector<std::function<void()>> due = std::exchange(m_db.m_afterCommit, {});
    for (const auto &work : due)
        work();
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

QString Database::concatenatedBytes(const QString &column, const QString &tail) const
{
    if (m_dialect == Dialect::Postgres)
        return QStringLiteral("%1 || %2").arg(column, tail);
    return QStringLiteral("CAST(%1 || %2 AS BLOB)").arg(column, tail);
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
    if (m_dialect == Dialect::Sqlite)
        return migrateSteps();
    // Hub members starting together on one database migrate it one after
    // the other; the later ones find the schema current.
    const QString lock = QStringLiteral("SELECT pg_advisory_lock(%1)").arg(kMigrationLockKey);
    if (auto locked = query(lock); !locked)
        return locked.error();
    const Status migrated = migrateSteps();
    auto unlocked = query(QStringLiteral("SELECT pg_advisory_unlock(%1)").arg(kMigrationLockKey));
    if (!migrated)
        return migrated;
    if (!unlocked)
        return unlocked.error();
    return {};
}

Status Database::migrateSteps()
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
