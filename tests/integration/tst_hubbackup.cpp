// Integration: `cloop-hub backup` while the hub runs and the database is
// being written, `cloop-hub restore` into a new data folder, compared row by
// row, and the hub served from it is the same hub: its forwarder reconnects
// on its own. Bad input is refused and leaves nothing behind.

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

#include <atomic>
#include <thread>

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

// Appends audit rows from a connection of its own until told to stop, as
// a busy hub would while the backup reads.
class AuditWriter
{
public:
    explicit AuditWriter(const QString &databasePath)
        : m_thread([this, databasePath] { write(databasePath); })
    { }
    ~AuditWriter() { stop(); }
    void stop()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
    }
    int written() const { return m_written; }

private:
    void write(const QString &databasePath)
    {
        auto db = hub::Database::openSqlite(databasePath);
        if (!db)
            return;
        while (!m_stop) {
            if (hub::AuditLog(**db).append(u"load"_s, hub::auditaction::kForwarderRevoke,
                    u"load:%1"_s.arg(m_written.load()), { { u"n"_s, m_written.load() } }))
                ++m_written;
        }
    }

    std::atomic<bool> m_stop { false };
    std::atomic<int> m_written { 0 };
    std::thread m_thread;
};

} // namespace

void TestHubBackup::backupUnderLoadRestoresTheSameHub()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    ConnectedForwarder forwarder;
    QVERIFY2(rig.enrollAndConnect(u"bench-1"_s, forwarder), qPrintable(rig.lastError()));

    const QString backup = rig.path(u"hub.backup"_s);
    int duringBackup = 0;
    {
        AuditWriter load(hub.databasePath());
        QTRY_VERIFY_WITH_TIMEOUT(load.written() > 20, 20000);
        const int before = load.written();
        CLOOP_COMPARE_EXIT(hubCommand({ u"backup"_s, backup, u"--data"_s, hub.dataDir() }), 0);
        load.stop();
        duringBackup = load.written() - before;
    }
    QCOMPARE(util::fileMode(backup), 0600);
    qInfo() << duringBackup << "audit rows were written while the backup ran";

    // One moment of the database: the audit trail in the backup is the live
    // one up to some row, with no row missing or torn before it.
    const auto live = rowsOf(hub.databasePath());
    const auto copied = rowsOf(backup);
    const QStringList copiedAudit = copied.value(u"audit_log"_s);
    QVERIFY(copiedAudit.size() > 20);
    QCOMPARE(live.value(u"audit_log"_s).mid(0, copiedAudit.size()), copiedAudit);

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
