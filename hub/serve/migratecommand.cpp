#include "hub/serve/migratecommand.h"

#include "common/util/commandline.h"
#include "hub/hub.h"
#include "hub/serve/databaseoption.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"
#include "hub/storage/databasecopy.h"

#include <QFileInfo>
#include <QProcessEnvironment>

using namespace Qt::StringLiterals;

namespace cloop::hub {

int runMigrateCommand(const QString &name, const QStringList &arguments)
{
    util::CommandLine line(name,
        u"Move this hub's records (<data>/hub.db) into an empty PostgreSQL database, the one\n"
        "a cluster's members share, then compare both row by row. Stop the hub first: its\n"
        "database is held for writing while it is copied. Nothing is written to the target\n"
        "unless every row compares."_s);
    const QCommandLineOption data = dataDirOption();
    const QCommandLineOption to(u"to"_s,
        u"The PostgreSQL database: postgresql://USER@HOST[:PORT]/DBNAME[?sslmode=…] or libpq "
        "keywords; never with its password."_s,
        u"URL"_s);
    const QCommandLineOption passwordFile(u"database-password-file"_s,
        u"Its password, in a file of mode 0600 (default: $CLOOP_DATABASE_PASSWORD, else libpq's "
        "PGPASSWORD or ~/.pgpass)."_s,
        u"FILE"_s);
    line.addOptions({ data, to, passwordFile });
    if (auto done = line.parse(arguments))
        return *done;
    if (!line.isSet(to))
        return line.usageError(u"--to names the PostgreSQL database to move the records into"_s);
    auto keywords = postgresConnection(line.value(to), line.value(passwordFile),
        QProcessEnvironment::systemEnvironment(), u"--to"_s);
    if (!keywords)
        return line.usageError(keywords.error().message);
    const QString dataDir = dataDirOf(line, data);
    const QString sourcePath = Hub::databasePath(dataDir);
    if (!QFileInfo(sourcePath).isFile())
        return line.fail(u"%1 holds no hub (no %2)"_s.arg(dataDir, sourcePath));
    auto source = Database::openSqlite(sourcePath);
    if (!source)
        return line.fail(source.error().message);
    auto target = Database::openPostgres(*keywords);
    if (!target)
        return line.fail(target.error().message);
    auto report = DatabaseCopy::copy(**source, **target);
    if (!report)
        return line.fail(report.error().message);
    for (const DatabaseCopy::Table &table : report->tables)
        util::printLine(u"%1 %2"_s.arg(table.name, -24).arg(table.rows));
    util::printLine(u"moved %1 rows of %2 into %3, compared row by row. Start each member with "
                    "--database and this URL; the data folder's files (TLS identity, releases, "
                    "run logs) are not in the database."_s.arg(
                        QString::number(report->rows()), sourcePath, (*target)->location()));
    return util::kExitOk;
}

} // namespace cloop::hub
