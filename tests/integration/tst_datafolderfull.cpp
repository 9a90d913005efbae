// Integration, as root: the hub's data folder runs out of space. A real hub
// whose data folder is a small tmpfs of its own, a real host-mode agent and
// a host-process run printing while the folder is full. Changes are refused
// with an error that says why and leave no trace; what was already recorded
// still reads; the run's output waits at the agent instead of being lost;
// and when space returns everything goes on without a restart, with the
// database whole.

#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace cloop::testing;

namespace {

const QString kProject = QStringLiteral("/srv/projects/disk");

// A tmpfs mounted on a folder for as long as it lives.
class TmpfsMount
{
public:
    TmpfsMount(const QString &where, const QByteArray &size)
        : m_where(QFile::encodeName(where))
    {
        QDir().mkpath(where);
        const QByteArray options = "size=" + size + ",mode=0700";
        if (::mount("cloop-test", m_where.constData(), "tmpfs", MS_NOSUID | MS_NODEV,
                options.constData())
            != 0)
            m_error = QString::fromLocal8Bit(std::strerror(errno));
    }
    ~TmpfsMount()
    {
        if (m_error.isEmpty())
            ::umount2(m_where.constData(), MNT_DETACH);
    }
    TmpfsMount(const TmpfsMount &) = delete;
    TmpfsMount &operator=(const TmpfsMount &) = delete;

    QString error() const { return m_error; }

private:
    QByteArray m_where;
    QString m_error;
};

// What `seq first last` prints.
QByteArray sequence(int first, int last)
{
    QByteArray out;
    for (int i = first; i <= last; ++i)
        out += QByteArray::number(i) + '\n';
    return out;
}

// Writes `path` until the file system has no space left; the bytes written.
qint64 fillUp(const QString &path)
{
    QFile filler(path);
    if (!filler.open(QIODevice::WriteOnly))
        return -1;
    const QByteArray chunk(64 * 1024, 'x');
    qint64 total = 0;
    for (;;) {
        const qint64 wrote = filler.write(chunk);
        if (wrote <= 0 || !filler.flush())
            break;
        total += wrote;
    }
    return total;
}

} // namespace

class TestDataFolderFull final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aFullDataFolderRefusesChangesClearlyAndEverythingGoesOnWhenSpaceReturns();

private:
    QJsonObject logPage(qint64 runId, qint64 offset);
    HttpResult health();

    std::unique_ptr<TestRig> m_rig;
    std::unique_ptr<TmpfsMount> m_mount;
    std::unique_ptr<QTemporaryDir> m_flagDir;
    ForwarderProcess *m_agent = nullptr;
};

void TestDataFolderFull::init()
{
    if (::geteuid() != 0)
        QSKIP("needs root: the hub's data folder is a tmpfs of the test's own");
    m_rig = std::make_unique<TestRig>();
    m_mount = std::make_unique<TmpfsMount>(m_rig->hub().dataDir(), "12m");
    QVERIFY2(m_mount->error().isEmpty(), qPrintable(m_mount->error()));
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    const QJsonObject enrolled
        = hub.cliJson(
                 { QStringLiteral("executor"), QStringLiteral("enroll"), QStringLiteral("--name"),
                     QStringLiteral("diskbox"), QStringLiteral("--json") })
              .toObject();
    m_agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), enrolled.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--host-mode") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(m_agent->start());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(m_agent->describe()));
    // The run waits for a file its user can see: under /tmp, not the rig's
    // private scratch folder.
    m_flagDir
        = std::make_unique<QTemporaryDir>(QDir::tempPath() + QLatin1String("/cloop-flag-XXXXXX"));
    QVERIFY(m_flagDir->isValid());
    QFile::setPermissions(m_flagDir->path(),
        QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup
            | QFile::ReadOther | QFile::ExeOther);
}

void TestDataFolderFull::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_agent = nullptr;
    // The hub leaves the folder before it is unmounted, and the folder is
    // unmounted before the rig removes it.
    if (m_rig)
        m_rig->hub().kill();
    m_mount.reset();
    m_rig.reset();
    m_flagDir.reset();
}

QJsonObject TestDataFolderFull::logPage(qint64 runId, qint64 offset)
{
    HubProcess &hub = m_rig->hub();
    QUrl url = hub.apiUrl(QStringLiteral("/api/runs/%1/log").arg(runId));
    url.setQuery(QStringLiteral("offset=%1").arg(offset));
    return pinnedGet(url, hub.pin(), hub.adminToken()).json();
}

HttpResult TestDataFolderFull::health()
{
    return pinnedGet(m_rig->hub().apiUrl(QStringLiteral("/api/health")), m_rig->hub().pin());
}

