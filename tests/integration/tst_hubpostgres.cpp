// Integration: `cloop hub serve --database` on a real PostgreSQL server the
// test starts itself (a Unix socket in a temporary folder, password
// authentication). The hub keeps its records there, not in the data
// folder's SQLite file, and never takes the password from its command line.
// Skipped where PostgreSQL is not installed, unless CLOOP_REQUIRE_POSTGRES=1.

#include "common/protocol/logrecord.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"
#include "support/pinnedhttp.h"
#include "support/postgresserver.h"
#include "support/processutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <csignal>

using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestHubPostgres final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void theHubKeepsItsRecordsInPostgres();
    void aPasswordOnTheCommandLineIsRefused();
    void aWrongPasswordOrAMissingServerSaysSo();
    void aSingleHubMovesIntoPostgresRowByRow();
    void migrateRefusesATargetThatHoldsRecords();
    void aCopyThatDoesNotCompareLeavesTheTargetEmpty();
    void migrateSaysWhatIsMissing();
    void membersShareTheRecordsAndADeadOneIsSeen();
    void everyMemberServesARunsWholeLog();
    void healthSaysWhenTheDatabaseIsUnreachable();

private:
    // `cloop hub serve --data DIR ARGS…` that is expected to stop by itself.
    CliResult serveOnce(const QStringList &arguments);
    QString passwordFile(const QString &password);
    // The connection without its password: what an operator gives.
    QString connectionOf(const QString &database) const;
    // `cloop hub migrate --data DIR --to DATABASE` with the server's password.
    CliResult migrate(const QString &dataDir, const QString &database);
    // `cloop hub members --json` over the database, keyed by member name.
    QMap<QString, QJsonObject> membersOf(const QString &database, const QString &dataDir);
    // A hub on SQLite with a record of every kind; stopped.
    bool fillSingleHub(HubProcess &hub);
    // Output of its two runs in its data folder, as its run log store
    // keeps it: run 1's trimmed at its start, run 2's with a gap the agent
    // left.
    bool writeRunLogs(const HubProcess &hub);

    PostgresServer m_server;
    QTemporaryDir m_dir;
};

void TestHubPostgres::initTestCase()
{
    if (!m_server.start()) {
        const QString why = u"no PostgreSQL server for this test: %1"_s.arg(m_server.lastError());
        if (PostgresServer::required())
            QFAIL(qPrintable(why + u"\n(CLOOP_REQUIRE_POSTGRES=1: a failure here)"_s));
        QSKIP(qPrintable(why + u" (CLOOP_REQUIRE_POSTGRES=1 fails instead)"_s));
    }
}

QString TestHubPostgres::connectionOf(const QString &database) const
{
    return u"host=%1 dbname=%2 user=%3 connect_timeout=10"_s.arg(
        m_server.socketDirectory(), database, m_server.user());
}

QString TestHubPostgres::passwordFile(const QString &password)
{
    static int files = 0;
    const QString path = m_dir.filePath(u"password-%1"_s.arg(++files));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(password.toUtf8() + '\n') <= 0)
        return {};
    file.close();
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return path;
}

CliResult TestHubPostgres::serveOnce(const QStringList &arguments)
{
    QTemporaryDir data;
    const CliResult tls = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"tls-init"_s, u"--data"_s, data.path() }, childEnvironment(data.path()));
    if (tls.exitCode != 0)
        return tls;
    return runProgram(binaryPath(u"cloop"_s),
        QStringList { u"hub"_s, u"serve"_s, u"--data"_s, data.path(), u"--listen"_s,
            u"127.0.0.1:0"_s, u"--metrics-listen"_s, QString(), u"--peer-listen"_s,
            u"127.0.0.1:0"_s }
            + arguments,
        childEnvironment(data.path()), 60'000);
}

