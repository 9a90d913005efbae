#pragma once

#include "common/result.h"

#include <QCommandLineOption>
#include <QList>
#include <QProcessEnvironment>
#include <QString>

#include <memory>
#include <variant>

namespace cloop::util {
class CommandLine;
}

namespace cloop::hub {

class Database;

// `cloop hub serve --database`: a PostgreSQL server instead of the data
// folder's SQLite file. Given as a URL
// (postgresql://[user@]host[:port]/dbname[?key=value&…], a socket folder as
// ?host=/run/postgresql) or in libpq's keyword form; returned in the keyword
// form Qt's driver reads. A password in it is refused: every local user
// reads a command line. The password comes from `passwordFile` (mode 0600 or
// narrower), else $CLOOP_DATABASE_PASSWORD, else from libpq's own sources
// ($PGPASSWORD, ~/.pgpass, passfile=). Errors name `option` as the one
// that was given.
Result<QString> postgresConnection(const QString &given, const QString &passwordFile,
    const QProcessEnvironment &environment, const QString &option = QStringLiteral("--database"));

inline constexpr qsizetype kMaxDatabasePasswordBytes = 4096;

// --database and --database-password-file, for every hub command that opens
// the records: serve, and the release commands run beside it.
class DatabaseOptions
{
public:
    DatabaseOptions();
    QList<QCommandLineOption> all() const { return { m_database, m_passwordFile }; }
    // The libpq keywords they name; empty: the data folder's SQLite file.
    Result<QString> postgres(const util::CommandLine &commandLine) const;
    // The records they name, or those of the hub in `dataDir`.
    Result<std::unique_ptr<Database>> open(
        const util::CommandLine &commandLine, const QString &dataDir) const;

private:
    QCommandLineOption m_database;
    QCommandLineOption m_passwordFile;
};

// A command that reads the records beside the hub (`release list`,
// `members`): --data, the database options and `more` added, the arguments
// parsed and the records opened; or the exit code to end with at once
// (help, a usage error, records that cannot be opened, said on stderr).
std::variant<int, std::unique_ptr<Database>> openRecordsFromCommandLine(
    util::CommandLine &line, const QStringList &arguments, const QList<QCommandLineOption> &more);

} // namespace cloop::hub
