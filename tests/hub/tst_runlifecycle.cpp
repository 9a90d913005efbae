// RunLifecycle: every end of a run goes through end(), which changes the
// state once, then tells the dispatcher (runEnded), then everyone
// (run.finished); a cancel by a person takes the same way.

#include "hub/domain/eventbus.h"
#include "hub/domain/runlifecycle.h"
#include "hub/domain/runservice.h"
#include "hub/storage/executorstore.h"
#include "tests/hub/apiharness.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

using Ending = RunLifecycle::Ending;

Q_DECLARE_METATYPE(std::optional<int>)
Q_DECLARE_METATYPE(cloop::hub::RunRecord::State)

class TestRunLifecycle : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void reportedEndings_data();
    void reportedEndings();
    void aRunEndsOnceAndTheDispatcherHearsFirst();
    void anExecutorEndsOnlyARunDispatchedToIt();
    void whatIsRecordedWithTheEndStandsOrFallsWithIt();
    void aCancelIsAnEndLikeAnyOther();
    void aUsbDeviceIsLentToOneRunAtATime();
    void whatARunHoldsIsReadBackUntilItEnds();

private:
    RunLifecycle &lifecycle() { return m_hub->core().runLifecycle(); }
    qint64 queueRun();
    // What happened, in order: "ended:<state>" for runEnded, event names
    // for what the event bus published.
    QStringList m_happened;
    std::optional<RunRecord> m_lastEnded;

    std::unique_ptr<ApiHarness> m_hub;
    ApiPrincipal m_admin;
    qint64 m_executorId = 0;
};

void TestRunLifecycle::init()
{
    m_hub = std::make_unique<ApiHarness>();
    QVERIFY(m_hub->open());
    auto admin = m_hub->addCaller(QStringLiteral("admin"), true);
    QVERIFY(admin);
    m_admin = *admin;
    QVERIFY(m_hub->addProject(QStringLiteral("/srv/projects/bench")));
    auto executor = m_hub->core().stores().executors.enroll(
        QStringLiteral("buildbox"), QStringLiteral("user:admin"));
    QVERIFY(executor);
    m_executorId = executor->executor.id;

    m_happened.clear();
    connect(&lifecycle(), &RunLifecycle::runEnded, this, [this](const RunRecord &run) {
        m_happened.append(QStringLiteral("ended:") + runStateName(run.state));
        m_lastEnded = run;
    });
    connect(&m_hub->core().events(), &EventBus::published, this,
        [this](const HubEvent &event) { m_happened.append(event.name); });
}

void TestRunLifecycle::cleanup()
{
    m_hub.reset();
}

qint64 TestRunLifecycle::queueRun()
{
    auto run = m_hub->core().runs().create(m_admin,
        { { QStringLiteral("project"), QStringLiteral("/srv/projects/bench") },
            { QStringLiteral("argv"), QJsonArray { QStringLiteral("true") } } });
    if (!run)
        return 0;
    m_happened.clear();
    return run->id;
}

void TestRunLifecycle::reportedEndings_data()
{
    QTest::addColumn<std::optional<int>>("exitCode");
    QTest::addColumn<QString>("error");
    QTest::addColumn<RunRecord::State>("state");

    QTest::newRow("exit 0") << std::optional<int>(0) << QString() << RunRecord::State::Succeeded;
    QTest::newRow("exit 3") << std::optional<int>(3) << QString() << RunRecord::State::Failed;
    QTest::newRow("exit 0 with an error")
        << std::optional<int>(0) << QStringLiteral("log lost") << RunRecord::State::Failed;
    QTest::newRow("no exit code") << std::optional<int>() << QStringLiteral("could not start")
                                  << RunRecord::State::Failed;
}

void TestRunLifecycle::reportedEndings()
{
    QFETCH(std::optional<int>, exitCode);
    QFETCH(QString, error);
    QFETCH(RunRecord::State, state);

    const Ending ending = Ending::reported(m_executorId, exitCode, error);
    QCOMPARE(ending.state, state);
    QCOMPARE(ending.exitCode, exitCode);
    QCOMPARE(ending.error, error);
    QCOMPARE(ending.reportedBy, std::optional<qint64>(m_executorId));
}

