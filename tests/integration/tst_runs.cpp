// Integration: runs through the real hub, `cloop run` and `cloop-agent`
// with real podman sandboxes. Skipped, saying why, where podman or
// busybox-static is missing or the test is not root (rootful podman).

#include "daemon-agent/workroot/workroot.h"
#include "support/testrig.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

#include <csignal>
#include <unistd.h>

using namespace cloop::testing;

namespace {
const QString kProject = QStringLiteral("/srv/projects/bench");
} // namespace

class TestRuns final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void exitCodesAndEngineErrorsReachTheCaller();
    void theCeilingHoldsAndCancelFreesIt();
    void outputArrivesCompleteAndInOrder();
    void logSurvivesAHubRestart();
    void outputWhileTheHubIsDownBecomesOneExactGap();
    void aVanishedAgentsRunIsLost();
    void virtualExecutorsNameAnAgentAndItsRuntime();
    void hostProcessRunsGoToHostModeAgentsOnly();
    void aStartThatNeverReachedTheAgentIsLost();

private:
    QJsonObject run(qint64 id);
    qint64 queue(const QStringList &argv);

    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_agent = nullptr;
};

void TestRuns::initTestCase()
{
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        QSKIP(qPrintable(why));
}

void TestRuns::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    const QJsonObject enrolled
        = hub.cliJson(
                 { QStringLiteral("executor"), QStringLiteral("enroll"), QStringLiteral("--name"),
                     QStringLiteral("buildbox"), QStringLiteral("--json") })
              .toObject();
    m_agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), enrolled.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--max-concurrent"), QStringLiteral("1") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(m_agent->start());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(m_agent->describe()));
}

void TestRuns::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_agent = nullptr;
    m_rig.reset();
}

QJsonObject TestRuns::run(qint64 id)
{
    const QJsonArray runs = m_rig->hub().cliItems({ QStringLiteral("run"), QStringLiteral("list"),
        QStringLiteral("--all"), QStringLiteral("--json") });
    for (const QJsonValue &value : runs) {
        if (value.toObject().value(QLatin1String("id")).toInteger() == id)
            return value.toObject();
    }
    return {};
}

qint64 TestRuns::queue(const QStringList &argv)
{
    const CliResult queued
        = m_rig->hub().cli(QStringList { QStringLiteral("run"), QStringLiteral("--project"),
                               kProject, QStringLiteral("--no-wait"), QStringLiteral("--") }
            + argv);
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

void TestRuns::exitCodesAndEngineErrorsReachTheCaller()
{
    HubProcess &hub = m_rig->hub();
    // The workload's own exit code is the command's.
    const CliResult three = hub.cli(
        { QStringLiteral("run"), QStringLiteral("--project"), kProject, QStringLiteral("--"),
            QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo hi; exit 3") });
    CLOOP_COMPARE_EXIT(three, 3);
    const CliResult zero = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(zero, 0);
    // A command the image does not have fails with the engine's own words.
    const CliResult missing = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--"), QStringLiteral("no-such-command") });
    CLOOP_COMPARE_EXIT(missing, 1);
    QVERIFY2(missing.stderrText().contains(QLatin1String("no-such-command")),
        qPrintable(missing.describe()));
    // And the agent is still up for the next run.
    QVERIFY(m_agent->isRunning());
    // A project nobody added is refused before anything is queued.
    const CliResult unknown = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        QStringLiteral("/srv/projects/none"), QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(unknown, 1);
}

void TestRuns::theCeilingHoldsAndCancelFreesIt()
{
    // With a ceiling of one, a second run waits while the first runs.
    const qint64 first = queue({ QStringLiteral("sleep"), QStringLiteral("600") });
    QVERIFY(first > 0);
    QVERIFY(waitUntil([&] {
        return run(first).value(QLatin1String("state")).toString() == QLatin1String("running");
    }));
    const qint64 second
        = queue({ QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("exit 5") });
    QVERIFY(second > 0);
    QTest::qWait(
        1500); // gives a wrong dispatch the time to happen; the check below holds either way
    QCOMPARE(run(second).value(QLatin1String("state")).toString(), QStringLiteral("queued"));

    // Cancelling the first stops it and lets the second through.
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"),
                           QString::number(first) }),
        0);
    QCOMPARE(run(first).value(QLatin1String("state")).toString(), QStringLiteral("cancelled"));
    QVERIFY(waitUntil([&] { return run(second).value(QLatin1String("finished")).toBool(); }));
    QCOMPARE(run(second).value(QLatin1String("exit_code")).toInt(), 5);
    // The cancelled sandbox is gone.
    QVERIFY2(waitUntil([&] {
        return m_agent->stderrText().contains(QStringLiteral("run %1 finished").arg(first));
    }),
        qPrintable(m_agent->describe()));
}

