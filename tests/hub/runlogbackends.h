#pragma once

// Where a run log store test keeps its logs: files in a folder (a single
// hub), the database on SQLite, or the database on a real PostgreSQL server
// the test starts itself (a cluster). Each test gets an empty place; the
// same behaviour is then asked of every store.

#include "hub/storage/database.h"
#include "hub/storage/databaserunlogstore.h"
#include "hub/storage/filerunlogstore.h"
#include "support/postgresserver.h"

#include <QTemporaryDir>
#include <QtTest>

#include <memory>

namespace cloop::testing {

enum class LogBackend
{
    Files,
    Sqlite,
    Postgres,
};

class RunLogBackends
{
public:
    // Global data: every test function runs once per backend.
    static void addRows(bool withFiles)
    {
        QTest::addColumn<LogBackend>("backend");
        if (withFiles)
            QTest::newRow("files") << LogBackend::Files;
        QTest::newRow("sqlite") << LogBackend::Sqlite;
        QTest::newRow("postgres") << LogBackend::Postgres;
    }

    // Once per test executable: the server, if it can start. Without one
    // the PostgreSQL rows skip, or fail under CLOOP_REQUIRE_POSTGRES=1.
    void startServer()
    {
        m_serverUp = m_server.start();
        if (!m_serverUp)
            qInfo(
                "no PostgreSQL server for the postgres rows: %s", qPrintable(m_server.lastError()));
    }

    // An empty place for `backend`; false (with the reason) when there is
    // none to be had.
    bool prepare(LogBackend backend, QString &why)
    {
        close();
        m_backend = backend;
        m_dir = std::make_unique<QTemporaryDir>();
        if (!m_dir->isValid()) {
            why = QStringLiteral("no temporary folder");
            return false;
        }
        if (backend == LogBackend::Postgres) {
            if (!m_serverUp) {
                why = QStringLiteral("no PostgreSQL server: %1").arg(m_server.lastError());
                return false;
            }
            m_database = m_server.createDatabase();
            if (m_database.isEmpty()) {
                why = m_server.lastError();
                return false;
            }
        }
        if (backend != LogBackend::Files) {
            auto db = connect();
            if (!db) {
                why = db.error().message;
                return false;
            }
            m_db = std::move(*db);
        }
        return true;
    }

    void close()
    {
        m_db.reset();
        m_dir.reset();
        m_database.clear();
    }

    LogBackend backend() const { return m_backend; }
    bool isDatabase() const { return m_backend != LogBackend::Files; }
    QString directory() const { return m_dir->path() + QLatin1String("/runs"); }
    // The hub's own connection; null for files.
    hub::Database *database() const { return m_db.get(); }

    // Another connection to the same database: another hub member, or
    // the same one after a restart. On the thread that will use it.
    Result<std::unique_ptr<hub::Database>> connect() const
    {
        if (m_backend == LogBackend::Postgres)
            return hub::Database::openPostgres(m_server.connectionString(m_database));
        return hub::Database::openSqlite(m_dir->path() + QLatin1String("/hub.db"));
    }

    // A store on the place; null (with the reason logged) when it does
    // not open.
    std::unique_ptr<hub::RunLogStore> open(
        hub::RunLogLimits limits, hub::RunLogStore::ActiveRuns activeRuns) const
    {
        return open(m_db.get(), limits, std::move(activeRuns));
    }
    std::unique_ptr<hub::RunLogStore> open(hub::Database *database, hub::RunLogLimits limits,
        hub::RunLogStore::ActiveRuns activeRuns) const
    {
        if (m_backend == LogBackend::Files) {
            auto files = hub::FileRunLogStore::open(directory(), limits, std::move(activeRuns));
            if (!files) {
                qWarning() << files.error().message;
                return nullptr;
            }
            return std::move(*files);
        }
        auto shared = hub::DatabaseRunLogStore::open(*database, limits, std::move(activeRuns));
        if (!shared) {
            qWarning() << shared.error().message;
            return nullptr;
        }
        return std::move(*shared);
    }

    // As if the hub's process ended and started again: the store goes,
    // and so does the database connection under it.
    std::unique_ptr<hub::RunLogStore> restart(std::unique_ptr<hub::RunLogStore> &store,
        hub::RunLogLimits limits, hub::RunLogStore::ActiveRuns activeRuns)
    {
        store.reset();
        if (isDatabase()) {
            m_db.reset();
            auto db = connect();
            if (!db) {
                qWarning() << db.error().message;
                return nullptr;
            }
            m_db = std::move(*db);
        }
        return open(limits, std::move(activeRuns));
    }

private:
    PostgresServer m_server;
    bool m_serverUp = false;
    LogBackend m_backend = LogBackend::Files;
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_database;
    std::unique_ptr<hub::Database> m_db;
};

// For init(): an empty place for this row's backend, or a skip saying
// why (a failure under CLOOP_REQUIRE_POSTGRES=1).
#define CLOOP_PREPARE_LOG_BACKEND(backends)                                                        \
    do {                                                                                           \
        QFETCH_GLOBAL(cloop::testing::LogBackend, backend);                                        \
        QString why;                                                                               \
        if (!(backends).prepare(backend, why)) {                                                   \
            if (backend != cloop::testing::LogBackend::Postgres                                    \
                || cloop::testing::PostgresServer::required())                                     \
                QFAIL(qPrintable(why));                                                            \
            QSKIP(qPrintable(why + QStringLiteral(" (CLOOP_REQUIRE_POSTGRES=1 fails instead)")));  \
        }                                                                                          \
    } while (false)

} // namespace cloop::testing

Q_DECLARE_METATYPE(cloop::testing::LogBackend)
