#include "daemon-agent/runs/runsupervisor.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

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

private:
    protocol::RunFinished startAndCollect(RunSupervisor &supervisor, const protocol::RunStart &run);
};

protocol::RunFinished TestRunSupervisor::startAndCollect(RunSupervisor &supervisor, const protocol::RunStart &run)
{
    QSignalSpy reports(&supervisor, &RunSupervisor::report);
    supervisor.start(run);
    // Refusals are reported before start() returns.
    if (reports.size() != 1)
        return {};
    const auto message = reports.first().first().value<protocol::ControlMessage>();
    const auto *finished = std::get_if<protocol::RunFinished>(&message);
    return finished ? *finished : protocol::RunFinished{};
}

void TestRunSupervisor::escapingWorkdirsAreRefused_data()
{
    QTest::addColumn<QString>("workdir");
    QTest::newRow("parent") << QStringLiteral("../escape");
    QTest::newRow("nested parent") << QStringLiteral("runs/../../escape");
    QTest::newRow("absolute") << QStringLiteral("/etc");
    QTest::newRow("symlink out") << QStringLiteral("link/inside");
}

void TestRunSupervisor::escapingWorkdirsAreRefused()
{
    QFETCH(QString, workdir);
    QTemporaryDir base;
    const QString root = base.filePath(QStringLiteral("work"));
    QVERIFY(QDir().mkpath(root));
    QFile::setPermissions(root, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    // A symlink planted in the root that points out of it.
    QVERIFY(QFile::link(base.path(), root + QLatin1String("/link")));
    RunSupervisor supervisor(WorkRoot(root), protocol::AgentCapabilities::Mode::Container);

    protocol::RunStart run;
    run.runId = 9;
    run.argv = {QStringLiteral("true")};
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
    RunSupervisor supervisor(WorkRoot(base.filePath(QStringLiteral("work"))), protocol::AgentCapabilities::Mode::Container);
    protocol::RunStart run;
    run.runId = 3;
    run.argv = {QStringLiteral("true")};
    run.workdir = QStringLiteral("runs/3");
    run.hostProcess = true;
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(3));
    QVERIFY2(finished.error.contains(QStringLiteral("host-process")), qPrintable(finished.error));
}

void TestRunSupervisor::hostModeHasNoSandbox()
{
    QTemporaryDir base;
    RunSupervisor supervisor(WorkRoot(base.filePath(QStringLiteral("work"))), protocol::AgentCapabilities::Mode::Host);
    protocol::RunStart run;
    run.runId = 4;
    run.argv = {QStringLiteral("true")};
    run.workdir = QStringLiteral("runs/4");
    const protocol::RunFinished finished = startAndCollect(supervisor, run);
    QCOMPARE(finished.runId, qint64(4));
    QVERIFY2(finished.error.contains(QStringLiteral("host mode")), qPrintable(finished.error));
}

QTEST_GUILESS_MAIN(TestRunSupervisor)
#include "tst_runsupervisor.moc"