void TestRuns::outputArrivesCompleteAndInOrder()
{
    // 3000 numbered lines on stdout, a marker on stderr: well within what
    // the agent retains, so nothing may be missing, doubled or reordered.
    const QString script
        = QStringLiteral("i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done; "
                         "echo done-on-stderr >&2");
    const CliResult result = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), script });
    CLOOP_COMPARE_EXIT(result, 0);
    QStringList expected;
    for (int i = 0; i < 3000; ++i)
        expected.append(QStringLiteral("line %1").arg(i));
    QCOMPARE(result.stdoutText(), expected.join(QLatin1Char('\n')) + QLatin1Char('\n'));
    QVERIFY2(result.stderrText().contains(QLatin1String("done-on-stderr")),
        qPrintable(result.describe()));
    QVERIFY(!result.stderrText().contains(QLatin1String("dropped")));

    // The stored log replays the same bytes.
    const qint64 id = m_rig->hub()
                          .cliItems({ QStringLiteral("run"), QStringLiteral("list"),
                              QStringLiteral("--all"), QStringLiteral("--json") })
                          .last()
                          .toObject()
                          .value(QLatin1String("id"))
                          .toInteger();
    const CliResult replay
        = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) });
    CLOOP_COMPARE_EXIT(replay, 0);
    QCOMPARE(replay.out, result.out);
}

void TestRuns::logSurvivesAHubRestart()
{
    HubProcess &hub = m_rig->hub();
    // A run that talks for a while; the hub dies in the middle of it.
    const qint64 id = queue({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral(
            "i=1; while [ $i -le 60 ]; do echo \"tick $i\"; i=$((i+1)); sleep 0.1; done") });
    QVERIFY(id > 0);
    QVERIFY(waitUntil([&] {
        return run(id).value(QLatin1String("state")).toString() == QLatin1String("running");
    }));
    QVERIFY(m_agent->waitForStderr(QStringLiteral("starting in")));
    hub.kill();
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("not connected")), qPrintable(m_agent->describe()));
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));

    // The agent comes back, the run finishes, and the log has every line once.
    QVERIFY(waitUntil([&] { return run(id).value(QLatin1String("finished")).toBool(); }));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("succeeded"));
    const CliResult replay
        = hub.cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) });
    CLOOP_COMPARE_EXIT(replay, 0);
    QStringList expected;
    for (int i = 1; i <= 60; ++i)
        expected.append(QStringLiteral("tick %1").arg(i));
    QCOMPARE(replay.stdoutText(), expected.join(QLatin1Char('\n')) + QLatin1Char('\n'));
    QVERIFY(!replay.stderrText().contains(QLatin1String("dropped")));
}

void TestRuns::outputWhileTheHubIsDownBecomesOneExactGap()
{
    HubProcess &hub = m_rig->hub();
    // 5 MiB written while the hub is away: the agent keeps 1 MiB and says
    // exactly how much it dropped.
    const qint64 id = queue({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("while [ ! -e /work/go ]; do sleep 0.1; done; "
                       "head -c 5242880 /dev/zero | tr '\\0' x; echo; echo end") });
    QVERIFY(id > 0);
    QVERIFY(waitUntil([&] {
        return run(id).value(QLatin1String("state")).toString() == QLatin1String("running");
    }));
    hub.kill();
    QVERIFY2(
        m_agent->waitForStderr(QStringLiteral("not connected")), qPrintable(m_agent->describe()));
    // Release the workload only now, through its run directory.
    QFile go(m_agent->home() + QStringLiteral("/.cloop/work/runs/%1/go").arg(id));
    QVERIFY(go.open(QIODevice::WriteOnly));
    go.close();
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("run %1 finished").arg(id)),
        qPrintable(m_agent->describe()));
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    QVERIFY(waitUntil([&] { return run(id).value(QLatin1String("finished")).toBool(); }));

    const CliResult replay
        = hub.cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) });
    CLOOP_COMPARE_EXIT(replay, 0);
    // One note for one gap, and what it says plus what arrived is everything.
    const QString notes = replay.stderrText();
    QCOMPARE(notes.count(QLatin1String("bytes dropped: more than the agent retains")), 1);
    const qint64 lost
        = notes.section(QLatin1String("[cloop: "), 1).section(QLatin1Char(' '), 0, 0).toLongLong();
    QVERIFY2(lost > 0, qPrintable(notes));
    QCOMPARE(qint64(replay.out.size()) + lost, qint64(5242880 + 1 + 4));
    QVERIFY(replay.out.endsWith("x\nend\n"));
}

