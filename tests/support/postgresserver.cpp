#include "support/postgresserver.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QVersionNumber>

#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

namespace cloop::testing {

namespace {

// initdb on a busy two-core machine can take a while; a pass never waits this long.
constexpr int kServerToolTimeoutMs = 120'000;

// A Unix socket's path must fit in sockaddr_un (108 bytes with its NUL).
constexpr qsizetype kMaxSocketPath = 107;

bool runningAsRoot()
{
    return ::geteuid() == 0;
}

QProcessEnvironment toolEnvironment()
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    // Messages in English, whatever the machine's locale, so failures read
    // the same everywhere; and no PG* variable of the caller's picks
    // another server.
    environment.insert(QStringLiteral("LC_ALL"), QStringLiteral("C"));
    for (const QString &name : environment.keys()) {
        if (name.startsWith(QLatin1String("PG")))
            environment.remove(name);
    }
    return environment;
}

// Like runProgram, but in `directory`: the postgres user may not enter the
// folder the test was started in.
CliResult runIn(const QString &directory, const QString &program, const QStringList &arguments,
    const QProcessEnvironment &environment)
{
    CliResult result;
    result.command
        = (QStringList { QFileInfo(program).fileName() } + arguments).join(QLatin1Char(' '));
    QProcess process;
    process.setWorkingDirectory(directory);
    process.setProcessEnvironment(environment);
    process.setStandardInputFile(QProcess::nullDevice());
    QElapsedTimer clock;
    clock.start();
    process.start(program, arguments);
    if (!process.waitForStarted(kLongWaitMs)) {
        result.err = process.errorString().toUtf8();
        return result;
    }
    result.started = true;
    if (!process.waitForFinished(kServerToolTimeoutMs)) {
        result.timedOut = true;
        process.kill();
        process.waitForFinished(kLongWaitMs);
    }
    result.elapsedMs = clock.elapsed();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    result.crashed = process.exitStatus() == QProcess::CrashExit;
    if (!result.timedOut && !result.crashed)
        result.exitCode = process.exitCode();
    return result;
}

QString findRunuser()
{
    QString found = QStandardPaths::findExecutable(QStringLiteral("runuser"));
    if (found.isEmpty())
        found = QStandardPaths::findExecutable(
            QStringLiteral("runuser"), { QStringLiteral("/usr/sbin"), QStringLiteral("/sbin") });
    return found;
}

} // namespace

PostgresServer::PostgresServer() = default;

PostgresServer::~PostgresServer()
{
    if (m_running && !stop())
        qWarning("%s", qPrintable(m_lastError));
}

QString PostgresServer::binDirectory()
{
    const QDir root(QStringLiteral("/usr/lib/postgresql"));
    QString best;
    QVersionNumber bestVersion;
    for (const QString &entry : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString bin = root.filePath(entry + QLatin1String("/bin"));
        if (!QFileInfo(bin + QLatin1String("/initdb")).isExecutable()
            || !QFileInfo(bin + QLatin1String("/pg_ctl")).isExecutable())
            continue;
        const QVersionNumber version = QVersionNumber::fromString(entry);
        if (best.isEmpty() || version > bestVersion) {
            best = bin;
            bestVersion = version;
        }
    }
    return best;
}

bool PostgresServer::required()
{
    return qEnvironmentVariable("CLOOP_REQUIRE_POSTGRES") == QLatin1String("1");
}

bool PostgresServer::fail(const QString &why)
{
    m_lastError = why;
    return false;
}

QString PostgresServer::socketDirectory() const
{
    return m_dir ? m_dir->path() : QString();
}

QString PostgresServer::connectionString(const QString &database) const
{
    return connectionString(database, m_password);
}

QString PostgresServer::connectionString(const QString &database, const QString &password) const
{
    return QStringLiteral("host=%1 dbname=%2 user=%3 password=%4 connect_timeout=10")
        .arg(socketDirectory(), database, user(), password);
}

CliResult PostgresServer::runServerTool(const QString &tool, const QStringList &arguments) const
{
    const QString program = QDir(m_binDir).filePath(tool);
    if (!runningAsRoot())
        return runIn(m_dir->path(), program, arguments, toolEnvironment());
    return runIn(m_dir->path(), findRunuser(),
        QStringList {
            QStringLiteral("-u"), QStringLiteral("postgres"), QStringLiteral("--"), program }
            + arguments,
        toolEnvironment());
}

CliResult PostgresServer::psql(const QString &database, const QString &sql) const
{
    QProcessEnvironment environment = toolEnvironment();
    environment.insert(QStringLiteral("PGPASSWORD"), m_password);
    return runIn(m_dir->path(), QDir(m_binDir).filePath(QStringLiteral("psql")),
        { QStringLiteral("-X"), QStringLiteral("-q"), QStringLiteral("-v"),
            QStringLiteral("ON_ERROR_STOP=1"), QStringLiteral("-h"), socketDirectory(),
            QStringLiteral("-U"), user(), QStringLiteral("-d"), database, QStringLiteral("-c"),
            sql },
        environment);
}

QString PostgresServer::logTail() const
{
    QFile log(QDir(m_dir->path()).filePath(QStringLiteral("server.log")));
    if (!log.open(QIODevice::ReadOnly))
        return QStringLiteral("(no server log)");
    const QByteArray text = log.readAll();
    return QString::fromUtf8(text.right(2000)).trimmed();
}

