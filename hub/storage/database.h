#pragma once

#include "common/result.h"
#include "common/util/clock.h"

#include <QElapsedTimer>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

#include <chrono>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cloop::hub {

// The code of every error a statement meets while the cluster's database
// cannot be reached: nothing was changed, and the same call succeeds once
// it answers again (the admin API answers 503).
inline constexpr QLatin1StringView kDatabaseUnreachable { "database_unreachable" };
// The code of every error a change meets while the records' disk is full:
// nothing was changed, and the same call succeeds once space is freed (the
// admin API answers 507).
inline constexpr QLatin1StringView kStorageFull { "storage_full" };

// The rows of one statement, read eagerly so that no statement stays open
// across a commit (SQLite refuses to commit while one is). Reads like
// QSqlQuery: next(), value(i).
class Rows
{
public:
    Rows() = default;
    Rows(QList<QVariantList> rows, int rowsAffected)
        : m_rows(std::move(rows))
        , m_rowsAffected(rowsAffected)
    { }

    bool next() { return ++m_cursor < m_rows.size(); }
    QVariant value(int column) const
    {
        // The row by reference: a listing reads each of its cells this way.
        return m_cursor >= 0 && m_cursor < m_rows.size() ? m_rows.at(m_cursor).value(column)
                                                         : QVariant();
    }
    int numRowsAffected() const { return m_rowsAffected; }
    qsizetype size() const { return m_rows.size(); }

private:
    QList<QVariantList> m_rows;
    int m_rowsAffected = 0;
    qsizetype m_cursor = -1;
};

// libpq's keyword form: key=value pairs apart by spaces, a value bare or in
// single quotes, a backslash escaping the next character. A URL is refused:
// Qt's driver does not read one.
Result<QList<std::pair<QString, QString>>> parsePostgresKeywords(const QString &text);
// A value in single quotes, for the keyword form.
QString quotePostgresKeyword(QString value);

// The hub's records. The only class that knows which SQL engine is behind
// them: SQLite embedded (a file in the data folder, WAL), PostgreSQL for a
// cluster. Everything above speaks portable SQL through query().
class Database
{
    Q_DISABLE_COPY_MOVE(Database)

public:
    enum class Dialect
    {
        Sqlite,
        Postgres
    };

    ~Database();

    // Opens (creating if needed) and migrates to the current schema. The
    // stores stamp what they write, and judge what expired, by `clock`.
    static Result<std::unique_ptr<Database>> openSqlite(
        const QString &path, const Clock &clock = Clock::system());
    // `connectionString` is in libpq's keyword form ("host=db.example
    // dbname=cloop user=cloop password=…"; a value with spaces in single
    // quotes); QPSQL does not take URLs. The database's owner must be the
    // user: the migration creates its tables.
    static Result<std::unique_ptr<Database>> openPostgres(
        const QString &connectionString, const Clock &clock = Clock::system());

    Dialect dialect() const { return m_dialect; }
    // Where the records are, for a log line: the SQLite file, or the
    // PostgreSQL server and database (never the password).
    QString location() const
    {
        return m_dialect == Dialect::Postgres ? QStringLiteral("PostgreSQL (%1)").arg(m_target)
                                              : m_target;
    }
    QDateTime now() const { return m_clock.now(); }
    // SQL for the bytes of `column` (raw bytes) followed by those of
    // `tail`: SQLite's || makes text of bytes, which must be made bytes
    // again; PostgreSQL's keeps bytea.
    QString concatenatedBytes(const QString &column, const QString &tail) const;
    int schemaVersion() const;
    static int currentSchemaVersion();

