// Unit tests of the agent's work root (daemon-agent/workroot/workroot.h):
// paths chosen by the hub are confined beneath the root whatever `..`,
// absolute names or planted symlinks say, and a root agent hands each
// workspace to the unprivileged run user.

#include "daemon-agent/workroot/workroot.h"
#include "support/verifyresult.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using cloop::agent::WorkRoot;

namespace {

int modeOf(const QString &path)
{
    struct stat st
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return -1;
    return int(st.st_mode & 07777);
}

uid_t ownerOf(const QString &path)
{
    struct stat st
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return uid_t(-1);
    return st.st_uid;
}

bool makeSymlink(const QString &target, const QString &link)
{
    return ::symlink(QFile::encodeName(target).constData(), QFile::encodeName(link).constData())
        == 0;
}

// A system user that exists for one test and is removed afterwards, even
// when the test fails half-way.
class ThrowawayUser final
{
public:
    explicit ThrowawayUser(QString name)
        : m_name(std::move(name))
    {
        const QString useradd = QStandardPaths::findExecutable(QStringLiteral("useradd"));
        if (useradd.isEmpty())
            return;
        QProcess p;
        p.start(useradd,
            { QStringLiteral("--system"), QStringLiteral("--no-create-home"),
                QStringLiteral("--shell"), QStringLiteral("/usr/sbin/nologin"),
                QStringLiteral("--user-group"), m_name });
        m_created = p.waitForFinished(30'000) && p.exitStatus() == QProcess::NormalExit
            && p.exitCode() == 0;
    }
    ~ThrowawayUser()
    {
        if (!m_created)
            return;
        const QString userdel = QStandardPaths::findExecutable(QStringLiteral("userdel"));
        QProcess p;
        p.start(userdel, { m_name });
        p.waitForFinished(30'000);
    }
    ThrowawayUser(const ThrowawayUser &) = delete;
    ThrowawayUser &operator=(const ThrowawayUser &) = delete;

    bool created() const { return m_created; }
    const QString &name() const { return m_name; }

private:
    QString m_name;
    bool m_created = false;
};

} // namespace

class TestWorkRoot final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void createsRootPrivate();
    void narrowsWideRoot();
    void refusesBadNames_data();
    void refusesBadNames();
    void nestedCreation();
    void existingDirectoryIsReused();
    void symlinkOutsideRefused_data();
    void symlinkOutsideRefused();
    void symlinkInsideAllowed();
    void absoluteSymlinkIntoRootAllowed();
    void symlinkLoopRefused();
    void fileInTheWayRefused();
    void rootOwnedByRunUser();
    void missingRunUserNamed();
    void sandboxTagNamesTheRoot();
    void theAgentsRecordsAreNoWorkspace_data();
    void theAgentsRecordsAreNoWorkspace();
    void aPlantedSymlinkLeadsNotToTheRecords();
    void containsTellsWhatIsBeneath_data();
    void containsTellsWhatIsBeneath();

private:
    // The root as the kernel names it (the temp folder may sit behind a
    // symlink): runDirectory() answers in these terms.
    QString canonicalRoot() const { return QFileInfo(m_root).canonicalFilePath(); }

    std::unique_ptr<QTemporaryDir> m_temp;
    QString m_root;
    QString m_outside;
    QString m_runUser; // a user that exists, for runs as root
};

void TestWorkRoot::init()
{
    m_temp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_temp->isValid());
    m_root = m_temp->filePath(QStringLiteral("home/.cloop/work"));
    m_outside = m_temp->filePath(QStringLiteral("outside"));
    QVERIFY(QDir().mkpath(m_outside));
    // As root the workspace goes to the run user, which must exist; nobody
    // stands in for cloop-run except in the ownership test.
    m_runUser = QStringLiteral("nobody");
}

void TestWorkRoot::cleanup()
{
    m_temp.reset();
}

void TestWorkRoot::createsRootPrivate()
{
    const WorkRoot root(m_root, m_runUser);
    const cloop::Status made = root.ensureRoot();
    CLOOP_VERIFY_OK(made);
    QVERIFY(QFileInfo(m_root).isDir());
    QCOMPARE(modeOf(m_root), 0700);
    // Missing parents are private from the start, too.
    QCOMPARE(modeOf(m_temp->filePath(QStringLiteral("home/.cloop"))), 0700);
}

void TestWorkRoot::narrowsWideRoot()
{
    QVERIFY(QDir().mkpath(m_root));
    QVERIFY(::chmod(QFile::encodeName(m_root).constData(), 0755) == 0);
    QVERIFY(WorkRoot(m_root, m_runUser).ensureRoot().ok());
    QCOMPARE(modeOf(m_root), 0700);
}