bool PostgresServer::makeCluster()
{
    uid_t uid = ::geteuid();
    gid_t gid = ::getegid();
    if (runningAsRoot()) {
        // PostgreSQL refuses to run as root.
        const passwd *account = ::getpwnam("postgres");
        if (!account)
            return fail(QStringLiteral("running as root and there is no postgres user to run the "
                                       "server as (the postgresql package creates it)"));
        if (findRunuser().isEmpty())
            return fail(QStringLiteral("running as root and runuser is missing"));
        uid = account->pw_uid;
        gid = account->pw_gid;
    }
    // Under root the postgres user must reach the folder: /tmp, not a
    // private TMPDIR of root's.
    const QString base = runningAsRoot() ? QStringLiteral("/tmp") : QDir::tempPath();
    m_dir = std::make_unique<QTemporaryDir>(base + QLatin1String("/cloop-pg-XXXXXX"));
    if (!m_dir->isValid())
        return fail(QStringLiteral("cannot make a temporary folder in %1: %2")
                        .arg(base, m_dir->errorString()));
    const QString socket = m_dir->filePath(QStringLiteral(".s.PGSQL.5432"));
    if (socket.toLocal8Bit().size() > kMaxSocketPath)
        return fail(QStringLiteral("the socket path %1 is too long for a Unix socket").arg(socket));
    if (::chown(QFile::encodeName(m_dir->path()).constData(), uid, gid) != 0)
        return fail(QStringLiteral("cannot hand %1 to the postgres user").arg(m_dir->path()));

    m_password = QString::number(QRandomGenerator::system()->generate64(), 16);
    const QString passwordFile = m_dir->filePath(QStringLiteral("password"));
    {
        QFile file(passwordFile);
        if (!file.open(QIODevice::WriteOnly)
            || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)
            || file.write(m_password.toUtf8() + '\n') <= 0)
            return fail(QStringLiteral("cannot write %1").arg(passwordFile));
    }
    if (::chown(QFile::encodeName(passwordFile).constData(), uid, gid) != 0)
        return fail(QStringLiteral("cannot hand %1 to the postgres user").arg(passwordFile));

    // Password authentication on the socket too, so a wrong one is refused;
    // no locale, so the test reads the same on every machine; no fsync: the
    // cluster is thrown away.
    const CliResult initdb = runServerTool(QStringLiteral("initdb"),
        { QStringLiteral("-D"), m_dir->filePath(QStringLiteral("data")), QStringLiteral("-U"),
            user(), QStringLiteral("--pwfile=") + passwordFile,
            QStringLiteral("--auth=scram-sha-256"), QStringLiteral("-E"), QStringLiteral("UTF8"),
            QStringLiteral("--no-locale"), QStringLiteral("--no-sync") });
    QFile::remove(passwordFile);
    if (initdb.exitCode != 0)
        return fail(QStringLiteral("initdb failed: %1").arg(initdb.describe()));
    m_initialized = true;
    return true;
}

bool PostgresServer::start()
{
    if (m_running)
        return true;
    if (m_binDir.isEmpty())
        m_binDir = binDirectory();
    if (m_binDir.isEmpty())
        return fail(
            QStringLiteral("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb "
                           "(scripts/install-deps installs the postgresql package)"));
    if (!m_initialized && !makeCluster())
        return false;
    // Unix socket only, in the test's own folder: no port is taken and
    // nothing outside this machine's file system can reach the server.
    const QString options
        = QStringLiteral("-k %1 -c listen_addresses='' -c fsync=off -c full_page_writes=off "
                         "-c max_connections=20 -c shared_buffers=16MB")
              .arg(m_dir->path());
    const CliResult started = runServerTool(QStringLiteral("pg_ctl"),
        { QStringLiteral("-D"), m_dir->filePath(QStringLiteral("data")), QStringLiteral("-l"),
            m_dir->filePath(QStringLiteral("server.log")), QStringLiteral("-o"), options,
            QStringLiteral("-w"), QStringLiteral("-t"), QStringLiteral("60"),
            QStringLiteral("start") });
    if (started.exitCode != 0)
        return fail(QStringLiteral("pg_ctl start failed: %1\n--- server log ---\n%2")
                        .arg(started.describe(), logTail()));
    m_running = true;
    return true;
}

bool PostgresServer::stop()
{
    if (!m_running)
        return true;
    const CliResult stopped = runServerTool(QStringLiteral("pg_ctl"),
        { QStringLiteral("-D"), m_dir->filePath(QStringLiteral("data")), QStringLiteral("-m"),
            QStringLiteral("fast"), QStringLiteral("-w"), QStringLiteral("-t"),
            QStringLiteral("60"), QStringLiteral("stop") });
    if (stopped.exitCode != 0)
        return fail(QStringLiteral("pg_ctl stop failed: %1\n--- server log ---\n%2")
                        .arg(stopped.describe(), logTail()));
    m_running = false;
    return true;
}

QString PostgresServer::createDatabase(const QString &owner)
{
    const QString name = QStringLiteral("cloop_%1").arg(++m_databases);
    if (!execute(QStringLiteral("postgres"),
            QStringLiteral("CREATE DATABASE %1 OWNER %2")
                .arg(name, owner.isEmpty() ? user() : owner)))
        return {};
    return name;
}

bool PostgresServer::execute(const QString &database, const QString &sql)
{
    if (!m_running)
        return fail(QStringLiteral("the server is not running"));
    const CliResult done = psql(database, sql);
    if (done.exitCode != 0)
        return fail(QStringLiteral("psql in %1 failed: %2").arg(database, done.describe()));
    return true;
}

} // namespace cloop::testing
