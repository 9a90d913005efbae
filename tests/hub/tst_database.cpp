#include "hub/storage/database.h"
#include "hub/storage/databasecopy.h"
#include "hub/storage/schema.h"

#include <QFile>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace Qt::StringLiterals;

using cloop::hub::Database;
using cloop::hub::DatabaseCopy;
using cloop::hub::Rows;

class TestDatabase : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void newFileIsMigratedToLatest();
    void reopeningKeepsDataAndVersion();
    void theMigrationCopiesEveryTableAfterThoseItNames();
    void runsOfASchema6FileKeepTheirIdsAndMayHaveNoProject();
    void aSchema8FileGainsEmptyRunLogTables();
    void rawBytesComeBackAsTheyWereAndJoinAsBytes();
    void corruptFileIsRefusedWithItsName();
    void directoryInsteadOfFileIsRefused();
    void missingFolderIsRefused();
    void newerSchemaIsRefused();
    void transactionRollsBackUnlessCommitted();
    void aStatementRunAgainIsPreparedOnceAndTakesItsNewValues();
    void transactionThatCannotBeginWritesNothing();
    void failedStatementNamesItsPurposeNotItsValues();
    void walModeIsOn();
    void unwritableFileIsRefused();
};

void TestDatabase::newFileIsMigratedToLatest()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY2(db, qPrintable(db.ok() ? QString() : db.error().message));
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    QVERIFY(Database::currentSchemaVersion() >= 1);
    for (const char *table : { "users", "api_tokens", "forwarders", "enrollment_tokens",
             "forwarder_credentials", "audit_log" }) {
        auto rows
            = (*db)->query(QStringLiteral("SELECT count(*) FROM %1").arg(QLatin1String(table)));
        QVERIFY2(rows, table);
    }
}

void TestDatabase::theMigrationCopiesEveryTableAfterThoseItNames()
{
    // `cloop hub migrate` copies the tables DatabaseCopy lists, in that
    // order: a table the schema gains must be listed, after the tables its
    // references name.
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    auto tables = (*db)->queryAll(QStringLiteral("SELECT name FROM sqlite_master WHERE type = "
                                                 "'table' AND name NOT LIKE 'sqlite_%' AND name "
                                                 "<> 'meta' ORDER BY name"),
        {}, [](const Rows &row) { return row.value(0).toString(); });
    QVERIFY(tables);
    QStringList listed = DatabaseCopy::tablesInOrder();
    const QStringList order = listed;
    listed.sort();
    QCOMPARE(listed, *tables);
    for (const QString &table : order) {
        auto references = (*db)->queryAll(QStringLiteral("PRAGMA foreign_key_list(%1)").arg(table),
            {}, [](const Rows &row) { return row.value(2).toString(); });
        QVERIFY(references);
        for (const QString &referenced : *references)
            QVERIFY2(order.indexOf(referenced) < order.indexOf(table),
                qPrintable(QStringLiteral("%1 names %2").arg(table, referenced)));
    }
}

void TestDatabase::reopeningKeepsDataAndVersion()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    {
        auto db = Database::openSqlite(path);
        QVERIFY(db);
        QVERIFY((*db)->query(
            QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 1, ?)"),
            { QStringLiteral("alice"), QStringLiteral("2026-01-01T00:00:00.000Z") }));
    }
    auto db = Database::openSqlite(path);
    QVERIFY(db);
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    auto rows = (*db)->query(QStringLiteral("SELECT name FROM users"));
    QVERIFY(rows);
    QVERIFY(rows->next());
    QCOMPARE(rows->value(0).toString(), QStringLiteral("alice"));
    QVERIFY(!rows->next());
}

