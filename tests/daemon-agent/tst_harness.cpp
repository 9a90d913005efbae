// Harnesses on the agent's device: the per-user folders put in front of its
// PATH (only those that exist, never twice), and the table of official
// installers with what a device's operator adds.

#include "daemon-agent/harness/harnesspath.h"
#include "daemon-agent/harness/harnesstable.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::agent;
using namespace Qt::StringLiterals;

class TestHarness final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void onlyExistingFoldersAreTaken();
    void thePathDoesNotGrowWhenCalledTwice();
    void theOfficialTableNamesItsVendors();
    void anOperatorsFileAddsAndReplaces();
    void aFileOutOfShapeIsRefused_data();
    void aFileOutOfShapeIsRefused();

private:
    QString write(const QByteArray &bytes);
    QTemporaryDir m_dir;
};

QString TestHarness::write(const QByteArray &bytes)
{
    const QString path = m_dir.filePath(u"table-%1.json"_s.arg(qHash(bytes)));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(bytes);
    return path;
}

void TestHarness::onlyExistingFoldersAreTaken()
{
    const QString home = m_dir.filePath(u"home"_s);
    QVERIFY(existingHarnessDirectories(home).isEmpty());
    QVERIFY(QDir().mkpath(home + u"/.npm-global/bin"_s));
    QVERIFY(QDir().mkpath(home + u"/.local/bin"_s));
    QCOMPARE(existingHarnessDirectories(home),
        (QStringList { home + u"/.local/bin"_s, home + u"/.npm-global/bin"_s }));
    QVERIFY(existingHarnessDirectories(QString()).isEmpty());
}

void TestHarness::thePathDoesNotGrowWhenCalledTwice()
{
    const QStringList folders { u"/home/run/.local/bin"_s, u"/home/run/.npm-global/bin"_s };
    const QString once = prependToPath(u"/usr/local/bin:/usr/bin:/bin"_s, folders);
    QCOMPARE(
        once, u"/home/run/.local/bin:/home/run/.npm-global/bin:/usr/local/bin:/usr/bin:/bin"_s);
    QCOMPARE(prependToPath(once, folders), once);
    // A folder the PATH has already stays where it is; none is added twice.
    QCOMPARE(prependToPath(u"/usr/bin:/home/run/.local/bin"_s, folders + folders),
        u"/home/run/.npm-global/bin:/usr/bin:/home/run/.local/bin"_s);
    QCOMPARE(prependToPath(QString(), folders), folders.join(u':'));
    QCOMPARE(prependToPath(u"/usr/bin"_s, {}), u"/usr/bin"_s);
}

void TestHarness::theOfficialTableNamesItsVendors()
{
    const HarnessTable table = HarnessTable::official();
    for (const QString &name : { u"claude"_s, u"codex"_s, u"gemini"_s, u"aider"_s }) {
        const auto installer = table.find(name);
        QVERIFY2(installer, qPrintable(name));
        QVERIFY(!installer->vendor.isEmpty());
        QVERIFY(!installer->command.isEmpty());
    }
    QVERIFY(!table.find(u"fakeharness"_s));
    QVERIFY(!table.find(QString()));
}

void TestHarness::anOperatorsFileAddsAndReplaces()
{
    const QString file = write(R"({
        "fakeharness": {"vendor": "the lab", "command": ["/opt/lab/install-fake", "--quiet"]},
        "claude": {"vendor": "the lab's mirror", "command": ["/opt/lab/claude-from-mirror"]}
    })");
    auto table = HarnessTable::withFile(file);
    QVERIFY2(table.ok(), qPrintable(table.ok() ? QString() : table.error().message));
    QCOMPARE(table->find(u"fakeharness"_s)->command,
        (QStringList { u"/opt/lab/install-fake"_s, u"--quiet"_s }));
    QCOMPARE(table->find(u"claude"_s)->command, QStringList { u"/opt/lab/claude-from-mirror"_s });
    QCOMPARE(table->names().count(u"claude"_s), 1);
    QVERIFY(table->find(u"codex"_s));
}

void TestHarness::aFileOutOfShapeIsRefused_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("problem");
    QTest::newRow("not JSON") << QByteArray("{") << u"not a JSON object"_s;
    QTest::newRow("a list") << QByteArray("[]") << u"not a JSON object"_s;
    QTest::newRow("no command") << QByteArray(R"({"x": {"vendor": "v"}})") << u"\"x\""_s;
    QTest::newRow("an empty word") << QByteArray(R"({"x": {"command": ["a", ""]}})") << u"\"x\""_s;
    QTest::newRow("a strange name")
        << QByteArray(R"({"Not Ok": {"command": ["a"]}})") << u"Not Ok"_s;
    QTest::newRow("huge") << QByteArray(70 * 1024, ' ') << u"larger than"_s;
}

void TestHarness::aFileOutOfShapeIsRefused()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, problem);
    auto table = HarnessTable::withFile(write(bytes));
    QVERIFY(!table.ok());
    QVERIFY2(table.error().message.contains(problem), qPrintable(table.error().message));
    QVERIFY(!HarnessTable::withFile(m_dir.filePath(u"absent.json"_s)).ok());
}

QTEST_GUILESS_MAIN(TestHarness)
#include "tst_harness.moc"