void TestWorkRoot::refusesBadNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("code");

    QTest::newRow("empty") << QString() << QStringLiteral("workdir_invalid");
    QTest::newRow("only slashes and dots")
        << QStringLiteral("././/") << QStringLiteral("workdir_invalid");
    QTest::newRow("absolute") << QStringLiteral("/etc") << QStringLiteral("workdir_invalid");
    QTest::newRow("dotdot") << QStringLiteral("..") << QStringLiteral("workdir_invalid");
    QTest::newRow("dotdot inside")
        << QStringLiteral("a/../../b") << QStringLiteral("workdir_invalid");
    QTest::newRow("dotdot harmless-looking")
        << QStringLiteral("a/../b") << QStringLiteral("workdir_invalid");
    QTest::newRow("nul") << QStringLiteral("a") + QChar(u'\0') + QStringLiteral("b")
                         << QStringLiteral("workdir_invalid");
    QTest::newRow("too long") << QString(300, QLatin1Char('x'))
                              << QStringLiteral("workdir_invalid");
}

void TestWorkRoot::refusesBadNames()
{
    QFETCH(QString, name);
    QFETCH(QString, code);
    const WorkRoot root(m_root, m_runUser);
    const cloop::Result<QString> dir = root.runDirectory(name);
    QVERIFY(!dir.ok());
    QCOMPARE(dir.error().code, code);
    // The error names what was asked for, so the hub's operator can see it.
    QVERIFY2(dir.error().message.contains(QLatin1Char('"') + name + QLatin1Char('"')),
        qPrintable(dir.error().message));
    // Nothing escaped: the outside folder is as empty as it was.
    QVERIFY(QDir(m_outside).isEmpty());
    QVERIFY(!QFileInfo::exists(m_temp->filePath(QStringLiteral("b"))));
}

void TestWorkRoot::nestedCreation()
{
    const WorkRoot root(m_root, m_runUser);
    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("project-3//./run-41/"));
    CLOOP_VERIFY_OK(dir);
    const QString expected = canonicalRoot() + QStringLiteral("/project-3/run-41");
    QCOMPARE(*dir, expected);
    QVERIFY(QFileInfo(expected).isDir());
    QCOMPARE(modeOf(expected), 0700);
    QCOMPARE(modeOf(QFileInfo(expected).path()), 0700);
}

void TestWorkRoot::existingDirectoryIsReused()
{
    const WorkRoot root(m_root, m_runUser);
    const cloop::Result<QString> first = root.runDirectory(QStringLiteral("p/r"));
    QVERIFY(first.ok());
    QVERIFY(QFile(*first + QStringLiteral("/kept")).open(QIODevice::WriteOnly));
    const cloop::Result<QString> second = root.runDirectory(QStringLiteral("p/r"));
    QVERIFY(second.ok());
    QCOMPARE(*second, *first);
    QVERIFY(QFileInfo::exists(*second + QStringLiteral("/kept")));
}

void TestWorkRoot::symlinkOutsideRefused_data()
{
    QTest::addColumn<QString>("linkTarget"); // "%OUT%" is the outside folder
    QTest::addColumn<QString>("request");

    QTest::newRow("absolute link, as the workspace")
        << QStringLiteral("%OUT%") << QStringLiteral("p/evil");
    QTest::newRow("absolute link, beneath it")
        << QStringLiteral("%OUT%") << QStringLiteral("p/evil/x/y");
    QTest::newRow("relative link climbing out")
        << QStringLiteral("../../../outside") << QStringLiteral("p/evil/x");
    QTest::newRow("relative link to the root's parent")
        << QStringLiteral("../..") << QStringLiteral("p/evil/x");
    QTest::newRow("link to /") << QStringLiteral("/") << QStringLiteral("p/evil/tmp");
    QTest::newRow("link to the root itself") << QStringLiteral("..") << QStringLiteral("p/evil");
}

void TestWorkRoot::symlinkOutsideRefused()
{
    QFETCH(QString, linkTarget);
    QFETCH(QString, request);
    linkTarget.replace(QStringLiteral("%OUT%"), m_outside);

    // An earlier workload planted the link in a workspace it could write.
    const WorkRoot root(m_root, m_runUser);
    QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
    QVERIFY(makeSymlink(linkTarget, m_root + QStringLiteral("/p/evil")));

    const cloop::Result<QString> dir = root.runDirectory(request);
    QVERIFY(!dir.ok());
    QCOMPARE(dir.error().code, QStringLiteral("workdir_outside_root"));
    QVERIFY2(dir.error().message.contains(request), qPrintable(dir.error().message));
    // Nothing was made through the link.
    QVERIFY(QDir(m_outside).isEmpty());
    QVERIFY(!QFileInfo::exists(m_temp->filePath(QStringLiteral("x"))));
}

