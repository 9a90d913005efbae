// Integration: `cloop-hub backup` while the hub runs and the database is
// being written (runs streaming their output, a binding made and ended over
// and over, audit rows from a second connection), `cloop-hub restore` into a
// new data folder, compared row by row, and the hub served from it is the
// same hub: its forwarder reconnects on its own. Bad input is refused and
// leaves nothing behind.

#include "common/util/atomicfile.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTest>
#include <QUuid>

#include <QJsonDocument>
#include <QJsonObject>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include <pwd.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestHubBackup final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void backupUnderLoadRestoresTheSameHub();
    void refusesWhatIsNoBackupAndOverwritesNothing();
};

namespace {

CliResult hubCommand(const QStringList &arguments)
{
    return runProgram(
        binaryPath(u"cloop-hub"_s), arguments, QProcessEnvironment::systemEnvironment());
}

// Every row of every table of a SQLite file, each as text, by table.
QMap<QString, QStringList> rowsOf(const QString &path)
{
    QMap<QString, QStringList> tables;
    const QString name = QUuid::createUuid().toString();
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, name);
        db.setDatabaseName(path);
        db.setConnectOptions(u"QSQLITE_OPEN_READONLY"_s);
        if (!db.open())
            return {};
        QSqlQuery names(db);
        names.exec(u"SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"_s);
        QStringList all;
        while (names.next())
            all.append(names.value(0).toString());
        for (const QString &table : all) {
            QSqlQuery rows(db);
            rows.exec(u"SELECT * FROM \"%1\" ORDER BY rowid"_s.arg(table));
            QStringList &out = tables[table];
            while (rows.next()) {
                QStringList fields;
                for (int i = 0; i < rows.record().count(); ++i)
                    fields.append(rows.value(i).toString());
                out.append(fields.join(u'\x1f'));
            }
        }
    }
    QSqlDatabase::removeDatabase(name);
    return tables;
}

// Runs `step` over and over on a thread of its own until stopped, or until
// a step fails and says why: one part of a busy hub's load.
class LoadLoop
{
public:
    using Step = std::function<QString()>; // empty: one more step done

    explicit LoadLoop(Step step)
        : m_thread([this, step = std::move(step)] {
            while (!m_stop) {
                if (QString why = step(); !why.isEmpty()) {
                    m_failure = why;
                    return;
                }
                ++m_steps;
            }
        })
    { }
    ~LoadLoop() { stop(); }
    void stop()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
    }
    int steps() const { return m_steps; }
    // Why it ended early; read after stop().
    QString failure() const { return m_failure; }

private:
    std::atomic<bool> m_stop { false };
    std::atomic<int> m_steps { 0 };
    QString m_failure;
    std::thread m_thread;
};

// An audit row appended from a connection of its own, opened on the
// loop's thread, as a busy hub writes while the backup reads.
LoadLoop::Step appendAuditRow(const QString &databasePath)
{
    return [databasePath, db = std::shared_ptr<hub::Database>(), n = 0]() mutable -> QString {
        if (!db) {
            auto opened = hub::Database::openSqlite(databasePath);
            if (!opened)
                return opened.error().message;
            db = std::move(*opened);
        }
        ++n;
        const Status appended = hub::AuditLog(*db).append(
            u"load"_s, hub::auditaction::kForwarderRevoke, u"load:%1"_s.arg(n), { { u"n"_s, n } });
        return appended ? QString() : appended.error().message;
    };
}

// A forwarder bound to a project and the binding ended, through the admin
// API as an administrator does it.
LoadLoop::Step bindAndUnbind(QProcessEnvironment environment, qint64 forwarderId, QString project)
{
    return [environment, forwarderId, project]() -> QString {
        const QString cloop = binaryPath(u"cloop"_s);
        const CliResult bound = runProgram(cloop,
            { u"forward"_s, u"bind"_s, QString::number(forwarderId), u"--project"_s, project,
                u"--ttl"_s, u"1h"_s, u"--json"_s },
            environment);
        const qint64 binding
            = QJsonDocument::fromJson(bound.out).object().value(u"id"_s).toInteger();
        if (bound.exitCode != 0 || binding <= 0)
            return bound.describe();
        const CliResult unbound = runProgram(cloop,
            { u"forward"_s, u"unbind"_s, QString::number(binding), u"--reason"_s, u"churn"_s },
            environment);
        return unbound.exitCode == 0 ? QString() : unbound.describe();
    };
}

