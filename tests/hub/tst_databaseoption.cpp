#include "hub/serve/databaseoption.h"
#include "hub/storage/database.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace Qt::StringLiterals;

using Keywords = QMap<QString, QString>;

// What `cloop hub serve --database` makes of what the operator gave: libpq
// keywords for Qt's driver, and never a password from the command line.
class TestDatabaseOption : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void turnsAUrlIntoKeywords_data();
    void turnsAUrlIntoKeywords();
    void refusesWhatItCannotUse_data();
    void refusesWhatItCannotUse();
    void takesThePasswordFromAPrivateFile();
    void refusesAPasswordFileOthersMayRead();
    void takesThePasswordFromTheEnvironment();

private:
    static QMap<QString, QString> keywordsOf(const QString &connection);
};

namespace {
// `bytes` in dir/password with these permissions; its path, or empty.
QString writePasswordFile(const QTemporaryDir &dir, const QByteArray &bytes,
    QFileDevice::Permissions permissions = QFileDevice::ReadOwner | QFileDevice::WriteOwner)
{
    const QString path = dir.filePath(u"password"_s);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        return {};
    file.close();
    return file.setPermissions(permissions) ? path : QString();
}
} // namespace

QMap<QString, QString> TestDatabaseOption::keywordsOf(const QString &connection)
{
    QMap<QString, QString> out;
    const auto parsed = parsePostgresKeywords(connection);
    if (parsed)
        for (const auto &[key, value] : *parsed)
            out.insert(key, value);
    return out;
}

void TestDatabaseOption::turnsAUrlIntoKeywords_data()
{
    QTest::addColumn<QString>("given");
    QTest::addColumn<Keywords>("expected");
    QTest::newRow("everything") << u"postgresql://cloop@db.example:5433/hub?sslmode=verify-full"_s
                                << Keywords { { u"host"_s, u"db.example"_s },
                                       { u"port"_s, u"5433"_s }, { u"user"_s, u"cloop"_s },
                                       { u"dbname"_s, u"hub"_s },
                                       { u"sslmode"_s, u"verify-full"_s } };
    QTest::newRow("the short scheme, a socket folder")
        << u"postgres:///hub?host=/run/postgresql"_s
        << Keywords { { u"dbname"_s, u"hub"_s }, { u"host"_s, u"/run/postgresql"_s } };
    QTest::newRow("escaped names")
        << u"postgresql://lab%20user@db/my%27db"_s
        << Keywords { { u"host"_s, u"db"_s }, { u"user"_s, u"lab user"_s },
               { u"dbname"_s, u"my'db"_s } };
    QTest::newRow("keywords as they are")
        << u"host=/tmp/pg dbname='a b' user=cloop"_s
        << Keywords { { u"host"_s, u"/tmp/pg"_s }, { u"dbname"_s, u"a b"_s },
               { u"user"_s, u"cloop"_s } };
}

void TestDatabaseOption::turnsAUrlIntoKeywords()
{
    QFETCH(QString, given);
    QFETCH(Keywords, expected);
    const Result<QString> connection = postgresConnection(given, {}, QProcessEnvironment());
    QVERIFY2(connection, qPrintable(connection.ok() ? QString() : connection.error().message));
    QCOMPARE(keywordsOf(*connection), expected);
}

void TestDatabaseOption::refusesWhatItCannotUse_data()
{
    QTest::addColumn<QString>("given");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("a password in the URL")
        << u"postgresql://cloop:s3cret@db/hub"_s << u"--database-password-file"_s;
    QTest::newRow("a password keyword")
        << u"host=db dbname=hub password=s3cret"_s << u"--database-password-file"_s;
    QTest::newRow("a password in the URL's parameters")
        << u"postgresql://db/hub?password=s3cret"_s << u"--database-password-file"_s;
    QTest::newRow("empty") << u"  "_s << u"empty"_s;
    QTest::newRow("neither URL nor keywords") << u"s3cret-db"_s << u"libpq keywords"_s;
    QTest::newRow("an unclosed quote") << u"dbname='s3cret"_s << u"quote"_s;
    QTest::newRow("a parameter that is no keyword")
        << u"postgresql://db/hub?Drop-Table=s3cret"_s << u"libpq keyword"_s;
    QTest::newRow("a database with a slash") << u"postgresql://db/a/s3cret"_s << u"\"/\""_s;
    QTest::newRow("a port that is no number") << u"postgresql://db:s3cret/hub"_s << u"URL"_s;
}

