#include "daemon-agent/runs/runsupervisor.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <thread>

#include <pwd.h>
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
    void aHarnessWithoutAnInstallerIsRefused();
    void aHarnessIsInstalledByTheDevicesOwnCommand();
    void anInstallerThatTakesTooLongIsStopped();
    void theImageIsMadeOffThisThreadWhileRunsWait();
    void aRunCancelledWhileTheImageIsMadeIsRefused();

private:
    // A supervisor of a container agent whose table has "testharness",
    // installed by `script` (a shell script's body) in base/home.
    struct InstallSetup
    {
        QTemporaryDir base;
        QString home;
        std::unique_ptr<RunSupervisor> supervisor;
    };
    static std::unique_ptr<InstallSetup> installSetup(
        const QByteArray &script, std::chrono::seconds timeout = std::chrono::seconds(60));
    static protocol::RunStart installRun(qint64 runId, const QString &harness);
    // The run's finish, waited for; and whether the harness signal came first.
    static std::optional<protocol::RunFinished> waitForFinish(
        RunSupervisor &supervisor, bool *harnessSignalFirst = nullptr);
    protocol::RunFinished startAndCollect(RunSupervisor &supervisor, const protocol::RunStart &run);
};

namespace {

protocol::RunStart plainRun(qint64 runId)
{
    protocol::RunStart run;
    run.runId = runId;
    run.argv = { QStringLiteral("true") };
    run.workdir = QStringLiteral("runs/%1").arg(runId);
    return run;
}

// The finishes reported so far, by run.
QMap<qint64, protocol::RunFinished> finishesIn(const QSignalSpy &reports)
{
    QMap<qint64, protocol::RunFinished> finishes;
    for (const QList<QVariant> &report : reports) {
        const auto message = report.first().value<protocol::ControlMessage>();
        if (const auto *finished = std::get_if<protocol::RunFinished>(&message))
            finishes.insert(finished->runId, *finished);
    }
    return finishes;
}

} // namespace

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

std::unique_ptr<TestRunSupervisor::InstallSetup> TestRunSupervisor::installSetup(
    const QByteArray &script, std::chrono::seconds timeout)
{
    auto setup = std::make_unique<InstallSetup>();
    // A root agent's installer runs as cloop-run, which must reach the
    // script and the home.
    QFile::setPermissions(setup->base.path(),
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
            | QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther
            | QFileDevice::ExeOther);
    const QString installer = setup->base.filePath(QStringLiteral("install-testharness"));
    QFile file(installer);
    if (!file.open(QIODevice::WriteOnly) || file.write("#!/bin/sh\n" + script) <= 0)
        return nullptr;
    file.close();
    file.setPermissions(file.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeGroup
        | QFileDevice::ExeOther | QFileDevice::ReadOther | QFileDevice::ReadGroup);
    const QString tablePath = setup->base.filePath(QStringLiteral("harnesses.json"));
    QFile table(tablePath);
    if (!table.open(QIODevice::WriteOnly))
        return nullptr;
    table.write(
        R"({"testharness": {"vendor": "the test", "command": [")" + installer.toUtf8() + R"("]}})");
    table.close();
    auto harnesses = HarnessTable::withFile(tablePath);
    if (!harnesses)
        return nullptr;
    setup->home = setup->base.filePath(QStringLiteral("home"));
    setup->supervisor
        = std::make_unique<RunSupervisor>(WorkRoot(setup->base.filePath(QStringLiteral("work"))),
            RunPolicy(protocol::AgentCapabilities::Mode::Container, ::geteuid() == 0));
    setup->supervisor->setHarnessInstalls(HarnessInstalls { *harnesses, setup->home, timeout });
    return setup;
}

protocol::RunStart TestRunSupervisor::installRun(qint64 runId, const QString &harness)
{
    protocol::RunStart run;
    run.runId = runId;
    run.workdir = QStringLiteral("runs/%1").arg(runId);
    run.harness = harness;
    return run;
}