// How many rows of `rows` (as rowsOf gives them) have `value` in column
// `column`.
qsizetype countWhere(const QStringList &rows, int column, const QString &value)
{
    return std::count_if(rows.cbegin(), rows.cend(),
        [&](const QString &row) { return row.split(u'\x1f').value(column) == value; });
}

// The column index of `name` in `table` of a SQLite file.
int columnOf(const QString &path, const QString &table, const QString &name)
{
    const QString connection = QUuid::createUuid().toString();
    int index = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, connection);
        db.setDatabaseName(path);
        db.setConnectOptions(u"QSQLITE_OPEN_READONLY"_s);
        if (db.open()) {
            QSqlQuery query(db);
            query.exec(u"SELECT * FROM \"%1\" LIMIT 0"_s.arg(table));
            index = query.record().indexOf(name);
        }
    }
    QSqlDatabase::removeDatabase(connection);
    return index;
}

const QString kProject = u"/srv/projects/backup"_s;

// A hub with a long history: `rows` audit rows of about 2 KiB each, in one
// transaction of a connection of its own. The backup then takes long
// enough for the load to write while it reads.
bool writeHistory(const QString &databasePath, int rows)
{
    auto db = hub::Database::openSqlite(databasePath);
    if (!db)
        return false;
    hub::Database::Transaction transaction(**db);
    const QString filler(2048, u'h');
    for (int i = 0; i < rows; ++i) {
        if (!hub::AuditLog(**db).append(u"history"_s, hub::auditaction::kForwarderRevoke,
                u"history:%1"_s.arg(i), { { u"filler"_s, filler } }))
            return false;
    }
    return bool(transaction.commit());
}

} // namespace

