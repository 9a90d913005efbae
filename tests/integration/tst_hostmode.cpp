// Integration, as root: what a host-mode executor agent lets a host-process
// workload reach. The real hub and cloop-agent on loopback; no sandbox is
// involved. An agent that is not root refuses host-process runs (its
// workload could only run as the agent's own user, who can read the
// agent's credential); a root agent runs them as the unprivileged run user
// cloop-run, which cannot read the agent's credential or state files.
// Skipped, saying why, without root or without the run user.

#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cloop::testing;

namespace {

const QString kProject = QStringLiteral("/srv/projects/host");

struct Account
{
    uid_t uid = 0;
    gid_t gid = 0;
};

std::optional<Account> accountOf(const char *name)
{
    const passwd *entry = ::getpwnam(name);
    if (!entry)
        return std::nullopt;
    return Account { entry->pw_uid, entry->pw_gid };
}

struct FileFacts
{
    int mode = -1;
    uid_t owner = uid_t(-1);
};

FileFacts factsOf(const QString &path)
{
    struct stat st
    {
    };
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return {};
    return FileFacts { int(st.st_mode & 07777), st.st_uid };
}

bool writeFile(const QString &path, const QByteArray &bytes, QFileDevice::Permissions permissions)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(bytes) == bytes.size() && file.setPermissions(permissions);
}

bool chown(const QString &path, const Account &account)
{
    return ::chown(QFile::encodeName(path).constData(), account.uid, account.gid) == 0;
}

} // namespace

class TestHostMode final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aHostModeAgentNotRunningAsRootRefusesHostProcessRuns();
    void aRootHostModeWorkloadRunsAsTheRunUserAndReadsNoneOfTheAgentsFiles();

private:
    // A new executor's bundle, written to `path` (0600).
    bool writeBundle(const QString &path);
    CliResult hostRun(const QString &script);

    std::unique_ptr<TestRig> m_rig;
};

void TestHostMode::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root: the agents run as other users");
}

void TestHostMode::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
}

void TestHostMode::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

bool TestHostMode::writeBundle(const QString &path)
{
    const QJsonObject enrolled
        = m_rig->hub()
              .cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                  QStringLiteral("--name"), QStringLiteral("hostbox"), QStringLiteral("--json") })
              .toObject();
    const QString bundle = enrolled.value(QLatin1String("bundle")).toString();
    return !bundle.isEmpty()
        && writeFile(
            path, bundle.toLatin1() + '\n', QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

CliResult TestHostMode::hostRun(const QString &script)
{
    return m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--host-process"), QStringLiteral("--"), QStringLiteral("sh"),
        QStringLiteral("-c"), script });
}

void TestHostMode::aHostModeAgentNotRunningAsRootRefusesHostProcessRuns()
{
    const std::optional<Account> nobody = accountOf("nobody");
    if (!nobody)
        QSKIP("no user nobody on this machine");
    // Given an agent its operator started in host mode as nobody, with a
    // home of its own,
    QTemporaryDir home;
    QVERIFY(home.isValid());
    QVERIFY(chown(home.path(), *nobody));
    const QString bundle = home.filePath(QStringLiteral("bundle"));
    QVERIFY(writeBundle(bundle));
    QVERIFY(chown(bundle, *nobody));
    ForwarderProcess &agent = m_rig->addForwarder(
        { QStringLiteral("--token-file"), bundle, QStringLiteral("--host-mode") }, home.path(),
        ForwarderProcess::Program::Agent);
    agent.runAs(nobody->uid, nobody->gid);
    QVERIFY(agent.start());
    QVERIFY2(agent.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(agent.describe()));
    // (it says at start what it will refuse, and its credential is its own)
    QVERIFY2(agent.stderrText().contains(
                 QStringLiteral("host mode as uid %1 (not root)").arg(nobody->uid)),
        qPrintable(agent.describe()));
    const QString credential = home.filePath(QStringLiteral(".cloop/agent.json"));
    QCOMPARE(factsOf(credential).mode, 0600);
    QCOMPARE(factsOf(credential).owner, nobody->uid);

    // when a host-process run reaches it,
    const QString marker = home.filePath(QStringLiteral("ran"));
    const CliResult run = hostRun(QStringLiteral("touch %1; cat %2").arg(marker, credential));

    // then it is refused, saying why, and the workload never ran.
    CLOOP_COMPARE_EXIT(run, 1);
    QVERIFY2(run.stderrText().contains(QLatin1String("does not run as root")),
        qPrintable(run.describe()));
    QVERIFY2(run.stderrText().contains(QLatin1String("credential")), qPrintable(run.describe()));
    QVERIFY(!QFile::exists(marker));
    QVERIFY2(!run.stdoutText().contains(QLatin1String("cec_")), qPrintable(run.describe()));
    QVERIFY(agent.isRunning());
}