std::optional<protocol::RunFinished> TestRunSupervisor::waitForFinish(
    RunSupervisor &supervisor, bool *harnessSignalFirst)
{
    std::optional<protocol::RunFinished> finished;
    bool harnessSeen = false;
    QObject context;
    QObject::connect(&supervisor, &RunSupervisor::harnessInstallEnded, &context,
        [&] { harnessSeen = !finished; });
    QObject::connect(&supervisor, &RunSupervisor::report, &context,
        [&](const protocol::ControlMessage &message) {
            if (const auto *end = std::get_if<protocol::RunFinished>(&message))
                finished = *end;
        });
    if (!QTest::qWaitFor([&] { return finished.has_value(); }, 30'000))
        return std::nullopt;
    if (harnessSignalFirst)
        *harnessSignalFirst = harnessSeen;
    return finished;
}

void TestRunSupervisor::aHarnessWithoutAnInstallerIsRefused()
{
    // Given a device whose table has testharness but not "nosuch",
    auto setup = installSetup("touch \"$HOME/ran\"\n");
    QVERIFY(setup);
    // a hub asking for "nosuch" is refused with the table's names, and
    // nothing ran: no home was made.
    const protocol::RunFinished finished
        = startAndCollect(*setup->supervisor, installRun(21, QStringLiteral("nosuch")));
    QCOMPARE(finished.runId, qint64(21));
    QVERIFY(!finished.exitCode);
    QVERIFY2(finished.error.contains(QStringLiteral("no official installer for this harness")),
        qPrintable(finished.error));
    QVERIFY2(finished.error.contains(QStringLiteral("testharness")), qPrintable(finished.error));
    QCOMPARE(setup->supervisor->activeCount(), 0);
    QVERIFY(!QFileInfo::exists(setup->home));
}

void TestRunSupervisor::aHarnessIsInstalledByTheDevicesOwnCommand()
{
    if (::geteuid() == 0 && !::getpwnam("cloop-run"))
        QSKIP("a root agent installs as cloop-run (scripts/install-deps creates it)");
    // Given an installer that puts a program in the home's ~/.local/bin,
    auto setup = installSetup("echo \"installing $CLOOP_HARNESS in $HOME\"\n"
                              "mkdir -p \"$HOME/.local/bin\"\n"
                              "printf '#!/bin/sh\\necho testharness\\n' > "
                              "\"$HOME/.local/bin/testharness\"\n"
                              "chmod 755 \"$HOME/.local/bin/testharness\"\n");
    QVERIFY(setup);
    // when the hub asks for it, with a command of its own that is ignored,
    protocol::RunStart run = installRun(22, QStringLiteral("testharness"));
    run.argv = { QStringLiteral("touch"), setup->base.filePath(QStringLiteral("hub-command")) };
    setup->supervisor->start(run);
    bool harnessSignalFirst = false;
    const auto finished = waitForFinish(*setup->supervisor, &harnessSignalFirst);
    // then the device's installer ran as the workload user, with the harness
    // home as HOME, and said so before the run's finish.
    QVERIFY(finished);
    QVERIFY2(finished->error.isEmpty(), qPrintable(finished->error));
    QCOMPARE(finished->exitCode, std::optional<int>(0));
    QVERIFY(harnessSignalFirst);
    QVERIFY(finished->endOffset > 0);
    const QFileInfo program(setup->home + QStringLiteral("/.local/bin/testharness"));
    QVERIFY(program.isExecutable());
    if (::geteuid() == 0)
        QCOMPARE(program.ownerId(), ::getpwnam("cloop-run")->pw_uid);
    QVERIFY(!QFileInfo::exists(setup->base.filePath(QStringLiteral("hub-command"))));
}

void TestRunSupervisor::anInstallerThatTakesTooLongIsStopped()
{
    if (::geteuid() == 0 && !::getpwnam("cloop-run"))
        QSKIP("a root agent installs as cloop-run (scripts/install-deps creates it)");
    // Given an installer that never ends and a bound of one second,
    auto setup = installSetup("exec sleep 300\n", std::chrono::seconds(1));
    QVERIFY(setup);
    QElapsedTimer elapsed;
    elapsed.start();
    setup->supervisor->start(installRun(23, QStringLiteral("testharness")));
    // it is stopped, and the run fails saying why.
    const auto finished = waitForFinish(*setup->supervisor);
    QVERIFY(finished);
    QVERIFY(!finished->exitCode);
    QVERIFY2(finished->error.contains(QStringLiteral("did not finish within 1 s")),
        qPrintable(finished->error));
    QVERIFY(elapsed.elapsed() < 20'000);
    QCOMPARE(setup->supervisor->activeCount(), 0);
}

void TestRunSupervisor::theImageIsMadeOffThisThreadWhileRunsWait()
{
    QTemporaryDir base;
    RunSupervisor supervisor(WorkRoot(base.filePath(QStringLiteral("work"))),
        protocol::AgentCapabilities::Mode::Container);
    // A slow import that fails: what matters is where it runs and who waits.
    std::atomic<int> attempts = 0;
    std::atomic<bool> onThisThread = false;
    QThread *const here = QThread::currentThread();
    supervisor.setImagePreparer([&]() -> Status {
        ++attempts;
        onThisThread = QThread::currentThread() == here;
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
        return Error::make(QStringLiteral("sandbox_image"), QStringLiteral("no image here"));
    });
    QSignalSpy reports(&supervisor, &RunSupervisor::report);
    supervisor.start(plainRun(11));
    supervisor.start(plainRun(12));
    supervisor.start(plainRun(11)); // the hub repeating itself
    QVERIFY2(reports.isEmpty(), "a run waiting for the image was answered at once");
    QCOMPARE(supervisor.heldRunIds(), (QList<qint64> { 11, 12 }));

    // This thread turns meanwhile (it carries the device streams).
    int ticks = 0;
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
    ticker.start(50);
    QTRY_COMPARE_WITH_TIMEOUT(finishesIn(reports).size(), 2, 10'000);
    QVERIFY2(ticks >= 8, qPrintable(QString::number(ticks)));
    QVERIFY(!onThisThread);
    QCOMPARE(attempts.load(), 1);
    for (const protocol::RunFinished &finished : finishesIn(reports))
        QVERIFY2(
            finished.error.contains(QStringLiteral("no image here")), qPrintable(finished.error));
    QVERIFY(supervisor.heldRunIds().isEmpty());

    // A failure is not remembered: the next run tries again.
    reports.clear();
    supervisor.start(plainRun(13));
    QTRY_COMPARE_WITH_TIMEOUT(finishesIn(reports).size(), 1, 10'000);
    QCOMPARE(attempts.load(), 2);
}

void TestRunSupervisor::aRunCancelledWhileTheImageIsMadeIsRefused()
{
    QTemporaryDir base;
    RunSupervisor supervisor(WorkRoot(base.filePath(QStringLiteral("work"))),
        protocol::AgentCapabilities::Mode::Container);
    std::atomic<bool> release = false;
    supervisor.setImagePreparer([&]() -> Status {
        while (!release)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return {};
    });
    QSignalSpy reports(&supervisor, &RunSupervisor::report);
    supervisor.start(plainRun(21));
    QVERIFY(reports.isEmpty());
    supervisor.cancel(protocol::RunCancel { 21, QStringLiteral("the user changed their mind") });
    QCOMPARE(finishesIn(reports).size(), 1);
    QVERIFY2(
        finishesIn(reports).value(21).error.contains(QStringLiteral("cancelled before it started")),
        qPrintable(finishesIn(reports).value(21).error));
    QVERIFY(supervisor.heldRunIds().isEmpty());
    release = true;
    // The image made, nothing is launched for the cancelled run.
    QTest::qWait(200);
    QCOMPARE(finishesIn(reports).size(), 1);
    QCOMPARE(supervisor.activeCount(), 0);
}

QTEST_GUILESS_MAIN(TestRunSupervisor)
#include "tst_runsupervisor.moc"