void TestHubBackup::backupUnderLoadRestoresTheSameHub()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    ConnectedForwarder forwarder;
    QVERIFY2(rig.enrollAndConnect(u"bench-1"_s, forwarder), qPrintable(rig.lastError()));
    CLOOP_COMPARE_EXIT(hub.cli({ u"project"_s, u"add"_s, kProject }), 0);

    // Runs streaming output while the backup reads: host-process runs of a
    // root agent in host mode (no sandbox engine needed), where the machine
    // allows them; each writes its log position into the database as its
    // output arrives.
    const bool withRuns = ::geteuid() == 0 && ::getpwnam("cloop-run");
    QList<qint64> runIds;
    if (withRuns) {
        const QJsonObject enrolled
            = hub.cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"loadbox"_s, u"--json"_s })
                  .toObject();
        ForwarderProcess &agent = rig.addForwarder(
            { u"--bundle"_s, enrolled.value(u"bundle"_s).toString(), u"--host-mode"_s,
                u"--max-concurrent"_s, u"2"_s, u"--work-root"_s, rig.path(u"work"_s) },
            rig.newHome(), ForwarderProcess::Program::Agent);
        QVERIFY(agent.start());
        QVERIFY2(agent.waitForStderr(u"connected to the hub as executor"_s),
            qPrintable(agent.describe()));
        for (int i = 0; i < 2; ++i) {
            const CliResult queued = hub.cli({ u"run"_s, u"--project"_s, kProject,
                u"--host-process"_s, u"--no-wait"_s, u"--"_s, u"sh"_s, u"-c"_s,
                u"i=0; while :; do echo \"line $i of the run\"; i=$((i+1)); "
                "[ $((i % 200)) = 0 ] && sleep 0.02; done"_s });
            CLOOP_COMPARE_EXIT(queued, 0);
            runIds.append(queued.stdoutText().trimmed().toLongLong());
        }
        const int logEndColumn = columnOf(hub.databasePath(), u"runs"_s, u"log_end"_s);
        const auto streaming = [&] {
            const QStringList runs = rowsOf(hub.databasePath()).value(u"runs"_s);
            return runs.size() == 2
                && std::all_of(runs.cbegin(), runs.cend(), [&](const QString &row) {
                       return row.split(u'\x1f').value(logEndColumn).toLongLong() > 0;
                   });
        };
        QTRY_VERIFY_WITH_TIMEOUT(streaming(), 30000);
    } else {
        qInfo("not root, or no user cloop-run: the load has no runs");
    }

    QVERIFY(writeHistory(hub.databasePath(), 40000));
    QProcessEnvironment cliEnvironment = childEnvironment(hub.homeDir());
    cliEnvironment.insert(u"CLOOP_HUB_DATA"_s, hub.dataDir());
    const QString backup = rig.path(u"hub.backup"_s);
    int auditDuringBackup = 0;
    int bindingChangesDuringBackup = 0;
    {
        LoadLoop audit(appendAuditRow(hub.databasePath()));
        LoadLoop churn(bindAndUnbind(cliEnvironment, forwarder.enrollment.id, kProject));
        QTRY_VERIFY_WITH_TIMEOUT(audit.steps() > 20 && churn.steps() > 3, 30000);
        const int auditBefore = audit.steps();
        const int churnBefore = churn.steps();
        CLOOP_COMPARE_EXIT(hubCommand({ u"backup"_s, backup, u"--data"_s, hub.dataDir() }), 0);
        auditDuringBackup = audit.steps() - auditBefore;
        bindingChangesDuringBackup = 2 * (churn.steps() - churnBefore);
        // The load goes on past the backup, so the live database moves on
        // from the moment the backup holds.
        const int churnAfter = churn.steps();
        QTRY_VERIFY_WITH_TIMEOUT(churn.steps() > churnAfter + 1, 30000);
        audit.stop();
        churn.stop();
        QVERIFY2(audit.failure().isEmpty(), qPrintable(audit.failure()));
        QVERIFY2(churn.failure().isEmpty(), qPrintable(churn.failure()));
    }
    QCOMPARE(util::fileMode(backup), 0600);
    qInfo() << "while the backup ran:" << auditDuringBackup << "audit rows,"
            << bindingChangesDuringBackup << "binding changes";
    for (qint64 id : runIds)
        CLOOP_COMPARE_EXIT(hub.cli({ u"run"_s, u"cancel"_s, QString::number(id) }), 0);

    // One moment of the database: the audit trail in the backup is the live
    // one up to some row, with no row missing or torn before it.
    const auto live = rowsOf(hub.databasePath());
    const auto copied = rowsOf(backup);
    const QStringList copiedAudit = copied.value(u"audit_log"_s);
    QVERIFY(copiedAudit.size() > 20);
    QCOMPARE(live.value(u"audit_log"_s).mid(0, copiedAudit.size()), copiedAudit);

    // And the same moment in every table: each binding made or ended is
    // written with its audit row in one transaction, so the backup holds as
    // many of one as of the other, and at most one binding is active.
    const QStringList copiedBindings = copied.value(u"bindings"_s);
    const int auditAction = columnOf(backup, u"audit_log"_s, u"action"_s);
    const int endedAt = columnOf(backup, u"bindings"_s, u"ended_at"_s);
    QVERIFY(auditAction >= 0 && endedAt >= 0);
    QVERIFY(copiedBindings.size() > 3);
    QCOMPARE(countWhere(copiedAudit, auditAction, u"forwarder.bind"_s), copiedBindings.size());
    const qsizetype active = countWhere(copiedBindings, endedAt, QString());
    QVERIFY(active <= 1);
    QCOMPARE(countWhere(copiedAudit, auditAction, u"forwarder.unbind"_s),
        copiedBindings.size() - active);
    QVERIFY(live.value(u"bindings"_s).size() > copiedBindings.size());
    // Each streaming run's log had reached a point in the backup that the
    // live one has passed since.
    const int runLogEnd = columnOf(backup, u"runs"_s, u"log_end"_s);
    for (int i = 0; i < runIds.size(); ++i) {
        const qint64 inBackup
            = copied.value(u"runs"_s).value(i).split(u'\x1f').value(runLogEnd).toLongLong();
        const qint64 nowLive
            = live.value(u"runs"_s).value(i).split(u'\x1f').value(runLogEnd).toLongLong();
        QVERIFY2(inBackup > 0 && nowLive > inBackup,
            qPrintable(u"run %1: log at %2 in the backup, %3 live"_s.arg(runIds.at(i))
                           .arg(inBackup)
                           .arg(nowLive)));
    }

    // Restored where the hub was, and compared with the backup row by row.
    QCOMPARE(hub.stop(), 0);
    const QString dataDir = hub.dataDir();
    QVERIFY(QDir().rename(dataDir, dataDir + u".before"_s));
    CLOOP_COMPARE_EXIT(hubCommand({ u"restore"_s, backup, u"--data"_s, dataDir }), 0);
    auto restored = rowsOf(dataDir + u"/hub.db"_s);
    auto expected = copied;
    expected.remove(u"cloop_backup_files"_s);
    QCOMPARE(restored.keys(), expected.keys());
    for (const QString &table : expected.keys())
        QCOMPARE(restored.value(table), expected.value(table));
    QCOMPARE(util::fileMode(dataDir + u"/tls/key.pem"_s), 0600);
    QFile before(dataDir + u".before/tls/key.pem"_s);
    QFile after(dataDir + u"/tls/key.pem"_s);
    QVERIFY(before.open(QIODevice::ReadOnly) && after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), before.readAll());

    // The same hub: the forwarder, still running, reconnects by itself.
    QVERIFY2(hub.start(), qPrintable(rig.lastError()));
    QTRY_VERIFY2_WITH_TIMEOUT(hub.forwarderConnected(forwarder.enrollment.id),
        "the forwarder did not reconnect to the restored hub", 30000);
}