void TestDatabase::runsOfASchema6FileKeepTheirIdsAndMayHaveNoProject()
{
    // Given a hub file of schema 6 with runs 1 and 2, and a run 3 since
    // deleted (so the id sequence is ahead of the rows),
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    {
        QSqlDatabase raw = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), u"v6"_s);
        raw.setDatabaseName(path);
        QVERIFY(raw.open());
        QSqlQuery q(raw);
        QVERIFY(q.exec(u"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"_s));
        for (int version = 1; version <= 6; ++version)
            for (const QString &statement : cloop::hub::schema::migrationTo(version, false))
                QVERIFY2(q.exec(statement), qPrintable(statement));
        QVERIFY(q.exec(u"INSERT INTO meta VALUES ('schema_version', '6')"_s));
        QVERIFY(q.exec(
            u"INSERT INTO projects (path, created_at, created_by) VALUES ('/srv/p', 'x', 'alice')"_s));
        for (int id = 1; id <= 3; ++id)
            QVERIFY(q.exec(u"INSERT INTO runs (id, project_id, requested_by, argv, state, "
                           "created_at, log_end) VALUES (%1, 1, 'user:alice', '[\"true\"]', "
                           "'succeeded', 'x', %1)"_s.arg(id)));
        QVERIFY(q.exec(u"DELETE FROM runs WHERE id = 3"_s));
        raw.close();
    }
    QSqlDatabase::removeDatabase(u"v6"_s);
    // when this hub opens it,
    auto db = Database::openSqlite(path);
    QVERIFY2(db, qPrintable(db.ok() ? QString() : db.error().message));
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    // then the runs are as they were,
    auto kept = (*db)->query(u"SELECT id, project_id, argv, log_end FROM runs ORDER BY id"_s);
    QVERIFY(kept);
    QList<qint64> ids;
    while (kept->next()) {
        ids.append(kept->value(0).toLongLong());
        QCOMPARE(kept->value(1).toLongLong(), qint64(1));
        QCOMPARE(kept->value(2).toString(), u"[\"true\"]"_s);
        QCOMPARE(kept->value(3).toLongLong(), ids.last());
    }
    QCOMPARE(ids, (QList<qint64> { 1, 2 }));
    // a run of no project, installing a harness, can be kept, and no id is
    // given twice.
    auto added = (*db)->query(u"INSERT INTO runs (project_id, requested_by, argv, state, "
                              "created_at, harness) VALUES (NULL, 'user:alice', '[]', 'queued', "
                              "'x', 'claude') RETURNING id"_s);
    QVERIFY2(added, qPrintable(added.ok() ? QString() : added.error().message));
    QVERIFY(added->next());
    QCOMPARE(added->value(0).toLongLong(), qint64(4));
}

void TestDatabase::aSchema8FileGainsEmptyRunLogTables()
{
    // Given a hub file of schema 8 with a run,
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    {
        QSqlDatabase raw = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), u"v8"_s);
        raw.setDatabaseName(path);
        QVERIFY(raw.open());
        QSqlQuery q(raw);
        QVERIFY(q.exec(u"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"_s));
        for (int version = 1; version <= 8; ++version)
            for (const QString &statement : cloop::hub::schema::migrationTo(version, false))
                QVERIFY2(q.exec(statement), qPrintable(statement));
        QVERIFY(q.exec(u"INSERT INTO meta VALUES ('schema_version', '8')"_s));
        QVERIFY(q.exec(u"INSERT INTO runs (requested_by, argv, state, created_at, log_end) "
                       "VALUES ('user:alice', '[]', 'succeeded', 'x', 42)"_s));
        raw.close();
    }
    QSqlDatabase::removeDatabase(u"v8"_s);
    // when this hub opens it, then it is at the current schema, its run is
    // as it was, and the run log tables are there and empty.
    auto db = Database::openSqlite(path);
    QVERIFY2(db, qPrintable(db.ok() ? QString() : db.error().message));
    QCOMPARE((*db)->schemaVersion(), Database::currentSchemaVersion());
    auto run = (*db)->query(u"SELECT id, log_end FROM runs"_s);
    QVERIFY(run && run->next());
    QCOMPARE(run->value(1).toLongLong(), qint64(42));
    for (const QString &table : { u"run_logs"_s, u"run_log_chunks"_s, u"run_log_totals"_s,
             u"cluster_events"_s, u"lent_devices"_s }) {
        auto rows = (*db)->query(u"SELECT COUNT(*) FROM %1"_s.arg(table));
        QVERIFY2(rows && rows->next(), qPrintable(table));
        QCOMPARE(rows->value(0).toLongLong(), qint64(0));
    }
}

void TestDatabase::rawBytesComeBackAsTheyWereAndJoinAsBytes()
{
    // Run log records are any bytes: NULs, invalid UTF-8, all of them.
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    QByteArray head;
    for (int i = 0; i < 256; ++i)
        head.append(char(i));
    const QByteArray tail = QByteArray("\0\xff\xfe tail\0", 9);
    QVERIFY((*db)->query(u"INSERT INTO run_logs (run_id, start_offset, end_offset, stored_bytes) "
                         "VALUES (1, 0, 0, 0)"_s));
    QVERIFY((*db)->query(u"INSERT INTO run_log_chunks (run_id, first_offset, end_offset, "
                         "stored_bytes, records) VALUES (1, 0, 0, 0, ?)"_s,
        { head }));
    auto joined = (*db)->query(u"UPDATE run_log_chunks SET records = %1 WHERE run_id = 1"_s.arg(
                                   (*db)->concatenatedBytes(u"records"_s, u"?"_s)),
        { tail });
    QVERIFY2(joined, qPrintable(joined.ok() ? QString() : joined.error().message));
    auto rows = (*db)->query(u"SELECT records, typeof(records) FROM run_log_chunks"_s);
    QVERIFY(rows && rows->next());
    QCOMPARE(rows->value(1).toString(), u"blob"_s);
    QCOMPARE(rows->value(0).toByteArray(), head + tail);
}