void TestRunLifecycle::aRunEndsOnceAndTheDispatcherHearsFirst()
{
    const qint64 runId = queueRun();
    QVERIFY(runId);

    auto ended = lifecycle().end(runId, Ending::failed(QStringLiteral("no executor can take it")));
    QVERIFY2(ended, qPrintable(failure(ended)));
    QCOMPARE(ended->state, RunRecord::State::Failed);
    QCOMPARE(ended->error, QStringLiteral("no executor can take it"));
    QVERIFY(ended->finishedAt.isValid());
    QCOMPARE(m_happened,
        (QStringList { QStringLiteral("ended:failed"), QStringLiteral("run.finished") }));

    // A second end, of whatever kind, changes nothing and tells nobody.
    m_happened.clear();
    auto again = lifecycle().end(runId, Ending::lost(QStringLiteral("its executor went away")));
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("run_state"));
    QVERIFY(m_happened.isEmpty());
    QCOMPARE(lifecycle().find(runId)->state, RunRecord::State::Failed);
}

void TestRunLifecycle::anExecutorEndsOnlyARunDispatchedToIt()
{
    const qint64 runId = queueRun();
    QVERIFY(runId);
    // Queued for nobody yet: no executor's word ends it.
    QVERIFY(!lifecycle().end(runId, Ending::reported(m_executorId, 0, {})));
    QVERIFY(lifecycle().markDispatched(runId, m_executorId));
    QVERIFY(!lifecycle().end(runId, Ending::reported(m_executorId + 1, 0, {})));
    QVERIFY(m_happened.isEmpty());

    QVERIFY(lifecycle().markRunning(runId, m_executorId));
    auto ended = lifecycle().end(runId, Ending::reported(m_executorId, 0, {}));
    QVERIFY2(ended, qPrintable(failure(ended)));
    QCOMPARE(ended->state, RunRecord::State::Succeeded);
    QCOMPARE(ended->exitCode, std::optional<int>(0));
    QCOMPARE(m_happened,
        (QStringList { QStringLiteral("run.started"), QStringLiteral("ended:succeeded"),
            QStringLiteral("run.finished") }));
}

void TestRunLifecycle::whatIsRecordedWithTheEndStandsOrFallsWithIt()
{
    const qint64 runId = queueRun();
    QVERIFY(runId);
    const qint64 audited = m_hub->lastAuditId();

    // When what goes with the end fails, the run has not ended.
    auto refused = lifecycle().end(runId, Ending::cancelled(QStringLiteral("cancelled")),
        [](const RunRecord &) { return Status(Error::make(QStringLiteral("test"), {})); });
    QVERIFY(!refused);
    QCOMPARE(lifecycle().find(runId)->state, RunRecord::State::Queued);
    QVERIFY(m_happened.isEmpty());

    // When it succeeds, both stand.
    auto ended = lifecycle().end(
        runId, Ending::cancelled(QStringLiteral("cancelled")), [this](const RunRecord &run) {
            return AuditLog(m_hub->db())
                .append(QStringLiteral("test"), auditaction::kRunCancel,
                    QStringLiteral("run:%1").arg(run.id));
        });
    QVERIFY2(ended, qPrintable(failure(ended)));
    QCOMPARE(m_hub->auditActionsSince(audited), QStringList { QStringLiteral("run.cancel") });
}