void TestHubPostgres::theHubKeepsItsRecordsInPostgres()
{
    // Given a database of its own and its password in a private file,
    const QString database = m_server.createDatabase();
    QVERIFY2(!database.isEmpty(), qPrintable(m_server.lastError()));
    const QString password = passwordFile(m_server.password());
    QVERIFY(!password.isEmpty());
    HubProcess hub;
    hub.setServeArguments(
        { u"--database"_s, connectionOf(database), u"--database-password-file"_s, password });
    // when the hub serves from it and an administrator adds a project,
    QVERIFY2(hub.start(), qPrintable(hub.transcript()));
    CLOOP_COMPARE_EXIT(hub.cli({ u"project"_s, u"add"_s, u"/srv/projects/pg"_s }), 0);
    // then the project is a row of PostgreSQL's, the data folder has no
    // SQLite file, and the records outlive the hub's restart.
    QVERIFY(m_server.execute(database,
        u"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM projects WHERE path = '/srv/projects/pg') "
        "THEN RAISE EXCEPTION 'the project is not in PostgreSQL'; END IF; END $$"_s));
    QVERIFY(!QFileInfo::exists(hub.databasePath()));
    QCOMPARE(hub.stop(), 0);
    QVERIFY2(hub.start(), qPrintable(hub.transcript()));
    const QJsonArray projects = hub.cliItems({ u"project"_s, u"list"_s, u"--json"_s });
    QCOMPARE(projects.size(), 1);
    QCOMPARE(projects.at(0).toObject().value("path"_L1).toString(), u"/srv/projects/pg"_s);
    // The password was nowhere on the hub's command line.
    QVERIFY(!hub.log().contains(m_server.password()));
    QVERIFY2(
        hub.log().contains(u"records in PostgreSQL (host=%1"_s.arg(m_server.socketDirectory())),
        qPrintable(hub.log()));
    // The release commands beside the hub read the same records.
    const QStringList releaseList { u"hub"_s, u"release"_s, u"list"_s, u"--json"_s, u"--data"_s,
        hub.dataDir() };
    const CliResult listed = runProgram(binaryPath(u"cloop"_s),
        releaseList
            + QStringList { u"--database"_s, connectionOf(database), u"--database-password-file"_s,
                password },
        childEnvironment(hub.homeDir()));
    CLOOP_COMPARE_EXIT(listed, 0);
    const QJsonObject offered = QJsonDocument::fromJson(listed.stdoutText().toUtf8()).object();
    QVERIFY2(offered.contains("items"_L1), qPrintable(listed.describe()));
    QCOMPARE(offered.value("items"_L1).toArray().size(), 0);
    const CliResult sqlite
        = runProgram(binaryPath(u"cloop"_s), releaseList, childEnvironment(hub.homeDir()));
    CLOOP_COMPARE_EXIT(sqlite, 1);
    QVERIFY2(sqlite.stderrText().contains(u"holds no hub"_s), qPrintable(sqlite.describe()));
}

void TestHubPostgres::aPasswordOnTheCommandLineIsRefused()
{
    const QString database = m_server.createDatabase();
    for (const QString &given :
        { u"postgresql://%1:%2@localhost/%3"_s.arg(m_server.user(), m_server.password(), database),
            m_server.connectionString(database) }) {
        const CliResult refused = serveOnce({ u"--database"_s, given });
        CLOOP_COMPARE_EXIT(refused, 2);
        QVERIFY2(refused.stderrText().contains(u"--database-password-file"_s),
            qPrintable(refused.describe()));
        QVERIFY2(
            !refused.stderrText().contains(m_server.password()), qPrintable(refused.describe()));
    }
    // Nor is a password file others may read taken.
    const QString loose = passwordFile(m_server.password());
    QVERIFY(QFile::setPermissions(
        loose, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther));
    const CliResult readable = serveOnce(
        { u"--database"_s, connectionOf(database), u"--database-password-file"_s, loose });
    CLOOP_COMPARE_EXIT(readable, 2);
    QVERIFY2(readable.stderrText().contains(u"chmod 600"_s), qPrintable(readable.describe()));
}