void TestWorkRoot::symlinkInsideAllowed()
{
    const WorkRoot root(m_root, m_runUser);
    QVERIFY(root.runDirectory(QStringLiteral("shared/cache")).ok());
    QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
    QVERIFY(makeSymlink(QStringLiteral("../shared/cache"), m_root + QStringLiteral("/p/cache")));

    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p/cache/run-1"));
    CLOOP_VERIFY_OK(dir);
    // The answer is the real place, free of symlinks, for the bind mount.
    const QString real = canonicalRoot() + QStringLiteral("/shared/cache/run-1");
    QCOMPARE(*dir, real);
    QVERIFY(QFileInfo(real).isDir());
    QVERIFY(QDir(m_outside).isEmpty());
}

void TestWorkRoot::absoluteSymlinkIntoRootAllowed()
{
    const WorkRoot root(m_root, m_runUser);
    QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
    QVERIFY(makeSymlink(canonicalRoot() + QStringLiteral("/q"), m_root + QStringLiteral("/p/toq")));

    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p/toq/r"));
    CLOOP_VERIFY_OK(dir);
    QCOMPARE(*dir, canonicalRoot() + QStringLiteral("/q/r"));
}

void TestWorkRoot::symlinkLoopRefused()
{
    const WorkRoot root(m_root, m_runUser);
    QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
    QVERIFY(makeSymlink(QStringLiteral("b"), m_root + QStringLiteral("/p/a")));
    QVERIFY(makeSymlink(QStringLiteral("a"), m_root + QStringLiteral("/p/b")));
    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p/a/x"));
    QVERIFY(!dir.ok());
    QVERIFY2(
        dir.error().message.contains(QStringLiteral("symlinks")), qPrintable(dir.error().message));
}

void TestWorkRoot::fileInTheWayRefused()
{
    const WorkRoot root(m_root, m_runUser);
    QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
    QFile file(m_root + QStringLiteral("/p/file"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p/file/x"));
    QVERIFY(!dir.ok());
    QVERIFY2(
        dir.error().message.contains(QStringLiteral("p/file")), qPrintable(dir.error().message));
}

void TestWorkRoot::rootOwnedByRunUser()
{
    if (::geteuid() != 0)
        QSKIP("the workspace is handed to the run user only when the agent runs as root");
    if (QStandardPaths::findExecutable(QStringLiteral("useradd")).isEmpty())
        QSKIP("useradd is not installed; cannot make a throwaway run user");

    const ThrowawayUser user(QStringLiteral("cloop-tst%1").arg(::getpid()));
    if (!user.created())
        QSKIP("useradd could not create a throwaway user");
    const passwd *entry = ::getpwnam(user.name().toLocal8Bit().constData());
    QVERIFY(entry);
    const uid_t uid = entry->pw_uid;
    const gid_t gid = entry->pw_gid;

    const WorkRoot root(m_root, user.name());
    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p/run-7"));
    CLOOP_VERIFY_OK(dir);
    QCOMPARE(ownerOf(*dir), uid);
    QCOMPARE(modeOf(*dir), 0700);
    // Only the workspace changes hands: the levels above stay root's, so a
    // workload cannot rename its way around them.
    QCOMPARE(ownerOf(QFileInfo(*dir).path()), uid_t(0));
    QCOMPARE(ownerOf(m_root), uid_t(0));

    const cloop::Result<QString> ids = root.workloadUser();
    QVERIFY(ids.ok());
    QCOMPARE(*ids, QStringLiteral("%1:%2").arg(uid).arg(gid));
}

void TestWorkRoot::missingRunUserNamed()
{
    const QString missing = QStringLiteral("cloop-no-such-user-%1").arg(::getpid());
    const WorkRoot root(m_root, missing);
    if (::geteuid() != 0) {
        // Not root: no hand-over, so no user is needed.
        QVERIFY(root.runDirectory(QStringLiteral("p")).ok());
        QCOMPARE(*root.workloadUser(), QString());
        return;
    }
    const cloop::Result<QString> dir = root.runDirectory(QStringLiteral("p"));
    QVERIFY(!dir.ok());
    QCOMPARE(dir.error().code, QStringLiteral("run_user_missing"));
    QVERIFY2(dir.error().message.contains(missing), qPrintable(dir.error().message));
    // Refused before anything was made.
    QVERIFY(!QFileInfo::exists(m_root + QStringLiteral("/p")));
    QVERIFY(!root.workloadUser().ok());
}

void TestWorkRoot::sandboxTagNamesTheRoot()
{
    const QString tag = WorkRoot(m_root).sandboxTag();
    QVERIFY2(
        QRegularExpression(QStringLiteral("^[0-9a-f]{8}$")).match(tag).hasMatch(), qPrintable(tag));
    // One root, however it is spelled, is one tag; another root is another.
    QCOMPARE(WorkRoot(m_root + QLatin1String("/")).sandboxTag(), tag);
    QCOMPARE(WorkRoot(m_root + QLatin1String("/runs/..")).sandboxTag(), tag);
    QVERIFY(WorkRoot(m_outside).sandboxTag() != tag);
}

void TestWorkRoot::theAgentsRecordsAreNoWorkspace_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("exists"); // the record is already there
    QTest::newRow("runs record") << QStringLiteral("agent-runs.json") << true;
    QTest::newRow("runs record, not yet written") << QStringLiteral("agent-runs.json") << false;
    QTest::newRow("attachments, not yet written") << QStringLiteral("attachments.json") << false;
    QTest::newRow("inside the name") << QStringLiteral("attachments.json/x") << false;
    QTest::newRow("a temporary sibling") << QStringLiteral("attachments.json.tmp-AbC123") << false;
    QTest::newRow("after a dot component") << QStringLiteral("./agent-runs.json") << false;
}

void TestWorkRoot::theAgentsRecordsAreNoWorkspace()
{
    QFETCH(QString, name);
    QFETCH(bool, exists);
    const WorkRoot root(m_root, m_runUser);
    CLOOP_VERIFY_OK(root.ensureRoot());
    if (exists) {
        QFile record(m_root + QLatin1Char('/') + name);
        QVERIFY(record.open(QIODevice::WriteOnly));
    }

    // A workspace there would be handed to the run user: a workload could
    // then replace what the agent keeps about its runs and devices.
    const cloop::Result<QString> dir = root.runDirectory(name);
    QVERIFY2(!dir.ok(), qPrintable(dir.ok() ? *dir : QString()));
    QCOMPARE(dir.error().code, QStringLiteral("workdir_invalid"));
    QVERIFY2(dir.error().message.contains(QStringLiteral("own records")),
        qPrintable(dir.error().message));
    // Nothing was made in its place.
    QCOMPARE(QFileInfo(m_root + QLatin1Char('/') + name).isDir(), false);
    if (!exists)
        QVERIFY(QDir(m_root)
                    .entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden)
                    .isEmpty());
}