void TestDatabase::corruptFileIsRefusedWithItsName()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QByteArray garbage(8192, '\0');
    for (char &c : garbage)
        c = static_cast<char>(QRandomGenerator::global()->bounded(256));
    file.write(garbage);
    file.close();

    auto db = Database::openSqlite(path);
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(path), qPrintable(db.error().message));
    QVERIFY(db.error().permanent);
    // Refusing must not have changed the file.
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), garbage);
}

void TestDatabase::directoryInsteadOfFileIsRefused()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("hub.db")));
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(!db);
    QVERIFY(db.error().message.contains(QStringLiteral("not a file")));
}

void TestDatabase::missingFolderIsRefused()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("absent/hub.db")));
    QVERIFY(!db);
    QVERIFY2(db.error().message.contains(QStringLiteral("does not exist")),
        qPrintable(db.error().message));
}

void TestDatabase::newerSchemaIsRefused()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    {
        auto db = Database::openSqlite(path);
        QVERIFY(db);
        QVERIFY((*db)->query(
            QStringLiteral("UPDATE meta SET value = '999' WHERE key = 'schema_version'")));
    }
    auto db = Database::openSqlite(path);
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("schema_too_new"));
    QVERIFY(db.error().message.contains(QStringLiteral("999")));
}

void TestDatabase::aStatementRunAgainIsPreparedOnceAndTakesItsNewValues()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    Database &database = **db;
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, ?, 'x')");
    const QString select
        = QStringLiteral("SELECT name FROM users WHERE hub_admin = ? ORDER BY name");
    const int before = database.preparedStatements();
    QVERIFY(database.query(insert, { QStringLiteral("ann"), 1 }));
    QVERIFY(database.query(insert, { QStringLiteral("bob"), 0 }));
    QVERIFY(database.query(insert, { QStringLiteral("cat"), 1 }));
    const auto names = [&](int admin) {
        QStringList out;
        auto rows = database.query(select, { admin });
        while (rows && rows->next())
            out << rows->value(0).toString();
        return out;
    };
    QCOMPARE(names(1), (QStringList { QStringLiteral("ann"), QStringLiteral("cat") }));
    QCOMPARE(names(0), (QStringList { QStringLiteral("bob") }));
    QCOMPARE(names(1), (QStringList { QStringLiteral("ann"), QStringLiteral("cat") }));
    QCOMPARE(database.preparedStatements(), before + 2);
    // A kept statement that fails is named as any other, then prepared anew.
    const auto duplicate = database.query(
        QStringLiteral("INSERT INTO users (id, name, hub_admin, created_at) VALUES (?, ?, 0, 'x')"),
        { 1, QStringLiteral("dup") });
    QVERIFY(!duplicate);
    QVERIFY2(duplicate.error().message.contains(u"running \"INSERT INTO users"),
        qPrintable(duplicate.error().message));
    QCOMPARE(database.preparedStatements(), before + 2);
    // A transaction rolled back takes what the kept statements wrote with it.
    {
        Database::Transaction transaction(database);
        QVERIFY(transaction.begin());
        QVERIFY(database.query(insert, { QStringLiteral("dan"), 1 }));
    }
    QCOMPARE(names(1), (QStringList { QStringLiteral("ann"), QStringLiteral("cat") }));
}