void TestHubPostgres::aWrongPasswordOrAMissingServerSaysSo()
{
    const QString database = m_server.createDatabase();
    const CliResult wrong = serveOnce({ u"--database"_s, connectionOf(database),
        u"--database-password-file"_s, passwordFile(u"not-the-password"_s) });
    CLOOP_COMPARE_EXIT(wrong, 1);
    QVERIFY2(wrong.stderrText().contains(u"cannot connect to PostgreSQL"_s),
        qPrintable(wrong.describe()));
    QVERIFY2(!wrong.stderrText().contains(u"not-the-password"_s), qPrintable(wrong.describe()));
    const CliResult missing = serveOnce({ u"--database"_s,
        u"host=%1 dbname=none user=cloop connect_timeout=5"_s.arg(m_dir.filePath(u"nowhere"_s)) });
    CLOOP_COMPARE_EXIT(missing, 1);
    QVERIFY2(missing.stderrText().contains(u"cannot connect to PostgreSQL"_s),
        qPrintable(missing.describe()));
}

CliResult TestHubPostgres::migrate(const QString &dataDir, const QString &database)
{
    return runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"migrate"_s, u"--data"_s, dataDir, u"--to"_s, connectionOf(database),
            u"--database-password-file"_s, passwordFile(m_server.password()) },
        childEnvironment(dataDir));
}

bool TestHubPostgres::fillSingleHub(HubProcess &hub)
{
    if (!hub.start())
        return false;
    const QString project = u"/srv/projects/lab"_s;
    if (hub.cli({ u"project"_s, u"add"_s, project }).exitCode != 0
        || hub.tokenOfNewUser(u"maria"_s, project, u"maintainer"_s).isEmpty())
        return false;
    const Enrollment forwarder = hub.enroll(u"lab"_s, { u"--interface"_s, u"lab0"_s });
    if (!forwarder.ok || hub.bind(forwarder.id, project) <= 0)
        return false;
    if (hub.cli({ u"executor"_s, u"enroll"_s, u"--name"_s, u"bench"_s }).exitCode != 0)
        return false;
    // Two runs: one waits for an agent, one was cancelled.
    for (int i = 0; i < 2; ++i) {
        if (hub.cli({ u"run"_s, u"--project"_s, project, u"--no-wait"_s, u"--"_s, u"true"_s })
                .exitCode
            != 0)
            return false;
    }
    return hub.cli({ u"run"_s, u"cancel"_s, u"2"_s }).exitCode == 0 && hub.stop() == 0;
}

bool TestHubPostgres::writeRunLogs(const HubProcess &hub)
{
    using cloop::protocol::LogRecord;
    using cloop::protocol::LogRecordKind;
    const QString folder = hub.dataDir() + u"/runs"_s;
    if (!QDir().mkpath(folder))
        return false;
    const QList<std::pair<QString, QList<LogRecord>>> segments {
        { u"1.4096.log"_s,
            { LogRecord::data(LogRecordKind::Stdout, 4096, "kept after the trim\n"),
                LogRecord::data(LogRecordKind::Stderr, 4116, "the end\n") } },
        { u"2.0.log"_s,
            { LogRecord::data(LogRecordKind::Stdout, 0, "before the gap\n"),
                LogRecord::gap(15, 1000),
                LogRecord::data(LogRecordKind::Stdout, 1015, "after the gap\n") } },
    };
    for (const auto &[name, records] : segments) {
        QFile file(folder + u'/' + name);
        const QByteArray bytes = cloop::protocol::encodeLogRecords(records);
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            return false;
    }
    return true;
}