void TestWorkRoot::aPlantedSymlinkLeadsNotToTheRecords()
{
    const WorkRoot root(m_root, m_runUser);
    const cloop::Result<QString> first = root.runDirectory(QStringLiteral("runs/1"));
    CLOOP_VERIFY_OK(first);
    // Given a workload that left a symlink to where a record would go,
    QVERIFY(
        makeSymlink(QStringLiteral("../../attachments.json"), *first + QStringLiteral("/next")));
    // then a later run named through it is refused, and nothing is there.
    const cloop::Result<QString> later = root.runDirectory(QStringLiteral("runs/1/next"));
    QVERIFY2(!later.ok(), qPrintable(later.ok() ? *later : QString()));
    QVERIFY2(later.error().message.contains(QStringLiteral("own records")),
        qPrintable(later.error().message));
    QVERIFY(!QFileInfo::exists(m_root + QStringLiteral("/attachments.json")));
}

void TestWorkRoot::containsTellsWhatIsBeneath_data()
{
    QTest::addColumn<QString>("path"); // relative to the temporary folder
    QTest::addColumn<bool>("inside");
    QTest::newRow("the root") << QStringLiteral("home/.cloop/work") << true;
    QTest::newRow("a file in it") << QStringLiteral("home/.cloop/work/agent.json") << true;
    QTest::newRow("deeper, not there yet")
        << QStringLiteral("home/.cloop/work/a/b/agent.json") << true;
    QTest::newRow("with dot-dot back in")
        << QStringLiteral("home/.cloop/x/../work/agent.json") << true;
    QTest::newRow("through a symlink") << QStringLiteral("alias/agent.json") << true;
    QTest::newRow("beside it (the default)") << QStringLiteral("home/.cloop/agent.json") << false;
    QTest::newRow("a name that only starts alike")
        << QStringLiteral("home/.cloop/work2/agent.json") << false;
    QTest::newRow("elsewhere") << QStringLiteral("outside/agent.json") << false;
}

void TestWorkRoot::containsTellsWhatIsBeneath()
{
    QFETCH(QString, path);
    QFETCH(bool, inside);
    QVERIFY(QDir().mkpath(m_root));
    QVERIFY(makeSymlink(m_root, m_temp->filePath(QStringLiteral("alias"))));
    QCOMPARE(WorkRoot(m_root, m_runUser).contains(m_temp->filePath(path)), inside);
}

QTEST_GUILESS_MAIN(TestWorkRoot)
#include "tst_workroot.moc"