void TestDatabase::transactionRollsBackUnlessCommitted()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    Database &database = **db;
    {
        Database::Transaction transaction(database);
        QVERIFY(transaction.begin());
        QVERIFY(database.query(QStringLiteral(
            "INSERT INTO users (name, hub_admin, created_at) VALUES ('bob', 0, 'x')")));
        // Given no commit, when the transaction ends, then nothing remains.
    }
    auto count = database.query(QStringLiteral("SELECT count(*) FROM users"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 0);

    {
        Database::Transaction transaction(database);
        QVERIFY(database.query(QStringLiteral(
            "INSERT INTO users (name, hub_admin, created_at) VALUES ('bob', 0, 'x')")));
        QVERIFY(transaction.commit());
        // A second commit is an error, not a silent success.
        QVERIFY(!transaction.commit());
    }
    count = database.query(QStringLiteral("SELECT count(*) FROM users"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 1);

    // A nested transaction joins the outer one: when it gives up, the outer
    // one cannot commit and nothing of either remains.
    {
        Database::Transaction outer(database);
        QVERIFY(outer.begin());
        QVERIFY(database.query(QStringLiteral(
            "INSERT INTO users (name, hub_admin, created_at) VALUES ('carol', 0, 'x')")));
        {
            Database::Transaction inner(database);
            QVERIFY(inner.begin());
            QVERIFY(database.query(QStringLiteral(
                "INSERT INTO users (name, hub_admin, created_at) VALUES ('dave', 0, 'x')")));
        }
        QVERIFY(!outer.commit());
    }
    count = database.query(QStringLiteral("SELECT count(*) FROM users"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 1);

    // And when it commits, its work commits with the outer one.
    {
        Database::Transaction outer(database);
        {
            Database::Transaction inner(database);
            QVERIFY(database.query(QStringLiteral(
                "INSERT INTO users (name, hub_admin, created_at) VALUES ('erin', 0, 'x')")));
            QVERIFY(inner.commit());
        }
        QVERIFY(outer.commit());
    }
    count = database.query(QStringLiteral("SELECT count(*) FROM users"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 2);
}

void TestDatabase::transactionThatCannotBeginWritesNothing()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    auto db = Database::openSqlite(path);
    QVERIFY(db);
    Database &database = **db;
    const QString insert
        = QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES ('bob', 0, 'x')");
    {
        // Another process holds the write lock past the busy timeout.
        QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), u"holder"_s);
        holder.setDatabaseName(path);
        QVERIFY(holder.open());
        QSqlQuery lock(holder);
        QVERIFY(lock.exec(QStringLiteral("BEGIN EXCLUSIVE")));
        {
            Database::Transaction transaction(database);
            QVERIFY(!transaction.begin());
            // Given the transaction never began, when the work it wraps runs
            // a statement, then the statement fails with the reason.
            auto inserted = database.query(insert);
            QVERIFY(!inserted);
            QCOMPARE(inserted.error().message, transaction.begin().error().message);
            {
                Database::Transaction inner(database);
                QVERIFY(!inner.begin());
            }
            QVERIFY(!database.query(insert));
            QVERIFY(!transaction.commit());
        }
        QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
        lock.finish();
        holder.close();
    }
    QSqlDatabase::removeDatabase(u"holder"_s);
    // Once it ended, statements run again, and nothing of it was written.
    auto count = database.query(QStringLiteral("SELECT count(*) FROM users"));
    QVERIFY(count && count->next());
    QCOMPARE(count->value(0).toInt(), 0);
}

void TestDatabase::failedStatementNamesItsPurposeNotItsValues()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    const QString secretHash = QStringLiteral("deadbeefcafe");
    QVERIFY((*db)->query(
        QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')"),
        { secretHash }));
    auto duplicate = (*db)->query(
        QStringLiteral("INSERT INTO users (name, hub_admin, created_at) VALUES (?, 0, 'x')"),
        { secretHash });
    QVERIFY(!duplicate);
    QCOMPARE(duplicate.error().code, QStringLiteral("storage_error"));
    QVERIFY(duplicate.error().message.contains(QStringLiteral("INSERT INTO users")));
    QVERIFY(!duplicate.error().message.contains(secretHash));
}

void TestDatabase::walModeIsOn()
{
    QTemporaryDir dir;
    auto db = Database::openSqlite(dir.filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    auto mode = (*db)->query(QStringLiteral("PRAGMA journal_mode"));
    QVERIFY(mode && mode->next());
    QCOMPARE(mode->value(0).toString(), QStringLiteral("wal"));
}

void TestDatabase::unwritableFileIsRefused()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("hub.db"));
    QVERIFY(Database::openSqlite(path));
    // Root ignores permission bits; an immutable file is unwritable even for root.
    QProcess lock;
    if (::geteuid() == 0) {
        lock.start(QStringLiteral("chattr"), { QStringLiteral("+i"), path });
        if (!lock.waitForFinished() || lock.exitCode() != 0)
            QSKIP("running as root on a file system without chattr +i");
    } else {
        QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner));
    }
    auto db = Database::openSqlite(path);
    if (::geteuid() == 0)
        QProcess::execute(QStringLiteral("chattr"), { QStringLiteral("-i"), path });
    QVERIFY(!db);
    QCOMPARE(db.error().code, QStringLiteral("storage_error"));
    QVERIFY2(db.error().message.contains(path), qPrintable(db.error().message));
}

QTEST_GUILESS_MAIN(TestDatabase)
#include "tst_database.moc"