void TestHubPostgres::aSingleHubMovesIntoPostgresRowByRow()
{
    // Given a single hub on SQLite with a record of every kind and its
    // runs' logs, and what its CLI shows of them,
    HubProcess hub;
    QVERIFY2(fillSingleHub(hub), qPrintable(hub.transcript()));
    QVERIFY(writeRunLogs(hub));
    QVERIFY(hub.start());
    const QString maria = hub.tokenOfNewUser(u"maria2"_s, u"/srv/projects/lab"_s, u"maintainer"_s);
    QVERIFY(!maria.isEmpty());
    const QList<QStringList> views { { u"audit"_s, u"--json"_s },
        { u"forward"_s, u"list"_s, u"--json"_s }, { u"executor"_s, u"list"_s, u"--json"_s },
        { u"project"_s, u"list"_s, u"--json"_s }, { u"run"_s, u"list"_s, u"--json"_s },
        { u"run"_s, u"show"_s, u"2"_s, u"--json"_s } };
    QList<QJsonValue> before;
    for (const QStringList &view : views)
        before.append(hub.cliJson(view));
    const QList<QStringList> logs { { u"run"_s, u"logs"_s, u"1"_s },
        { u"run"_s, u"logs"_s, u"2"_s } };
    QList<CliResult> logsBefore;
    for (const QStringList &log : logs) {
        logsBefore.append(hub.cli(log));
        CLOOP_COMPARE_EXIT(logsBefore.last(), 0);
    }
    QVERIFY2(logsBefore.first().stdoutText().contains(u"kept after the trim"_s),
        qPrintable(logsBefore.first().describe()));
    QVERIFY2(logsBefore.at(1).stderrText().contains(u"1000 bytes dropped"_s),
        qPrintable(logsBefore.at(1).describe()));
    QCOMPARE(hub.stop(), 0);
    // when it moves into an empty PostgreSQL database,
    const QString database = m_server.createDatabase();
    const CliResult moved = migrate(hub.dataDir(), database);
    CLOOP_COMPARE_EXIT(moved, 0);
    QVERIFY2(moved.stdoutText().contains(u"compared row by row"_s), qPrintable(moved.describe()));
    static const QRegularExpression runs(u"^runs +2$"_s, QRegularExpression::MultilineOption);
    QVERIFY2(runs.match(moved.stdoutText()).hasMatch(), qPrintable(moved.describe()));
    static const QRegularExpression runLogs(
        u"^run logs +2 \\(57 bytes of output\\)$"_s, QRegularExpression::MultilineOption);
    QVERIFY2(runLogs.match(moved.stdoutText()).hasMatch(), qPrintable(moved.describe()));
    QVERIFY(!moved.stdoutText().contains(m_server.password()));
    // then a hub serving from it, without the SQLite file or the log
    // files, shows the same, its runs' output included,
    QVERIFY(QFile::rename(hub.databasePath(), hub.databasePath() + u".moved"_s));
    QVERIFY(QDir(hub.dataDir()).rename(u"runs"_s, u"runs.moved"_s));
    hub.setServeArguments({ u"--database"_s, connectionOf(database), u"--database-password-file"_s,
        passwordFile(m_server.password()) });
    QVERIFY2(hub.start(), qPrintable(hub.transcript()));
    for (qsizetype i = 0; i < views.size(); ++i)
        QVERIFY2(hub.cliJson(views.at(i)) == before.at(i), qPrintable(views.at(i).join(u' ')));
    for (qsizetype i = 0; i < logs.size(); ++i) {
        const CliResult after = hub.cli(logs.at(i));
        CLOOP_COMPARE_EXIT(after, 0);
        QCOMPARE(after.stdoutText(), logsBefore.at(i).stdoutText());
        QCOMPARE(after.stderrText(), logsBefore.at(i).stderrText());
    }
    // the single hub is the cluster's first member, on its third start,
    const QMap<QString, QJsonObject> members = membersOf(database, hub.dataDir());
    QCOMPARE(members.size(), 1);
    QCOMPARE(members.first().value("state"_L1).toString(), u"alive"_s);
    QCOMPARE(members.first().value("generation"_L1).toInteger(), 3);
    // the tokens people hold still work,
    CLOOP_COMPARE_EXIT(hub.cliAs(maria, { u"project"_s, u"list"_s }), 0);
    // and new records take ids after every one the single hub gave.
    CLOOP_COMPARE_EXIT(hub.cli({ u"project"_s, u"add"_s, u"/srv/projects/next"_s }), 0);
    const CliResult third = hub.cli(
        { u"run"_s, u"--project"_s, u"/srv/projects/next"_s, u"--no-wait"_s, u"--"_s, u"true"_s });
    CLOOP_COMPARE_EXIT(third, 0);
    QCOMPARE(third.stdoutText().trimmed(), u"3"_s);
    const QJsonArray projects = hub.cliItems({ u"project"_s, u"list"_s, u"--json"_s });
    QCOMPARE(projects.size(), 2);
    QCOMPARE(projects.at(1).toObject().value("id"_L1).toInteger(), 2);
}