void TestDataFolderFull::aFullDataFolderRefusesChangesClearlyAndEverythingGoesOnWhenSpaceReturns()
{
    HubProcess &hub = m_rig->hub();
    const QString flag = m_flagDir->filePath(QStringLiteral("go"));
    // Given a run that printed its first part and waits …
    const CliResult queued = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--host-process"), QStringLiteral("--no-wait"), QStringLiteral("--"),
        QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("seq 1 20000; while [ ! -e %1 ]; do sleep 0.1; done; seq 20001 60000")
            .arg(flag) });
    CLOOP_COMPARE_EXIT(queued, 0);
    const qint64 runId = queued.stdoutText().trimmed().toLongLong();
    QVERIFY(runId > 0);
    const qint64 firstPart = sequence(1, 20000).size();
    QVERIFY(waitUntil(
        [&] { return logPage(runId, 0).value(QLatin1String("end")).toInteger() == firstPart; }));

    // … when the data folder fills up …
    const QString filler = hub.dataDir() + QLatin1String("/filler");
    QVERIFY(fillUp(filler) > 0);

    // … changes are refused, sooner or later (SQLite may still have room in
    // a log it already grew), with an error that says what is wrong and that
    // nothing was changed …
    CliResult refused;
    int made = 0;
    for (; made < 200; ++made) {
        refused = hub.cli({ QStringLiteral("project"), QStringLiteral("add"),
            QStringLiteral("/srv/projects/full-%1").arg(made) });
        if (refused.exitCode != 0)
            break;
    }
    QVERIFY2(made < 200, "no change was refused on a full data folder");
    QVERIFY2(refused.exitCode != 0 && !refused.crashed, qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(QLatin1String("no space left")),
        qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(QLatin1String("nothing was changed")),
        qPrintable(refused.describe()));
    // … and leave no trace: the refused project is not there.
    const QString refusedProject = QStringLiteral("/srv/projects/full-%1").arg(made);
    const CliResult projects = hub.cli({ QStringLiteral("project"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(projects, 0);
    QVERIFY2(!projects.stdoutText().contains(refusedProject), qPrintable(projects.describe()));
    QVERIFY(projects.stdoutText().contains(kProject));

    // The health check tells the operator, without a token.
    const HttpResult full = health();
    QCOMPARE(full.status, 503);
    QCOMPARE(full.json().value(QLatin1String("status")).toString(), QStringLiteral("degraded"));
    QCOMPARE(full.errorCode(), QStringLiteral("storage_full"));

    // The run goes on printing and ends while the folder is full; its
    // output waits at the agent, nothing of it is lost.
    QFile(flag).open(QIODevice::WriteOnly);
    QVERIFY(waitUntil([&] {
        return hub.log().contains(QStringLiteral("run %1 log waits for space").arg(runId));
    }));
    QVERIFY(m_agent->waitForStderr(QStringLiteral("run %1 finished: exit 0").arg(runId)));
    QVERIFY(hub.isRunning());
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("forward"), QStringLiteral("list") }), 0);
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("run"), QStringLiteral("list") }), 0);

    // When space returns, without a restart, the same change is made …
    QVERIFY(QFile::remove(filler));
    CliResult added;
    QVERIFY(waitUntil([&] {
        added = hub.cli({ QStringLiteral("project"), QStringLiteral("add"), refusedProject });
        return added.exitCode == 0;
    }));
    QVERIFY(waitUntil([&] { return health().status == 200; }));
    // … and the run ends with its whole output, byte for byte.
    QVERIFY(waitUntil([&] {
        const QJsonObject page = logPage(runId, 0);
        return page.value(QLatin1String("finished")).toBool()
            && page.value(QLatin1String("complete")).toBool();
    }));
    const CliResult logs
        = hub.cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(runId) });
    CLOOP_COMPARE_EXIT(logs, 0);
    QCOMPARE(logs.out.size(), sequence(1, 60000).size());
    QVERIFY(logs.out == sequence(1, 60000));
    const QJsonObject run = hub.cliJson({ QStringLiteral("run"), QStringLiteral("show"),
                                            QString::number(runId), QStringLiteral("--json") })
                                .toObject();
    QCOMPARE(run.value(QLatin1String("state")).toString(), QStringLiteral("succeeded"));

    // The database is whole after a clean stop, and the hub starts on it.
    QCOMPARE(hub.stop(), 0);
    {
        QSqlDatabase db
            = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("check"));
        db.setDatabaseName(hub.databasePath());
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        QVERIFY(db.open());
        QSqlQuery check(db);
        QVERIFY(check.exec(QStringLiteral("PRAGMA integrity_check")));
        QVERIFY(check.next());
        QCOMPARE(check.value(0).toString(), QStringLiteral("ok"));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("check"));
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    const CliResult after = hub.cli({ QStringLiteral("project"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(after, 0);
    QVERIFY(after.stdoutText().contains(refusedProject));
}

QTEST_MAIN(TestDataFolderFull)
#include "tst_datafolderfull.moc"