void TestRuns::aVanishedAgentsRunIsLost()
{
    HubProcess &hub = m_rig->hub();
    // A hub that gives up on an absent executor after 2 s.
    hub.kill();
    hub.setServeArguments({ QStringLiteral("--lost-after"), QStringLiteral("2s") });
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    QVERIFY(waitUntil([&] {
        return m_agent->stderrCount(QStringLiteral("connected to the hub as executor")) >= 2;
    }));

    const qint64 id = queue({ QStringLiteral("sleep"), QStringLiteral("600") });
    QVERIFY(waitUntil([&] {
        return run(id).value(QLatin1String("state")).toString() == QLatin1String("running");
    }));
    // The agent dies without a word.
    QVERIFY(m_agent->kill());
    QVERIFY(waitUntil([&] { return run(id).value(QLatin1String("finished")).toBool(); }));
    const QJsonObject lost = run(id);
    QCOMPARE(lost.value(QLatin1String("state")).toString(), QStringLiteral("lost"));
    QVERIFY2(lost.value(QLatin1String("error")).toString().contains(QLatin1String("executor")),
        qPrintable(QString::fromUtf8(QJsonDocument(lost).toJson())));
    // Its sandbox outlived it; the agent's next process removes it, and only it.
    const QString workRoot = m_agent->home() + QLatin1String("/.cloop/work");
    const QString container = QStringLiteral("cloop-run-%1-%2")
                                  .arg(cloop::agent::WorkRoot(workRoot).sandboxTag())
                                  .arg(id);
    const auto containerExists = [&] {
        return QProcess::execute(QStringLiteral("podman"),
                   { QStringLiteral("container"), QStringLiteral("exists"), container })
            == 0;
    };
    QVERIFY(containerExists());
    ForwarderProcess &again
        = m_rig->addForwarder({}, m_agent->home(), ForwarderProcess::Program::Agent);
    QVERIFY(again.start());
    QVERIFY2(again.waitForStderr(QStringLiteral("left by a previous agent process")),
        qPrintable(again.describe()));
    QVERIFY(!containerExists());
    QVERIFY2(again.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(again.describe()));
    QCOMPARE(run(id).value(QLatin1String("state")).toString(), QStringLiteral("lost"));
}

void TestRuns::aStartThatNeverReachedTheAgentIsLost()
{
    // The agent freezes, so the run's start waits unread in its socket, and
    // then dies: its next process never heard of the run.
    QVERIFY(::kill(static_cast<pid_t>(m_agent->processId()), SIGSTOP) == 0);
    const qint64 id = queue({ QStringLiteral("true") });
    QVERIFY(id > 0);
    QVERIFY(waitUntil([&] {
        return run(id).value(QLatin1String("state")).toString() == QLatin1String("dispatched");
    }));
    QVERIFY(m_agent->kill());
    QVERIFY(m_agent->waitForExit());
    ForwarderProcess &again
        = m_rig->addForwarder({}, m_agent->home(), ForwarderProcess::Program::Agent);
    QVERIFY(again.start());
    QVERIFY2(again.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(again.describe()));

    // Its list of runs does not have it: the hub stops waiting at once, well
    // before any grace period, and says why.
    QVERIFY(waitUntil([&] { return run(id).value(QLatin1String("finished")).toBool(); }));
    const QJsonObject lost = run(id);
    QCOMPARE(lost.value(QLatin1String("state")).toString(), QStringLiteral("lost"));
    QVERIFY2(
        lost.value(QLatin1String("error")).toString().contains(QLatin1String("does not have it")),
        qPrintable(QString::fromUtf8(QJsonDocument(lost).toJson())));
    // The slot it held is free again, and a run started now is kept.
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
                           kProject, QStringLiteral("--"), QStringLiteral("sh"),
                           QStringLiteral("-c"), QStringLiteral("exit 4") }),
        4);
}