void TestHostMode::aRootHostModeWorkloadRunsAsTheRunUserAndReadsNoneOfTheAgentsFiles()
{
    const std::optional<Account> runUser = accountOf("cloop-run");
    if (!runUser)
        QSKIP("the run user cloop-run is missing (scripts/install-deps creates it)");
    // Given a root agent in host mode whose credential and work root sit in
    // a folder anyone may enter, so only their own modes guard them, and a
    // file there that anyone may read, to show the workload can read what
    // is not guarded,
    QTemporaryDir base;
    QVERIFY(base.isValid());
    QVERIFY(QFile::setPermissions(base.path(),
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
            | QFileDevice::ReadOther | QFileDevice::ExeOther | QFileDevice::ReadGroup
            | QFileDevice::ExeGroup));
    const QString credential = base.filePath(QStringLiteral("agent.json"));
    const QString workRoot = base.filePath(QStringLiteral("work"));
    const QString bundle = base.filePath(QStringLiteral("bundle"));
    const QString readable = base.filePath(QStringLiteral("readable.txt"));
    QVERIFY(writeBundle(bundle));
    QVERIFY(writeFile(readable, "control-ok\n",
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup
            | QFileDevice::ReadOther));
    ForwarderProcess &agent = m_rig->addForwarder(
        { QStringLiteral("--token-file"), bundle, QStringLiteral("--credential-file"), credential,
            QStringLiteral("--work-root"), workRoot, QStringLiteral("--host-mode") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(agent.start());
    QVERIFY2(agent.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(agent.describe()));
    QCOMPARE(factsOf(credential).mode, 0600);
    QCOMPARE(factsOf(credential).owner, uid_t(0));
    QFile saved(credential);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QString secret = QJsonDocument::fromJson(saved.readAll())
                               .object()
                               .value(QLatin1String("credential"))
                               .toString();
    QVERIFY(secret.startsWith(QLatin1String("cec_")));

    // when its workload tries every file of the agent's,
    const QString script
        = QStringLiteral("id -un; cat %1; "
                         "cat %2 && echo LEAK-credential; "
                         "cat %3/agent-runs.json && echo LEAK-run-state; "
                         "ls %3 && echo LEAK-work-root; "
                         "ls .. && echo LEAK-workspaces; "
                         "ls -l /proc/$$/fd; "
                         "grep -l cec_ /proc/[0-9]*/environ 2>/dev/null && echo LEAK-environ; "
                         "exit 0")
              .arg(readable, credential, workRoot);
    const CliResult run = hostRun(script);

    // then it ran as cloop-run, could read the unguarded file and none of
    // the agent's: not its credential, run state or work root, nor any
    // descriptor the agent holds.
    CLOOP_COMPARE_EXIT(run, 0);
    const QString out = run.stdoutText();
    QVERIFY2(out.startsWith(QLatin1String("cloop-run\n")), qPrintable(run.describe()));
    QVERIFY2(out.contains(QLatin1String("control-ok")), qPrintable(run.describe()));
    QVERIFY2(!out.contains(QLatin1String("LEAK")), qPrintable(run.describe()));
    QVERIFY2(!out.contains(secret), qPrintable(run.describe()));
    // Its shell holds stdin, stdout and stderr, and nothing of the agent's
    // (ls -l lists them as "… N -> TARGET").
    int descriptors = 0;
    for (const QString &line : out.split(QLatin1Char('\n'))) {
        const qsizetype arrow = line.indexOf(QLatin1String(" -> "));
        if (arrow < 0)
            continue;
        ++descriptors;
        const QString number = line.left(arrow).section(QLatin1Char(' '), -1);
        QVERIFY2(number.toInt() <= 2, qPrintable(run.describe()));
    }
    QCOMPARE(descriptors, 3);
    // The agent's records exist, so the denial is the files' own modes.
    QCOMPARE(factsOf(workRoot + QLatin1String("/agent-runs.json")).mode, 0600);
    QCOMPARE(factsOf(workRoot).mode, 0700);
}

QTEST_GUILESS_MAIN(TestHostMode)
#include "tst_hostmode.moc"