void TestHubPostgres::migrateRefusesATargetThatHoldsRecords()
{
    HubProcess hub;
    QVERIFY2(fillSingleHub(hub), qPrintable(hub.transcript()));
    const QString database = m_server.createDatabase();
    CLOOP_COMPARE_EXIT(migrate(hub.dataDir(), database), 0);
    // A second copy, or one into a cluster already in use, adds nothing.
    const CliResult again = migrate(hub.dataDir(), database);
    CLOOP_COMPARE_EXIT(again, 1);
    QVERIFY2(again.stderrText().contains(u"already holds records"_s), qPrintable(again.describe()));
    QVERIFY(m_server.execute(database,
        u"DO $$ BEGIN IF (SELECT COUNT(*) FROM runs) <> 2 OR (SELECT COUNT(*) FROM projects) <> 1 "
        "THEN RAISE EXCEPTION 'the second copy changed the target'; END IF; END $$"_s));
}

void TestHubPostgres::aCopyThatDoesNotCompareLeavesTheTargetEmpty()
{
    HubProcess hub;
    QVERIFY2(fillSingleHub(hub), qPrintable(hub.transcript()));
    // A target that changes what it is given: a trigger rewrites a path.
    const QString database = m_server.createDatabase();
    const CliResult schema = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"release"_s, u"list"_s, u"--data"_s, hub.dataDir(), u"--database"_s,
            connectionOf(database), u"--database-password-file"_s,
            passwordFile(m_server.password()) },
        childEnvironment(hub.homeDir()));
    CLOOP_COMPARE_EXIT(schema, 0);
    QVERIFY(m_server.execute(database,
        u"CREATE FUNCTION rewrite() RETURNS trigger AS $$ BEGIN NEW.path := NEW.path || '-x'; "
        "RETURN NEW; END $$ LANGUAGE plpgsql"_s));
    QVERIFY(m_server.execute(database,
        u"CREATE TRIGGER rewrite BEFORE INSERT ON projects FOR EACH ROW EXECUTE FUNCTION "
        "rewrite()"_s));
    const CliResult refused = migrate(hub.dataDir(), database);
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"projects row id 1 differs in the target: path"_s),
        qPrintable(refused.describe()));
    // Nothing of the copy stays: every table is as empty as before.
    QVERIFY(m_server.execute(database,
        u"DO $$ BEGIN IF EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM audit_log) OR "
        "EXISTS (SELECT 1 FROM projects) OR EXISTS (SELECT 1 FROM runs) THEN RAISE EXCEPTION "
        "'a failed copy left rows'; END IF; END $$"_s));
    // The single hub's own file is whole.
    QVERIFY(hub.start());
    const QJsonObject cancelled
        = hub.cliJson({ u"run"_s, u"show"_s, u"2"_s, u"--json"_s }).toObject();
    QCOMPARE(cancelled.value("state"_L1).toString(), u"cancelled"_s);
    QCOMPARE(hub.cliItems({ u"project"_s, u"list"_s, u"--json"_s }).size(), 1);
}

void TestHubPostgres::migrateSaysWhatIsMissing()
{
    QTemporaryDir empty;
    const QString database = m_server.createDatabase();
    const CliResult noHub = migrate(empty.path(), database);
    CLOOP_COMPARE_EXIT(noHub, 1);
    QVERIFY2(noHub.stderrText().contains(u"holds no hub"_s), qPrintable(noHub.describe()));
    const CliResult noTarget = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"migrate"_s, u"--data"_s, empty.path() }, childEnvironment(empty.path()));
    CLOOP_COMPARE_EXIT(noTarget, 2);
    QVERIFY2(noTarget.stderrText().contains(u"--to"_s), qPrintable(noTarget.describe()));
    const CliResult withPassword = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"migrate"_s, u"--data"_s, empty.path(), u"--to"_s,
            m_server.connectionString(database) },
        childEnvironment(empty.path()));
    CLOOP_COMPARE_EXIT(withPassword, 2);
    QVERIFY(!withPassword.stderrText().contains(m_server.password()));
}

