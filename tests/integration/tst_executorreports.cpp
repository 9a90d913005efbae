// Integration: an executor reports only on runs dispatched to it. A test
// client holding a real executor's credential (enrolled by a real agent)
// speaks the tunnel protocol to a real hub and claims runs that are not its
// own: one queued for it but never dispatched, and one another agent runs.
// Host-mode agents and host-process runs, so no container engine is needed.

#include "common/net/hubtls.h"
#include "common/net/spkipin.h"
#include "common/protocol/logrecord.h"
#include "common/tunnel/tunnelclient.h"
#include "support/testrig.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;

namespace {

const QString kProject = QStringLiteral("/srv/projects/bench");

QJsonObject readJson(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class TestExecutorReports final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aRunQueuedForAnExecutorIsNotItsToFinish();
    void anotherExecutorsRunIsNotItsToReportOn();
    void refusalsAreLoggedAFewAtATime();

private:
    // `cloop executor enroll NAME`, redeemed by a real host-mode agent; the
    // agent is left running when `keep`, else stopped, its credential kept.
    ForwarderProcess *enrollAgent(const QString &name, bool keep);
    // The claimant: a tunnel client with the credential of the agent
    // enrolled as "mallory", saying it is a host-mode agent.
    bool connectClaimant();
    qint64 queue(const QStringList &arguments);
    QString state(qint64 runId);
    // The claimant opens a run-log channel for `runId` and writes output to
    // it; true when the hub refused the channel.
    bool logChannelRefused(qint64 runId);

    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_honest = nullptr;
    QString m_malloryCredential;
    std::unique_ptr<tunnel::TunnelClient> m_claimant;
};

void TestExecutorReports::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    m_honest = enrollAgent(QStringLiteral("honest"), true);
    QVERIFY(m_honest);
    ForwarderProcess *mallory = enrollAgent(QStringLiteral("mallory"), false);
    QVERIFY(mallory);
    m_malloryCredential = mallory->home() + QLatin1String("/.cloop/agent.json");
    QVERIFY(connectClaimant());
}

void TestExecutorReports::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_claimant.reset();
    m_honest = nullptr;
    m_rig.reset();
}

ForwarderProcess *TestExecutorReports::enrollAgent(const QString &name, bool keep)
{
    const QJsonObject enrolled
        = m_rig->hub()
              .cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                  QStringLiteral("--name"), name, QStringLiteral("--json") })
              .toObject();
    ForwarderProcess &agent = m_rig->addForwarder(
        { QStringLiteral("--bundle"), enrolled.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--host-mode") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    if (!agent.start()
        || !agent.waitForStderr(QStringLiteral("connected to the hub as executor"))) {
        qWarning().noquote() << agent.describe();
        return nullptr;
    }
    if (!keep && (!agent.terminate() || !agent.waitForExit()))
        return nullptr;
    return &agent;
}

bool TestExecutorReports::connectClaimant()
{
    const QJsonObject saved = readJson(m_malloryCredential);
    auto pins = net::PinSet::parse(m_rig->hub().pin());
    if (!pins || saved.value(QLatin1String("credential")).toString().isEmpty())
        return false;
    // What mallory's own agent reported: host mode, one run at a time.
    QJsonObject capabilities;
    for (const QJsonValue &executor : m_rig->hub().cliItems(
             { QStringLiteral("executor"), QStringLiteral("list"), QStringLiteral("--json") })) {
        if (executor.toObject().value(QLatin1String("name")).toString() == QLatin1String("mallory"))
            capabilities = executor.toObject().value(QLatin1String("capabilities")).toObject();
    }
    if (capabilities.value(QLatin1String("mode")).toString() != QLatin1String("host"))
        return false;
    tunnel::TunnelClientOptions options;
    options.hubUrls = { QUrl(m_rig->hub().localAccess().value(QLatin1String("url")).toString()) };
    options.endpointPath = QStringLiteral("/api/executors/connect");
    options.role = protocol::PeerRole::Executor;
    options.trust = net::HubTrust(*pins, {});
    options.capabilities = capabilities;
    m_claimant = std::make_unique<tunnel::TunnelClient>(options);
    m_claimant->setCredential(saved.value(QLatin1String("credential")).toString());
    connect(m_claimant.get(), &tunnel::TunnelClient::disconnected, this, [](const QString &reason) {
        qWarning().noquote() << "the claimant is not connected:" << reason;
    });
    QSignalSpy ready(m_claimant.get(), &tunnel::TunnelClient::ready);
    m_claimant->start();
    return ready.wait(kLongWaitMs);
}

