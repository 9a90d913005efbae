#include "hub/serve/migratecommand.h"

#include "common/util/commandline.h"
#include "hub/hub.h"
#include "hub/serve/databaseoption.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"
#include "hub/storage/databasecopy.h"
#include "hub/storage/runlogstore.h"

#include <QFileInfo>
#include <QProcessEnvironment>

using namespace Qt::StringLiterals;

namespace cloop::hub {

int runMigrateCommand(const QString &name, const QStringList &arguments)
{
    util::CommandLine line(name,
        u"Move this hub's records (<data>/hub.db) and its run logs (<data>/runs) into an empty\n"
        "PostgreSQL database, the one a cluster's members share, then compare both row by row\n"
        "and record by record. Stop the hub first: its database is held for writing while it\n"
        "is copied. Nothing is written to the target unless everything compares."_s);
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
    auto report = DatabaseCopy::copy(**source, **target, runLogDirectory(dataDir));
    if (!report)
        return line.fail(report.error().message);
    for (const DatabaseCopy::Table &table : report->tables)
        util::printLine(u"%1 %2"_s.arg(table.name, -24).arg(table.rows));
    util::printLine(u"%1 %2 (%3 bytes of output)"_s.arg(u"run logs"_s, -24)
                        .arg(report->runLogs)
                        .arg(report->runLogBytes));
    util::printLine(u"moved %1 rows of %2 and the logs of %3 runs into %4, compared row by row "
                    "and record by record. Start each member with --database and this URL; the "
                    "data folder's other files (TLS identity, releases) are not in the "
                    "database."_s.arg(QString::number(report->rows()), sourcePath,
                        QString::number(report->runLogs), (*target)->location()));
    return util::kExitOk;
}

} // namespace cloop::hub