void TestRuns::virtualExecutorsNameAnAgentAndItsRuntime()
{
    HubProcess &hub = m_rig->hub();
    const QJsonArray executors = hub.cliItems(
        { QStringLiteral("executor"), QStringLiteral("list"), QStringLiteral("--json") });
    QCOMPARE(executors.size(), 1);
    const QString agentId
        = QString::number(executors.first().toObject().value(QLatin1String("id")).toInteger());
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("executor"), QStringLiteral("virtual"), QStringLiteral("create"),
            QStringLiteral("ci-small"), QStringLiteral("--agent"), agentId,
            QStringLiteral("--runtime"), QStringLiteral("runc") }),
        0);
    const CliResult ran = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--virtual-executor"), QStringLiteral("ci-small"), QStringLiteral("--"),
        QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("exit 6") });
    CLOOP_COMPARE_EXIT(ran, 6);
    const QJsonObject last = hub.cliItems({ QStringLiteral("run"), QStringLiteral("list"),
                                              QStringLiteral("--all"), QStringLiteral("--json") })
                                 .last()
                                 .toObject();
    QCOMPARE(last.value(QLatin1String("virtual_executor")).toString(), QStringLiteral("ci-small"));
    QCOMPARE(last.value(QLatin1String("runtime")).toString(), QStringLiteral("runc"));
    QCOMPARE(QString::number(last.value(QLatin1String("executor_id")).toInteger()), agentId);

    // An unknown name is refused before anything is queued.
    const CliResult unknown = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--virtual-executor"), QStringLiteral("nowhere"),
        QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(unknown, 1);
    QVERIFY2(
        unknown.stderrText().contains(QLatin1String("nowhere")), qPrintable(unknown.describe()));
}

void TestRuns::hostProcessRunsGoToHostModeAgentsOnly()
{
    HubProcess &hub = m_rig->hub();
    // A second agent, started by its operator in host mode.
    const QJsonObject enrolled
        = hub.cliJson(
                 { QStringLiteral("executor"), QStringLiteral("enroll"), QStringLiteral("--name"),
                     QStringLiteral("hostbox"), QStringLiteral("--json") })
              .toObject();
    ForwarderProcess &hostAgent = m_rig->addForwarder(
        { QStringLiteral("--bundle"), enrolled.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--host-mode") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(hostAgent.start());
    QVERIFY2(hostAgent.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(hostAgent.describe()));
    const qint64 hostId = enrolled.value(QLatin1String("executor"))
                              .toObject()
                              .value(QLatin1String("id"))
                              .toInteger();

    // A host-process run lands there, runs in its run directory as the
    // unprivileged run user, and its exit code comes back.
    const CliResult hostRun = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--host-process"), QStringLiteral("--"), QStringLiteral("sh"),
        QStringLiteral("-c"), QStringLiteral("id -u; pwd; exit 2") });
    CLOOP_COMPARE_EXIT(hostRun, 2);
    const QStringList lines = hostRun.stdoutText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines.at(0) != QLatin1String("0"),
        "a root agent runs host-process workloads as the run user");
    QVERIFY2(lines.at(1).startsWith(hostAgent.home() + QLatin1String("/.cloop/work/runs/")),
        qPrintable(lines.at(1)));
    const QJsonObject hostRecord
        = hub.cliItems({ QStringLiteral("run"), QStringLiteral("list"), QStringLiteral("--all"),
                           QStringLiteral("--json") })
              .last()
              .toObject();
    QCOMPARE(hostRecord.value(QLatin1String("executor_id")).toInteger(), hostId);

    // A sandboxed run never goes to the host-mode agent.
    const CliResult sandboxed = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--"), QStringLiteral("true") });
    CLOOP_COMPARE_EXIT(sandboxed, 0);
    const QJsonObject sandboxedRecord
        = hub.cliItems({ QStringLiteral("run"), QStringLiteral("list"), QStringLiteral("--all"),
                           QStringLiteral("--json") })
              .last()
              .toObject();
    QVERIFY(sandboxedRecord.value(QLatin1String("executor_id")).toInteger() != hostId);
}

QTEST_GUILESS_MAIN(TestRuns)
#include "tst_runs.moc"