    // Runs one statement with positional binds. Errors carry the statement's
    // purpose, never the bound values (they may be secrets' hashes).
    // PostgreSQL: a connection the server dropped is opened again at the
    // next statement outside a transaction; after a failed attempt the next
    // waits kReconnectPause, doubling up to kMaxReconnectPause (statements
    // in between fail at once with database_unreachable, so a server that
    // is down never stalls the hub's event loop statement after
    // statement); inside a transaction the statement fails and so does the
    // commit.
    Result<Rows> query(const QString &sql, const QVariantList &binds = {});
    // For a test: how many statements are kept prepared.
    int preparedStatements() const { return static_cast<int>(m_prepared.size()); }
    static constexpr std::chrono::milliseconds kReconnectPause { 500 };
    static constexpr std::chrono::milliseconds kMaxReconnectPause { 8'000 };
    // Since when the server could not be reached; invalid while it answers.
    QDateTime unreachableSince() const { return m_unreachableSince; }
    // Since when changes fail for want of space (SQLite's data folder, or
    // the PostgreSQL server's disk); invalid once a change is made again.
    QDateTime fullSince() const { return m_fullSince; }

    // Runs `work` once the transaction open now commits, or at once when
    // none is open; never when it rolls back. What a change tells others
    // (its events) thus follows the change, never a change that failed.
    void afterCommit(std::function<void()> work);
    bool inTransaction() const { return m_transactionDepth > 0; }

    // A second connection to the same PostgreSQL database, named
    // `purpose` in its connection name, for work that must not share the
    // main one (LISTEN). Its owner opens and closes it; removed with the
    // returned guard. PostgreSQL only.
    struct SideConnection
    {
        QString connectionName;
        ~SideConnection();
        SideConnection() = default;
        SideConnection(const SideConnection &) = delete;
        SideConnection &operator=(const SideConnection &) = delete;
    };
    Result<std::unique_ptr<SideConnection>> addSideConnection(const QString &purpose) const;

    // Told how long each statement took (the hub's metrics); none by default.
    using StatementObserver = std::function<void(std::chrono::nanoseconds took)>;
    void setStatementObserver(StatementObserver observer)
    {
        m_statementObserver = std::move(observer);
    }

    // Every row the statement yields, each read by `read(const Rows &)`.
    template <typename Read>
    auto queryAll(const QString &sql, const QVariantList &binds, Read read)
        -> Result<QList<std::invoke_result_t<Read &, const Rows &>>>
    {
        auto rows = query(sql, binds);
        if (!rows)
            return rows.error();
        QList<std::invoke_result_t<Read &, const Rows &>> out;
        out.reserve(rows->size());
        while (rows->next())
            out.append(read(*rows));
        return out;
    }

    // The first row the statement yields, read by `read`; `missing` when
    // it yields none.
    template <typename Read>
    auto queryOne(const QString &sql, const QVariantList &binds, Read read, const Error &missing)
        -> Result<std::invoke_result_t<Read &, const Rows &>>
    {
        auto rows = query(sql, binds);
        if (!rows)
            return rows.error();
        if (!rows->next())
            return missing;
        return read(*rows);
    }

    // RAII transaction: rolls back unless commit() succeeded. A transaction
    // begun while another is open joins it; if a joined one ends without
    // committing, the outer one can no longer commit. One that could not
    // begin fails every statement run while it lives, and its commit, with
    // the reason it did not begin: the work it wraps stops at its first
    // statement and nothing is written outside a transaction. What a change
    // answers with is read before commit(): after it, the change is made,
    // and a connection lost while reading it back would answer a change
    // that was made with an error, which its caller takes as refused.
    class Transaction
    {
    public:
        explicit Transaction(Database &db);
        ~Transaction();
        Transaction(const Transaction &) = delete;
        Transaction &operator=(const Transaction &) = delete;
        bool isActive() const { return m_active; }
        Status begin() const { return m_beginStatus; }
        Status commit();

    private:
        Database &m_db;
        bool m_active = false;
        bool m_joined = false;
        bool m_ownsFailedBegin = false;
        Status m_beginStatus;
    };

private:
    Database(QString connectionName, Dialect dialect, const Clock &clock);
    Status migrate();
    Status migrateSteps();
    Status applyPragmas();
    Status probeWritable();
    Status reconnect();
    // The error of a statement that could not run because the server is
    // gone, and the note of when it went.
    Error unreachable(const QString &why);
    // The error of a change refused for want of space, and the note of when
    // space ran out.
    Error full(const QString &why);
    // A change was written: space, if it ran out, is back.
    void noteWritten();
    void noteIfWritten(const QString &sql, const Result<Rows> &rows);
    Status prepareSession();
    Result<Rows> run(QSqlQuery &q, const QString &sql, const QVariantList &binds);
    Result<Rows> runPrepared(QSqlDatabase &db, const QString &sql, const QVariantList &binds);
    Result<Rows> readRows(QSqlQuery &q);
    Error storageError(const QString &what, const QSqlError &error);

    QString m_connectionName;
    Dialect m_dialect;
    const Clock &m_clock;
    // The server named without its password, for messages.
    QString m_target;
    int m_transactionDepth = 0;
    bool m_rollbackOnly = false;
    std::optional<Error> m_failedBegin; // of the transaction that could not begin
    StatementObserver m_statementObserver;
    QDateTime m_unreachableSince;
    QDateTime m_fullSince;
    // Whether the open transaction changed a row, so that its commit shows
    // space is back.
    bool m_transactionWrote = false;
    // A statement of the open transaction found the disk full.
    bool m_fullInTransaction = false;
    QElapsedTimer m_lastReconnectAttempt;
    std::chrono::milliseconds m_reconnectPause { kReconnectPause };
    // Work waiting for the open transaction to commit.
    std::vector<std::function<void()>> m_afterCommit;
    // Failed statements of the open transaction, freed after its rollback.
    std::vector<std::unique_ptr<QSqlQuery>> m_abortedStatements;
    // SQLite's statements with values, each prepared once: parsing the
    // same SQL again for every call was most of what the binding sweep
    // and each API request cost the hub's thread (docs/performance.md).
    std::unordered_map<QString, std::unique_ptr<QSqlQuery>> m_prepared;
};

// Timestamps are stored as ISO 8601 UTC text with milliseconds: portable,
// sortable as strings, readable with any SQL shell.
QString toDbTime(const QDateTime &time);
QDateTime fromDbTime(const QVariant &value);

} // namespace cloop::hub