qint64 TestExecutorReports::queue(const QStringList &arguments)
{
    const CliResult queued
        = m_rig->hub().cli(QStringList { QStringLiteral("run"), QStringLiteral("--project"),
                               kProject, QStringLiteral("--no-wait") }
            + arguments);
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

QString TestExecutorReports::state(qint64 runId)
{
    return m_rig->hub()
        .cliJson({ QStringLiteral("run"), QStringLiteral("show"), QString::number(runId),
            QStringLiteral("--json") })
        .toObject()
        .value(QLatin1String("state"))
        .toString();
}

bool TestExecutorReports::logChannelRefused(qint64 runId)
{
    auto channel = m_claimant->connection()->channels()->openChannel(
        QJsonObject { { QStringLiteral("kind"), QStringLiteral("run-log") },
            { QStringLiteral("run_id"), runId } });
    if (!channel)
        return false;
    QSignalSpy closed(*channel, &tunnel::Channel::closed);
    (*channel)->write(protocol::encodeLogRecord(protocol::LogRecord::data(
        protocol::LogRecordKind::Stdout, 0, QByteArrayLiteral("forged output\n"))));
    return closed.wait(kLongWaitMs)
        && closed.first().at(1).toString().contains(
            QStringLiteral("no run %1 of this executor").arg(runId));
}

void TestExecutorReports::aRunQueuedForAnExecutorIsNotItsToFinish()
{
    // Given a sandboxed run queued for mallory, which reports host mode only:
    // the run names mallory but waits, never dispatched …
    const qint64 id = queue({ QStringLiteral("--executor"), QStringLiteral("mallory"),
        QStringLiteral("--"), QStringLiteral("true") });
    QVERIFY(id > 0);
    QTest::qWait(500); // a wrong dispatch would have happened by now; the checks hold either way
    QCOMPARE(state(id), QStringLiteral("queued"));

    // … when mallory says it started and finished with exit 0, lists it as
    // held and sends output for it …
    tunnel::TunnelConnection *session = m_claimant->connection();
    session->sendControl(protocol::RunStarted { id });
    session->sendControl(protocol::RunFinished { id, 0, QString(), 0 });
    session->sendControl(protocol::RunsHeld { { id }, {} });
    QVERIFY(logChannelRefused(id));

    // … the hub refuses each, says so in its log, and the run stays queued.
    HubProcess &hub = m_rig->hub();
    QVERIFY2(waitUntil([&] {
        return hub.log().contains(
            QStringLiteral("run.finished for run %1 refused: it is queued, not dispatched")
                .arg(id));
    }),
        qPrintable(hub.log()));
    QVERIFY(hub.log().contains(QStringLiteral("run.started for run %1 refused").arg(id)));
    QVERIFY(hub.log().contains(
        QStringLiteral("runs.held names runs that were never dispatched to it: %1").arg(id)));
    QVERIFY(hub.log().contains(QStringLiteral("run output for run %1 refused").arg(id)));
    QCOMPARE(state(id), QStringLiteral("queued"));
    const QJsonObject shown = hub.cliJson({ QStringLiteral("run"), QStringLiteral("show"),
                                              QString::number(id), QStringLiteral("--json") })
                                  .toObject();
    QVERIFY(shown.value(QLatin1String("exit_code")).isNull());
}

void TestExecutorReports::anotherExecutorsRunIsNotItsToReportOn()
{
    // Given a run the honest agent runs …
    const qint64 id = queue({ QStringLiteral("--executor"), QStringLiteral("honest"),
        QStringLiteral("--host-process"), QStringLiteral("--"), QStringLiteral("sh"),
        QStringLiteral("-c"), QStringLiteral("echo honest output; sleep 60") });
    QVERIFY(id > 0);
    QVERIFY(waitUntil([&] { return state(id) == QLatin1String("running"); }));
    HubProcess &hub = m_rig->hub();
    QVERIFY(waitUntil([&] {
        return hub.cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) })
                   .stdoutText()
            == QLatin1String("honest output\n");
    }));

    // … when mallory says it finished it and sends output of its own …
    tunnel::TunnelConnection *session = m_claimant->connection();
    session->sendControl(protocol::RunFinished { id, 0, QString(), 0 });
    session->sendControl(protocol::RunsHeld { { id }, {} });
    QVERIFY(logChannelRefused(id));

    // … the run is still running on its own agent, its log is its own.
    QVERIFY2(waitUntil([&] {
        return hub.log().contains(
            QStringLiteral("run.finished for run %1 refused: it was dispatched to another executor")
                .arg(id));
    }),
        qPrintable(hub.log()));
    QCOMPARE(state(id), QStringLiteral("running"));
    const CliResult log
        = hub.cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) });
    CLOOP_COMPARE_EXIT(log, 0);
    QCOMPARE(log.stdoutText(), QStringLiteral("honest output\n"));
    QVERIFY(m_honest->isRunning());
    // Its own agent's word still counts.
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(id) }), 0);
    QVERIFY(waitUntil([&] {
        return m_honest->stderrText().contains(QStringLiteral("run %1 finished").arg(id));
    }));
}

void TestExecutorReports::refusalsAreLoggedAFewAtATime()
{
    const qint64 id = queue({ QStringLiteral("--executor"), QStringLiteral("mallory"),
        QStringLiteral("--"), QStringLiteral("true") });
    QVERIFY(id > 0);
    // An executor that repeats a refused report cannot flood the hub's log.
    for (int i = 0; i < 200; ++i)
        m_claimant->connection()->sendControl(protocol::RunFinished { id, 0, QString(), 0 });
    // A report after the burst, through the same ordered tunnel, shows when
    // all 200 were handled: this one is dispatched to it, so it counts.
    const qint64 own = queue({ QStringLiteral("--executor"), QStringLiteral("mallory"),
        QStringLiteral("--host-process"), QStringLiteral("--"), QStringLiteral("true") });
    QVERIFY(own > 0);
    QVERIFY(waitUntil([&] { return state(own) == QLatin1String("dispatched"); }));
    m_claimant->connection()->sendControl(protocol::RunFinished { own, 0, QString(), 0 });
    QVERIFY(waitUntil([&] { return state(own) == QLatin1String("succeeded"); }));
    const QString needle = QStringLiteral("run.finished for run %1 refused").arg(id);
    const qsizetype lines = m_rig->hub().log().count(needle);
    QVERIFY2(
        lines >= 1 && lines <= 5, qPrintable(QStringLiteral("%1 lines of refusal").arg(lines)));
    QCOMPARE(state(id), QStringLiteral("queued"));
}

QTEST_MAIN(TestExecutorReports)
#include "tst_executorreports.moc"