void TestHubBackup::refusesWhatIsNoBackupAndOverwritesNothing()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    const QString dataDir = hub.dataDir();

    // A backup never replaces a file.
    const QString taken = rig.path(u"taken"_s);
    QFile file(taken);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write("mine") == 4);
    file.close();
    const CliResult onTaken = hubCommand({ u"backup"_s, taken, u"--data"_s, dataDir });
    CLOOP_COMPARE_EXIT(onTaken, 1);
    QVERIFY2(onTaken.stderrText().contains(u"never replaces"_s), qPrintable(onTaken.describe()));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("mine"));
    file.close();

    // No FILE, or two.
    CLOOP_COMPARE_EXIT(hubCommand({ u"backup"_s, u"--data"_s, dataDir }), 2);
    CLOOP_COMPARE_EXIT(hubCommand({ u"restore"_s, u"a"_s, u"b"_s }), 2);

    // Neither a file that is no database, nor a database that is no backup,
    // makes a data folder.
    const QString plainDatabase = rig.path(u"plain.db"_s);
    QVERIFY(QFile::copy(hub.databasePath(), plainDatabase));
    for (const QString &notBackup : { taken, plainDatabase }) {
        const QString target = rig.path(u"restored-"_s + QFileInfo(notBackup).fileName());
        const CliResult refused = hubCommand({ u"restore"_s, notBackup, u"--data"_s, target });
        CLOOP_COMPARE_EXIT(refused, 1);
        QVERIFY2(!QFileInfo::exists(target), qPrintable(refused.describe()));
    }

    // A restore never lands on a hub.
    const QString backup = rig.path(u"hub.backup"_s);
    CLOOP_COMPARE_EXIT(hubCommand({ u"backup"_s, backup, u"--data"_s, dataDir }), 0);
    const CliResult onHub = hubCommand({ u"restore"_s, backup, u"--data"_s, dataDir });
    CLOOP_COMPARE_EXIT(onHub, 1);
    QVERIFY2(onHub.stderrText().contains(u"holds no hub"_s), qPrintable(onHub.describe()));
}

QTEST_GUILESS_MAIN(TestHubBackup)
#include "tst_hubbackup.moc"