void TestDatabaseOption::refusesWhatItCannotUse()
{
    QFETCH(QString, given);
    QFETCH(QString, mentions);
    const Result<QString> connection = postgresConnection(given, {}, QProcessEnvironment());
    QVERIFY(!connection);
    QVERIFY2(connection.error().message.contains(mentions), qPrintable(connection.error().message));
    // What was given is not quoted back: it may hold a password.
    QVERIFY2(
        !connection.error().message.contains(u"s3cret"_s), qPrintable(connection.error().message));
}

void TestDatabaseOption::takesThePasswordFromAPrivateFile()
{
    QTemporaryDir dir;
    const QString path = writePasswordFile(dir, "it's a \\ secret\n");
    QVERIFY(!path.isEmpty());
    QProcessEnvironment environment;
    environment.insert(u"CLOOP_DATABASE_PASSWORD"_s, u"not this one"_s);
    const Result<QString> connection
        = postgresConnection(u"postgresql://cloop@db/hub"_s, path, environment);
    QVERIFY2(connection, qPrintable(connection.ok() ? QString() : connection.error().message));
    QCOMPARE(keywordsOf(*connection).value(u"password"_s), u"it's a \\ secret"_s);
    QCOMPARE(keywordsOf(*connection).value(u"user"_s), u"cloop"_s);

    // An empty file, or one of several lines, is no password.
    QCOMPARE(writePasswordFile(dir, "one\ntwo\n"), path);
    const Result<QString> twoLines
        = postgresConnection(u"postgresql://cloop@db/hub"_s, path, QProcessEnvironment());
    QVERIFY(!twoLines);
    QVERIFY2(!twoLines.error().message.contains(u"two"_s), qPrintable(twoLines.error().message));
}

void TestDatabaseOption::refusesAPasswordFileOthersMayRead()
{
    QTemporaryDir dir;
    const QString path = writePasswordFile(
        dir, "s3cret\n", QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther);
    QVERIFY(!path.isEmpty());
    const Result<QString> connection
        = postgresConnection(u"postgresql://cloop@db/hub"_s, path, QProcessEnvironment());
    QVERIFY(!connection);
    QVERIFY2(connection.error().message.contains(u"chmod 600"_s),
        qPrintable(connection.error().message));
    QVERIFY(!connection.error().message.contains(u"s3cret"_s));
    const Result<QString> missing = postgresConnection(
        u"postgresql://cloop@db/hub"_s, dir.filePath(u"none"_s), QProcessEnvironment());
    QVERIFY(!missing);
    QVERIFY2(
        missing.error().message.contains(u"cannot be read"_s), qPrintable(missing.error().message));
}

void TestDatabaseOption::takesThePasswordFromTheEnvironment()
{
    QProcessEnvironment environment;
    environment.insert(u"CLOOP_DATABASE_PASSWORD"_s, u"from the unit"_s);
    const Result<QString> connection = postgresConnection(u"host=db dbname=hub"_s, {}, environment);
    QVERIFY(connection);
    QCOMPARE(keywordsOf(*connection).value(u"password"_s), u"from the unit"_s);
    // Without one, libpq's own sources ($PGPASSWORD, ~/.pgpass) apply.
    const Result<QString> none = postgresConnection(u"host=db dbname=hub"_s, {}, {});
    QVERIFY(none);
    QVERIFY(!keywordsOf(*none).contains(u"password"_s));
}

QTEST_GUILESS_MAIN(TestDatabaseOption)
#include "tst_databaseoption.moc"