QMap<QString, QJsonObject> TestHubPostgres::membersOf(
    const QString &database, const QString &dataDir)
{
    const CliResult listed = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"members"_s, u"--json"_s, u"--data"_s, dataDir, u"--database"_s,
            connectionOf(database), u"--database-password-file"_s,
            passwordFile(m_server.password()) },
        childEnvironment(dataDir));
    QMap<QString, QJsonObject> members;
    const QJsonArray items
        = QJsonDocument::fromJson(listed.out).object().value("items"_L1).toArray();
    for (const QJsonValue &item : items)
        members.insert(item.toObject().value("name"_L1).toString(), item.toObject());
    return members;
}

void TestHubPostgres::membersShareTheRecordsAndADeadOneIsSeen()
{
    // Given two hubs, each its own data folder and key, on one database,
    const QString database = m_server.createDatabase();
    const QStringList shared { u"--database"_s, connectionOf(database),
        u"--database-password-file"_s, passwordFile(m_server.password()), u"--member-lease"_s,
        u"2s"_s };
    HubProcess a;
    HubProcess b;
    a.setServeArguments(shared);
    b.setServeArguments(shared);
    QVERIFY2(a.start(), qPrintable(a.transcript()));
    QVERIFY2(b.start(), qPrintable(b.transcript()));
    // then each is a live member, with where daemons reach it and its pin,
    QMap<QString, QJsonObject> members = membersOf(database, a.dataDir());
    QCOMPARE(members.size(), 2);
    const QString nameA = QUrl(a.localAccess().value("url"_L1).toString()).authority();
    const QString nameB = QUrl(b.localAccess().value("url"_L1).toString()).authority();
    QVERIFY2(members.contains(nameA) && members.contains(nameB),
        qPrintable(QStringList(members.keys()).join(u' ')));
    for (const QString &name : { nameA, nameB }) {
        QCOMPARE(members.value(name).value("state"_L1).toString(), u"alive"_s);
        QCOMPARE(members.value(name).value("generation"_L1).toInteger(), 1);
        QVERIFY(members.value(name).value("key_pin"_L1).toString().startsWith(u"sha256:"_s));
    }
    QVERIFY(members.value(nameA).value("key_pin"_L1) != members.value(nameB).value("key_pin"_L1));
    // the records are one: a project added through A is B's too,
    CLOOP_COMPARE_EXIT(a.cli({ u"project"_s, u"add"_s, u"/srv/projects/shared"_s }), 0);
    QCOMPARE(b.cliItems({ u"project"_s, u"list"_s, u"--json"_s }).size(), 1);
    // a forwarder connected to A is listed by B as connected via A,
    const Enrollment enrolled = a.enroll(u"lab"_s);
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    QTemporaryDir forwarderHome;
    ForwarderProcess forwarder({ u"--bundle"_s, enrolled.bundle }, forwarderHome.path());
    QVERIFY(forwarder.start());
    QVERIFY2(waitUntil([&] { return a.forwarderConnected(enrolled.id); }),
        qPrintable(forwarder.describe()));
    const auto seenFromB = [&] {
        for (const QJsonValue &item : b.cliItems({ u"forward"_s, u"list"_s, u"--json"_s }))
            if (item.toObject().value("id"_L1).toInteger() == enrolled.id)
                return item.toObject();
        return QJsonObject();
    };
    QVERIFY2(
        waitUntil([&] { return seenFromB().value("connected"_L1).toBool(); }), qPrintable(b.log()));
    QCOMPARE(seenFromB().value("hub_member"_L1).toString(), nameA);
    QCOMPARE(seenFromB().value("state"_L1).toString(), u"connected"_s);
    // and the members' list says who holds what.
    members = membersOf(database, b.dataDir());
    QCOMPARE(members.value(nameA).value("holds"_L1).toObject().value("forwarders"_L1).toInt(), 1);
    QCOMPARE(members.value(nameB).value("holds"_L1).toObject().value("forwarders"_L1).toInt(), 0);
    // (the forwarder hears of B from A within a renewal of A's view, or
    // its enrollment bundle named B already when A knew B by then)
    const QString credentialFile = forwarderHome.filePath(u".cloop/forwarder.json"_s);
    QVERIFY2(waitUntil([&] {
        const QString said = forwarder.stderrText();
        if (said.contains(u"the hub is now dialled at"_s) && said.contains(nameB))
            return true;
        QFile credential(credentialFile);
        return credential.open(QIODevice::ReadOnly)
            && QString::fromUtf8(credential.readAll()).contains(u"wss://"_s + nameB);
    }),
        qPrintable(forwarder.describe()));
    // a member killed without a word is dead once its lease lapses, while
    // the other stays alive by renewing, and what the dead one held is
    // offline (the forwarder, held still, cannot move to B meanwhile),
    QCOMPARE(::kill(pid_t(forwarder.processId()), SIGSTOP), 0);
    a.kill();
    QVERIFY2(
        waitUntil(
            [&] {
                return membersOf(database, b.dataDir()).value(nameA).value("state"_L1).toString()
                    == u"dead"_s;
            },
            15'000),
        qPrintable(b.log()));
    QVERIFY2(waitUntil([&] { return !seenFromB().value("connected"_L1).toBool(); }),
        QJsonDocument(seenFromB()).toJson().constData());
    QVERIFY(seenFromB().value("hub_member"_L1).isNull());
    QCOMPARE(membersOf(database, b.dataDir())
                 .value(nameA)
                 .value("holds"_L1)
                 .toObject()
                 .value("forwarders"_L1)
                 .toInt(),
        0);
    QCOMPARE(
        membersOf(database, b.dataDir()).value(nameB).value("state"_L1).toString(), u"alive"_s);
    // and once it may go on, the forwarder (whose bundle named both members)
    // connects to B;
    QCOMPARE(::kill(pid_t(forwarder.processId()), SIGCONT), 0);
    QVERIFY2(waitUntil([&] { return seenFromB().value("hub_member"_L1).toString() == nameB; }),
        qPrintable(forwarder.describe()));
    QCOMPARE(seenFromB().value("state"_L1).toString(), u"connected"_s);
    // A comes back as the same member, one start later,
    QVERIFY2(a.start(), qPrintable(a.transcript()));
    members = membersOf(database, a.dataDir());
    const QString restartedA = QUrl(a.localAccess().value("url"_L1).toString()).authority();
    QCOMPARE(members.value(restartedA).value("state"_L1).toString(), u"alive"_s);
    QCOMPARE(members.value(restartedA).value("generation"_L1).toInteger(), 2);
    // and one that stops says it left.
    QCOMPARE(b.stop(), 0);
    QCOMPARE(membersOf(database, a.dataDir()).value(nameB).value("state"_L1).toString(), u"left"_s);
    const CliResult text = runProgram(binaryPath(u"cloop"_s),
        { u"hub"_s, u"members"_s, u"--data"_s, a.dataDir(), u"--database"_s, connectionOf(database),
            u"--database-password-file"_s, passwordFile(m_server.password()) },
        childEnvironment(a.dataDir()));
    CLOOP_COMPARE_EXIT(text, 0);
    QVERIFY2(
        text.stdoutText().contains(u"alive (lease"_s) && text.stdoutText().contains(u"left "_s),
        qPrintable(text.describe()));
}

void TestHubPostgres::everyMemberServesARunsWholeLog()
{
    // Given two members on one database and an agent connected to A,
    const QString database = m_server.createDatabase();
    const QStringList shared { u"--database"_s, connectionOf(database),
        u"--database-password-file"_s, passwordFile(m_server.password()) };
    HubProcess a;
    HubProcess b;
    a.setServeArguments(shared);
    b.setServeArguments(shared);
    QVERIFY2(a.start(), qPrintable(a.transcript()));
    QVERIFY2(b.start(), qPrintable(b.transcript()));
    const QString project = u"/srv/projects/logs"_s;
    CLOOP_COMPARE_EXIT(a.cli({ u"project"_s, u"add"_s, project }), 0);
    const QJsonObject enrolled
        = a.cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"logbox"_s, u"--json"_s })
              .toObject();
    QTemporaryDir agentHome;
    ForwarderProcess agent(
        { u"--bundle"_s, enrolled.value("bundle"_L1).toString(), u"--host-mode"_s },
        agentHome.path(), ForwarderProcess::Program::Agent);
    QVERIFY(agent.start());
    QVERIFY2(
        agent.waitForStderr(u"connected to the hub as executor"_s), qPrintable(agent.describe()));
    // when a run it takes prints through A,
    const CliResult queued = a.cli({ u"run"_s, u"--project"_s, project, u"--host-process"_s,
        u"--no-wait"_s, u"--"_s, u"sh"_s, u"-c"_s, u"seq 1 30000"_s });
    CLOOP_COMPARE_EXIT(queued, 0);
    const QString runId = queued.stdoutText().trimmed();
    QVERIFY2(
        waitUntil(
            [&] {
                const QJsonObject page
                    = pinnedGet(a.apiUrl(u"/api/runs/%1/log"_s.arg(runId)), a.pin(), a.adminToken())
                          .json();
                return page.value("finished"_L1).toBool() && page.value("complete"_L1).toBool();
            },
            60'000),
        qPrintable(a.log()));
    // then B, which never saw the agent, serves the whole log, as A does.
    QByteArray expected;
    for (int i = 1; i <= 30000; ++i)
        expected += QByteArray::number(i) + '\n';
    for (HubProcess *member : { &b, &a }) {
        const CliResult logs = member->cli({ u"run"_s, u"logs"_s, runId });
        CLOOP_COMPARE_EXIT(logs, 0);
        QVERIFY2(logs.out == expected,
            qPrintable(
                u"%1 bytes of output, %2 expected"_s.arg(logs.out.size()).arg(expected.size())));
        QVERIFY2(!logs.stderrText().contains(u"dropped"_s), qPrintable(logs.describe()));
    }
    QVERIFY(!QFileInfo::exists(a.dataDir() + u"/runs"_s)
        || QDir(a.dataDir() + u"/runs"_s).isEmpty(QDir::Files));
}

