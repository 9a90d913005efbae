#include "daemon-agent/runs/runsupervisor.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace cloop;
using namespace cloop::agent;

// What the agent refuses of a run before any sandbox starts: the hub is
// not trusted with this machine's files.
class TestRunSupervisor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void escapingWorkdirsAreRefused_data();
    void escapingWorkdirsAreRefused();
    void hostProcessRunsAreRefusedInContainerMode();
    void hostModeHasNoSandbox();
    void hubChoicesBeyondTheConfigurationAreRefused_data();
    void hubChoicesBeyondTheConfigurationAreRefused();
    void aRootHostRunWithoutTheRunUserIsRefused();

private:
    protocol::RunFinished startAndCollect(RunSupervisor &supervisor, const protocol::RunStart &run);
};

protocol::RunFinished TestRunSupervisor::startAndCollect(
    RunSupervisor &supervisor, const protocol::RunStart &run)
{
    QSignalSpy reports(&supervisor, &RunSupervisor::report);
    supervisor.start(run);
    // Refusals are reported before start() returns.
    if (reports.size() != 1)
        return {};
    const auto message = reports.first().first().value<protocol::ControlMessage>();
    const auto *finished = std::get_if<protocol::RunFinished>(&message);
    return finished ? *finished : protocol::RunFinished {};
}

void TestRunSupervisor::escapingWorkdirsAreRefused_data()
{
    QTest::addColumn<QString>("workdir");
    QTest::newRow("parent") << QStringLiteral("../escape");
    QTest::newRow("nested parent") << QStringLiteral("runs/../../escape");
    QTest::newRow("absolute") << QStringLiteral("/etc");
    QTest::newRow("symlink out") << QStringLiteral("link/inside");
    QTest::newRow("the agent's run records") << QStringLiteral("agent-runs.json");
}

void TestRunSupervisor::escapingWorkdirsAreRefused()
{
    QFETCH(QString, workdir);
    QTemporaryDir base;
    const QString root = base.filePath(QStringLiteral("work"));
    QVERIFY(QDir().mkpath(root));
    QFile::setPermissions(
        root, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    // A symlink planted in the root that points out of it.
    QVERIFY(QFile::link(base.path(), root + QLatin1String("/link")));
    RunSupervisor supervisor(WorkRoot(root), protocol::AgentCapabilities::Mode::Container);

    protocol::RunStart run;
    run.runId = 9;
    run.argv = { QStringLiteral("true") };
    run.workdir = workdir;
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(9));
    QVERIFY(!finished.exitCode);
    QVERIFY2(!finished.error.isEmpty(), "a refusal says why");
    QCOMPARE(supervisor.activeCount(), 0);
    // Nothing was created outside the root.
    QVERIFY(!QFile::exists(base.filePath(QStringLiteral("escape"))));
    QVERIFY(!QFile::exists(base.filePath(QStringLiteral("inside"))));
}

void TestRunSupervisor::hostProcessRunsAreRefusedInContainerMode()
{
    QTemporaryDir base;
    RunSupervisor supervisor(WorkRoot(base.filePath(QStringLiteral("work"))),
        protocol::AgentCapabilities::Mode::Container);
    protocol::RunStart run;
    run.runId = 3;
    run.argv = { QStringLiteral("true") };
    run.workdir = QStringLiteral("runs/3");
    run.hostProcess = true;
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(3));
    QVERIFY2(finished.error.contains(QStringLiteral("host-process")), qPrintable(finished.error));
}

void TestRunSupervisor::hostModeHasNoSandbox()
{
    QTemporaryDir base;
    RunSupervisor supervisor(
        WorkRoot(base.filePath(QStringLiteral("work"))), protocol::AgentCapabilities::Mode::Host);
    protocol::RunStart run;
    run.runId = 4;
    run.argv = { QStringLiteral("true") };
    run.workdir = QStringLiteral("runs/4");
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(4));
    QVERIFY2(finished.error.contains(QStringLiteral("host mode")), qPrintable(finished.error));
}

void TestRunSupervisor::hubChoicesBeyondTheConfigurationAreRefused_data()
{
    QTest::addColumn<QString>("image");
    QTest::addColumn<QString>("runtime");
    QTest::addColumn<bool>("hostProcess");
    QTest::addColumn<bool>("agentIsRoot");
    QTest::addColumn<QString>("refusal");
    QTest::newRow("an image from a host folder") << QStringLiteral("dir:/") << QString() << false
                                                 << true << QStringLiteral("image reference");
    QTest::newRow("an image from a relative host path") << QStringLiteral(
        "oci-archive:x") << QString() << false << true << QStringLiteral("transport");
    QTest::newRow("a runtime binary by path")
        << QString() << QStringLiteral("/bin/sh") << false << true << QStringLiteral("runtime");
    QTest::newRow("a host run of a non-root host agent")
        << QString() << QString() << true << false << QStringLiteral("does not run as root");
}

void TestRunSupervisor::hubChoicesBeyondTheConfigurationAreRefused()
{
    QFETCH(QString, image);
    QFETCH(QString, runtime);
    QFETCH(bool, hostProcess);
    QFETCH(bool, agentIsRoot);
    QFETCH(QString, refusal);
    QTemporaryDir base;
    const QString root = base.filePath(QStringLiteral("work"));
    RunSupervisor supervisor(WorkRoot(root),
        RunPolicy(hostProcess ? protocol::AgentCapabilities::Mode::Host
                              : protocol::AgentCapabilities::Mode::Container,
            agentIsRoot));
    protocol::RunStart run;
    run.runId = 11;
    run.argv = { QStringLiteral("touch"), base.filePath(QStringLiteral("ran")) };
    run.workdir = QStringLiteral("runs/11");
    run.image = image;
    run.runtime = runtime;
    run.hostProcess = hostProcess;
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(11));
    QVERIFY(!finished.exitCode);
    QVERIFY2(finished.error.contains(refusal), qPrintable(finished.error));
    QCOMPARE(supervisor.activeCount(), 0);
    // Refused before anything: no workspace, no workload.
    QVERIFY(!QFileInfo::exists(root + QStringLiteral("/runs/11")));
    QVERIFY(!QFileInfo::exists(base.filePath(QStringLiteral("ran"))));
}

void TestRunSupervisor::aRootHostRunWithoutTheRunUserIsRefused()
{
    if (::geteuid() != 0)
        QSKIP("a root agent's case");
    // Given a root agent in host mode whose run user does not exist,
    QTemporaryDir base;
    const QString root = base.filePath(QStringLiteral("work"));
    RunSupervisor supervisor(WorkRoot(root, QStringLiteral("cloop-no-such-user")),
        RunPolicy(protocol::AgentCapabilities::Mode::Host, true));
    protocol::RunStart run;
    run.runId = 12;
    run.argv = { QStringLiteral("touch"), base.filePath(QStringLiteral("ran")) };
    run.workdir = QStringLiteral("runs/12");
    run.hostProcess = true;
    // then the run is refused naming the user: it never runs as root instead.
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(12));
    QVERIFY2(
        finished.error.contains(QStringLiteral("cloop-no-such-user")), qPrintable(finished.error));
    QCOMPARE(supervisor.activeCount(), 0);
    QVERIFY(!QFileInfo::exists(base.filePath(QStringLiteral("ran"))));
}

QTEST_GUILESS_MAIN(TestRunSupervisor)
#include "tst_runsupervisor.moc"
