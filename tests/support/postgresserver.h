#pragma once

// A throwaway PostgreSQL server for a test: a cluster of its own in a
// temporary folder, reached only through a Unix socket in that folder (it
// listens on no network address), with password authentication so that a
// wrong password can be tried. The server refuses to run as root; under root
// it runs as the `postgres` user Debian's package creates. Stopped and
// removed with the object.

#include "support/processutil.h"

#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace cloop::testing {

class PostgresServer
{
public:
    PostgresServer();
    ~PostgresServer();
    PostgresServer(const PostgresServer &) = delete;
    PostgresServer &operator=(const PostgresServer &) = delete;

    // The newest /usr/lib/postgresql/<version>/bin holding initdb, or empty.
    static QString binDirectory();
    // CLOOP_REQUIRE_POSTGRES=1 (CI): a server that cannot start fails the
    // test instead of skipping it.
    static bool required();

    // The first call makes the cluster (initdb); every call starts it
    // (pg_ctl start), so a stopped server comes back with its data.
    bool start();
    // `pg_ctl stop -m fast`: open connections are cut, as when the server
    // goes away under a client.
    bool stop();
    bool isRunning() const { return m_running; }
    // Why the last start, stop or createDatabase failed, with the end of
    // the server's log where it helps.
    QString lastError() const { return m_lastError; }

    // A new empty database owned by `owner` (user() by default); its name,
    // or empty.
    QString createDatabase(const QString &owner = {});
    // One SQL command through psql as user(), for what a test sets up
    // beside the hub (roles, settings).
    bool execute(const QString &database, const QString &sql);
    // libpq keywords reaching `database` as user() over the socket.
    QString connectionString(const QString &database) const;
    QString connectionString(const QString &database, const QString &password) const;

    QString socketDirectory() const;
    QString user() const { return QStringLiteral("cloop"); }
    QString password() const { return m_password; }

private:
    bool makeCluster();
    // A server program, as the postgres user when this process is root.
    CliResult runServerTool(const QString &tool, const QStringList &arguments) const;
    CliResult psql(const QString &database, const QString &sql) const;
    QString logTail() const;
    bool fail(const QString &why);

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_binDir;
    QString m_password;
    bool m_initialized = false;
    bool m_running = false;
    int m_databases = 0;
    QString m_lastError;
};

} // namespace cloop::testing
