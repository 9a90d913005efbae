#include "hub/serve/databaseoption.h"

#include "common/util/atomicfile.h"
#include "common/util/commandline.h"
#include "hub/hub.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>
#include <QUrlQuery>

namespace cloop::hub {

using namespace Qt::StringLiterals;

namespace {

using Keywords = QList<std::pair<QString, QString>>;

Error invalid(const QString &option, const QString &why)
{
    // What was given is never quoted back: it may hold a password.
    return Error::make(u"invalid_option"_s, u"%1 %2"_s.arg(option, why));
}

Error passwordOnTheCommandLine(const QString &option)
{
    return invalid(option,
        u"holds a password, which every local user could read on the command line: "
        "put it in a file of mode 0600 (--database-password-file FILE) or in "
        "$CLOOP_DATABASE_PASSWORD"_s);
}

Result<Keywords> keywordsOfUrl(const QString &given, const QString &option)
{
    const QUrl url(given, QUrl::StrictMode);
    if (!url.isValid())
        // QUrl's own words quote the URL, password and all.
        return invalid(option, u"is not a URL of the form postgresql://USER@HOST[:PORT]/DBNAME"_s);
    if (!url.password().isEmpty())
        return passwordOnTheCommandLine(option);
    if (!url.fragment().isEmpty())
        return invalid(option, u"has a fragment (#…), which names nothing in a database URL"_s);
    Keywords keywords;
    if (!url.host().isEmpty())
        keywords.append({ u"host"_s, url.host(QUrl::FullyDecoded) });
    if (url.port() != -1)
        keywords.append({ u"port"_s, QString::number(url.port()) });
    if (!url.userName().isEmpty())
        keywords.append({ u"user"_s, url.userName(QUrl::FullyDecoded) });
    const QString database = url.path(QUrl::FullyDecoded).mid(1);
    if (database.contains(u'/'))
        return invalid(option, u"names a database with a \"/\" in it"_s);
    if (!database.isEmpty())
        keywords.append({ u"dbname"_s, database });
    static const QRegularExpression keyword(u"\\A[a-z_]{1,64}\\z"_s);
    for (const auto &[key, value] : QUrlQuery(url).queryItems(QUrl::FullyDecoded)) {
        if (!keyword.match(key).hasMatch())
            return invalid(option, u"has a parameter that is not a libpq keyword"_s);
        keywords.append({ key, value });
    }
    return keywords;
}

Result<QString> readPasswordFile(const QString &path)
{
    const int mode = util::fileMode(path);
    if (mode < 0)
        return Error::make(
            u"invalid_option"_s, u"--database-password-file %1 cannot be read"_s.arg(path));
    if ((mode & 077) != 0)
        return Error::make(u"invalid_option"_s,
            u"--database-password-file %1 may be read by others (mode %2): chmod 600 it"_s.arg(path)
                .arg(mode & 0777, 3, 8, QLatin1Char('0')));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(u"invalid_option"_s,
            u"--database-password-file %1: %2"_s.arg(path, file.errorString()));
    QByteArray bytes = file.read(kMaxDatabasePasswordBytes + 1);
    if (bytes.size() > kMaxDatabasePasswordBytes)
        return Error::make(u"invalid_option"_s,
            u"--database-password-file %1 is longer than a password"_s.arg(path));
    while (bytes.endsWith('\n') || bytes.endsWith('\r'))
        bytes.chop(1);
    if (bytes.isEmpty() || bytes.contains('\n'))
        return Error::make(u"invalid_option"_s,
            u"--database-password-file %1 holds no password, or more than one line"_s.arg(path));
    return QString::fromUtf8(bytes);
}

} // namespace

Result<QString> postgresConnection(const QString &given, const QString &passwordFile,
    const QProcessEnvironment &environment, const QString &option)
{
    if (given.trimmed().isEmpty())
        return invalid(option, u"is empty"_s);
    const bool isUrl = given.startsWith(u"postgresql://"_s) || given.startsWith(u"postgres://"_s);
    Result<Keywords> keywords = isUrl ? keywordsOfUrl(given, option) : parsePostgresKeywords(given);
    if (!keywords)
        return isUrl ? keywords.error()
                     : invalid(option,
                         u"is neither a postgresql:// URL nor libpq keywords: %1"_s.arg(
                             keywords.error().message));
    for (const auto &[key, value] : std::as_const(*keywords)) {
        if (key == u"password"_s)
            return passwordOnTheCommandLine(option);
    }
    if (!passwordFile.isEmpty()) {
        auto password = readPasswordFile(passwordFile);
        if (!password)
            return password.error();
        keywords->append({ u"password"_s, *password });
    } else if (const QString password = environment.value(u"CLOOP_DATABASE_PASSWORD"_s);
               !password.isEmpty()) {
        keywords->append({ u"password"_s, password });
    }
    QStringList words;
    for (const auto &[key, value] : std::as_const(*keywords))
        words.append(key + u'=' + quotePostgresKeyword(value));
    return words.join(u' ');
}

DatabaseOptions::DatabaseOptions()
    : m_database(u"database"_s,
        u"A PostgreSQL database instead of <data>/hub.db: "
        "postgresql://USER@HOST[:PORT]/DBNAME[?sslmode=…] or libpq keywords; never with its "
        "password."_s,
        u"URL"_s)
    , m_passwordFile(u"database-password-file"_s,
          u"The database's password, in a file of mode 0600 (default: $CLOOP_DATABASE_PASSWORD, "
          "else libpq's PGPASSWORD or ~/.pgpass)."_s,
          u"FILE"_s)
{ }

Result<QString> DatabaseOptions::postgres(const util::CommandLine &commandLine) const
{
    if (commandLine.isSet(m_passwordFile) && !commandLine.isSet(m_database))
        return Error::make(u"invalid_option"_s, u"--database-password-file needs --database"_s);
    if (!commandLine.isSet(m_database))
        return QString();
    return postgresConnection(commandLine.value(m_database), commandLine.value(m_passwordFile),
        QProcessEnvironment::systemEnvironment());
}

Result<std::unique_ptr<Database>> DatabaseOptions::open(
    const util::CommandLine &commandLine, const QString &dataDir) const
{
    auto keywords = postgres(commandLine);
    if (!keywords)
        return keywords.error();
    if (!keywords->isEmpty())
        return Database::openPostgres(*keywords);
    // A data folder without the file holds no hub: nothing is made there.
    if (!QFileInfo(Hub::databasePath(dataDir)).isFile())
        return Error::make(u"no_hub"_s, u"%1 holds no hub"_s.arg(dataDir));
    return Database::openSqlite(Hub::databasePath(dataDir));
}

std::variant<int, std::unique_ptr<Database>> openRecordsFromCommandLine(
    util::CommandLine &line, const QStringList &arguments, const QList<QCommandLineOption> &more)
{
    const QCommandLineOption data = dataDirOption();
    const DatabaseOptions database;
    line.addOptions(QList<QCommandLineOption> { data } + more);
    line.addOptions(database.all());
    if (auto done = line.parse(arguments, false))
        return *done;
    auto records = database.open(line, dataDirOf(line, data));
    if (!records)
        return line.fail(records.error().message);
    return std::move(*records);
}

} // namespace cloop::hub