void TestHubPostgres::healthSaysWhenTheDatabaseIsUnreachable()
{
    const QString database = m_server.createDatabase();
    HubProcess hub;
    hub.setServeArguments({ u"--database"_s, connectionOf(database), u"--database-password-file"_s,
        passwordFile(m_server.password()), u"--member-lease"_s, u"1s"_s });
    QVERIFY2(hub.start(), qPrintable(hub.transcript()));
    CLOOP_COMPARE_EXIT(hub.cli({ u"project"_s, u"add"_s, u"/srv/projects/one"_s }), 0);
    const auto health = [&] { return pinnedGet(hub.apiUrl(u"/api/health"_s), hub.pin()); };
    QCOMPARE(health().json().value("database"_L1).toString(), u"ok"_s);
    // When PostgreSQL goes away, the hub's health says so within a renewal,
    QVERIFY2(m_server.stop(), qPrintable(m_server.lastError()));
    QVERIFY2(
        waitUntil([&] { return health().status == 503; }, 10'000), qPrintable(health().describe()));
    const QJsonObject degraded = health().json();
    QCOMPARE(degraded.value("status"_L1).toString(), u"degraded"_s);
    QCOMPARE(degraded.value("database"_L1).toString(), u"unreachable"_s);
    QVERIFY2(degraded.value("error"_L1)
                 .toObject()
                 .value("message"_L1)
                 .toString()
                 .startsWith(u"the cluster database is unreachable"_s),
        qPrintable(health().describe()));
    // a change is refused rather than lost,
    const CliResult refused = hub.cli({ u"project"_s, u"add"_s, u"/srv/projects/two"_s });
    QVERIFY2(refused.exitCode != 0, qPrintable(refused.describe()));
    qInfo("refused while the database is down: %s", qPrintable(refused.stderrText().trimmed()));
    // and when it is back, everything resumes by itself.
    QVERIFY2(m_server.start(), qPrintable(m_server.lastError()));
    QVERIFY2(waitUntil([&] { return health().status == 200; }, 20'000),
        qPrintable(health().describe() + hub.log()));
    QCOMPARE(health().json().value("status"_L1).toString(), u"ok"_s);
    CLOOP_COMPARE_EXIT(hub.cli({ u"project"_s, u"add"_s, u"/srv/projects/two"_s }), 0);
    QCOMPARE(hub.cliItems({ u"project"_s, u"list"_s, u"--json"_s }).size(), 2);
    QVERIFY(hub.isRunning());
}

QTEST_GUILESS_MAIN(TestHubPostgres)
#include "tst_hubpostgres.moc"