void TestRunLifecycle::aCancelIsAnEndLikeAnyOther()
{
    const qint64 runId = queueRun();
    QVERIFY(runId);
    QVERIFY(lifecycle().markDispatched(runId, m_executorId));
    m_happened.clear();

    auto cancelled = m_hub->core().runs().cancel(m_admin, runId, QStringLiteral("wrong image"));
    QVERIFY2(cancelled, qPrintable(failure(cancelled)));
    QVERIFY(m_lastEnded);
    QCOMPARE(m_lastEnded->id, runId);
    QCOMPARE(m_lastEnded->state, RunRecord::State::Cancelled);
    QCOMPARE(m_lastEnded->error, QStringLiteral("cancelled by admin: wrong image"));
    // Dispatched: the dispatcher tells its executor.
    QVERIFY(m_lastEnded->wasDispatchedTo(m_executorId));
    QCOMPARE(m_happened,
        (QStringList { QStringLiteral("ended:cancelled"), QStringLiteral("run.finished") }));
    QCOMPARE(m_hub->value(QStringLiteral("SELECT count(*) FROM audit_log WHERE action = ?"),
                 { QStringLiteral("run.cancel") }),
        QStringLiteral("1"));
}

void TestRunLifecycle::aUsbDeviceIsLentToOneRunAtATime()
{
    // Given two runs and a USB forwarder's device,
    auto forwarder = m_hub->enrollUsb(QStringLiteral("hsm"));
    QVERIFY(forwarder);
    const qint64 forwarderId = *forwarder;
    const qint64 first = queueRun();
    const qint64 second = queueRun();
    QVERIFY(first && second);
    const QList<RunStore::LentDevice> usb { { 1, forwarderId, true, QStringLiteral("fwd-hsm") } };
    QCOMPARE(lifecycle().isDeviceHeld(forwarderId).value(), false);
    // when one run is dispatched with it, a second cannot be: it stays
    // queued, and nothing of that attempt was written,
    QVERIFY(lifecycle().markDispatched(first, m_executorId, usb));
    QCOMPARE(lifecycle().isDeviceHeld(forwarderId).value(), true);
    auto refused = lifecycle().markDispatched(second, m_executorId, usb);
    QVERIFY(!refused);
    QVERIFY2(refused.error().is(ErrorCode::DeviceBusy), qPrintable(refused.error().message));
    QVERIFY(refused.error().message.contains(QString::number(first)));
    QCOMPARE(lifecycle().find(second)->state, RunRecord::State::Queued);
    // a segment is lent to many at once,
    const QList<RunStore::LentDevice> segment { { 2, forwarderId + 1, false,
        QStringLiteral("fwd-lab") } };
    QVERIFY(lifecycle().markDispatched(second, m_executorId, segment));
    // and once the first run ends, the USB device is free again.
    QVERIFY(lifecycle().end(first, Ending::failed(QStringLiteral("done"))));
    QCOMPARE(lifecycle().isDeviceHeld(forwarderId).value(), false);
}

void TestRunLifecycle::whatARunHoldsIsReadBackUntilItEnds()
{
    // A hub that restarts under a running run learns from the records what
    // the run still holds: a USB device and a segment, with their names.
    const qint64 run = queueRun();
    QVERIFY(run);
    QVERIFY(lifecycle().lentTo(run).value().isEmpty());
    const QList<RunStore::LentDevice> lent { { 7, 31, true, QStringLiteral("fwd-hsm") },
        { 3, 30, false, QStringLiteral("fwd-lab") } };
    QVERIFY(lifecycle().markDispatched(run, m_executorId, lent));
    const QList<RunStore::LentDevice> read = lifecycle().lentTo(run).value();
    QCOMPARE(read.size(), 2);
    // (by binding)
    QCOMPARE(read[0].bindingId, 3);
    QCOMPARE(read[0].forwarderId, 30);
    QCOMPARE(read[0].exclusive, false);
    QCOMPARE(read[0].name, QStringLiteral("fwd-lab"));
    QCOMPARE(read[1].bindingId, 7);
    QCOMPARE(read[1].forwarderId, 31);
    QCOMPARE(read[1].exclusive, true);
    QCOMPARE(read[1].name, QStringLiteral("fwd-hsm"));
    QVERIFY(lifecycle().end(run, Ending::failed(QStringLiteral("done"))));
    QVERIFY(lifecycle().lentTo(run).value().isEmpty());
}

QTEST_GUILESS_MAIN(TestRunLifecycle)
#include "tst_runlifecycle.moc"
