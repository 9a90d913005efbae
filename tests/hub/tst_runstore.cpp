#include "hub/storage/database.h"
#include "hub/storage/projectstore.h"
#include "hub/storage/runstore.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;

// Runs on the hub: created queued, served oldest first, and moved along
// their life only from the state each step leaves.
class TestRunStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void createdRunsAreQueuedInOrder();
    void lifeGoesForwardOnly();
    void aFinishedRunStaysFinished();
    void anExecutorReportsOnlyOnRunsDispatchedToIt();
    void listingFiltersByProjectAndState();

private:
    NewRun newRun(const QString &command) const
    {
        NewRun run;
        run.projectId = m_projectId;
        run.requestedBy = QStringLiteral("user:maria");
        run.argv = { QStringLiteral("sh"), QStringLiteral("-c"), command };
        return run;
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<RunStore> m_runs;
    qint64 m_projectId = 0;
    qint64 m_otherProjectId = 0;
    qint64 m_executorId = 0;
    const QDateTime m_now = QDateTime(QDate(2026, 11, 29), QTime(12, 0), Qt::UTC);
};

void TestRunStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto db = Database::openSqlite(m_dir->filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    m_db = std::move(*db);
    m_runs = std::make_unique<RunStore>(*m_db);
    ProjectStore projects(*m_db);
    m_projectId
        = projects.addProject(QStringLiteral("/srv/projects/bench"), QStringLiteral("test"))->id;
    m_otherProjectId
        = projects.addProject(QStringLiteral("/srv/projects/radio"), QStringLiteral("test"))->id;
    auto executor
        = m_db->query(QStringLiteral("INSERT INTO executors (name, created_at, created_by) VALUES "
                                     "('buildbox', 'x', 'test') RETURNING id"));
    QVERIFY(executor && executor->next());
    m_executorId = executor->value(0).toLongLong();
}

void TestRunStore::cleanup()
{
    m_runs.reset();
    m_db.reset();
    m_dir.reset();
}

void TestRunStore::createdRunsAreQueuedInOrder()
{
    auto first = m_runs->create(newRun(QStringLiteral("echo one")), m_now);
    auto second = m_runs->create(newRun(QStringLiteral("echo \"two\"; exit 3")), m_now.addSecs(1));
    QVERIFY(first && second);
    QCOMPARE(first->state, RunRecord::State::Queued);
    QCOMPARE(second->argv,
        (QStringList {
            QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo \"two\"; exit 3") }));
    QCOMPARE(second->projectPath, QStringLiteral("/srv/projects/bench"));
    auto queue = m_runs->queued();
    QVERIFY(queue);
    QCOMPARE(queue->size(), 2);
    QCOMPARE(queue->at(0).id, first->id);
    QCOMPARE(queue->at(1).id, second->id);
}

void TestRunStore::lifeGoesForwardOnly()
{
    auto run = m_runs->create(newRun(QStringLiteral("true")), m_now);
    QVERIFY(run);
    // Not running before it was dispatched.
    auto early = m_runs->markRunning(run->id, m_executorId, m_now);
    QVERIFY(!early);
    QCOMPARE(early.error().code, QStringLiteral("run_state"));

    auto dispatched = m_runs->markDispatched(run->id, m_executorId, m_now.addSecs(1));
    QVERIFY(dispatched);
    QCOMPARE(dispatched->executorId, std::optional<qint64>(m_executorId));
    QVERIFY(!m_runs->markDispatched(run->id, m_executorId, m_now.addSecs(2))); // not twice
    auto active = m_runs->activeOn(m_executorId);
    QVERIFY(active && active->size() == 1);

    auto running = m_runs->markRunning(run->id, m_executorId, m_now.addSecs(2));
    QVERIFY(running);
    QCOMPARE(running->state, RunRecord::State::Running);
    QCOMPARE(running->startedAt, m_now.addSecs(2));

    auto finished
        = m_runs->finish(run->id, RunRecord::State::Failed, 3, QString(), m_now.addSecs(5));
    QVERIFY(finished);
    QCOMPARE(finished->exitCode, std::optional<int>(3));
    QVERIFY(finished->isFinished());
    QVERIFY(m_runs->activeOn(m_executorId)->isEmpty());
    QVERIFY(m_runs->queued()->isEmpty());
}

void TestRunStore::anExecutorReportsOnlyOnRunsDispatchedToIt()
{
    auto other
        = m_db->query(QStringLiteral("INSERT INTO executors (name, created_at, created_by) VALUES "
                                     "('otherbox', 'x', 'test') RETURNING id"));
    QVERIFY(other && other->next());
    const qint64 otherId = other->value(0).toLongLong();

    // Given a run queued for (pinned to) the executor: it names the
    // executor but was never dispatched to it.
    NewRun pinned = newRun(QStringLiteral("true"));
    pinned.executorId = m_executorId;
    auto queued = m_runs->create(pinned, m_now);
    QVERIFY(queued);
    QCOMPARE(queued->executorId, std::optional<qint64>(m_executorId));
    QVERIFY(!queued->wasDispatchedTo(m_executorId));
    // When the executor says it finished or started: nothing changes.
    auto early = m_runs->finishOn(
        m_executorId, queued->id, RunRecord::State::Succeeded, 0, QString(), m_now);
    QVERIFY(!early);
    QCOMPARE(early.error().code, QStringLiteral("run_state"));
    QVERIFY(!m_runs->markRunning(queued->id, m_executorId, m_now));
    QCOMPARE(m_runs->find(queued->id)->state, RunRecord::State::Queued);

    // Once dispatched, only that executor's reports move it.
    QVERIFY(m_runs->markDispatched(queued->id, m_executorId, m_now.addSecs(1)));
    QVERIFY(m_runs->find(queued->id)->wasDispatchedTo(m_executorId));
    QVERIFY(!m_runs->find(queued->id)->wasDispatchedTo(otherId));
    auto foreign = m_runs->finishOn(
        otherId, queued->id, RunRecord::State::Succeeded, 0, QString(), m_now.addSecs(2));
    QVERIFY(!foreign);
    QVERIFY2(foreign.error().message.contains(QLatin1String("not dispatched to executor")),
        qPrintable(foreign.error().message));
    QVERIFY(!m_runs->markRunning(queued->id, otherId, m_now.addSecs(2)));
    QCOMPARE(m_runs->find(queued->id)->state, RunRecord::State::Dispatched);
    QVERIFY(m_runs->markRunning(queued->id, m_executorId, m_now.addSecs(2)));
    auto finished = m_runs->finishOn(
        m_executorId, queued->id, RunRecord::State::Succeeded, 0, QString(), m_now.addSecs(3));
    QVERIFY(finished);
    QCOMPARE(finished->state, RunRecord::State::Succeeded);
    // A finished run stays its executor's (its output may still arrive).
    QVERIFY(finished->wasDispatchedTo(m_executorId));

    // A queued run cancelled before any dispatch never becomes anyone's.
    auto cancelled = m_runs->create(pinned, m_now);
    QVERIFY(cancelled);
    QVERIFY(m_runs->finish(
        cancelled->id, RunRecord::State::Cancelled, std::nullopt, QStringLiteral("no"), m_now));
    QVERIFY(!m_runs->find(cancelled->id)->wasDispatchedTo(m_executorId));
}

void TestRunStore::aFinishedRunStaysFinished()
{
    auto run = m_runs->create(newRun(QStringLiteral("sleep 100")), m_now);
    QVERIFY(run);
    QVERIFY(m_runs->finish(run->id, RunRecord::State::Cancelled, std::nullopt,
        QStringLiteral("cancelled by alice"), m_now));
    // A finish that arrives after the cancel changes nothing.
    auto late
        = m_runs->finish(run->id, RunRecord::State::Succeeded, 0, QString(), m_now.addSecs(1));
    QVERIFY(!late);
    auto kept = m_runs->find(run->id);
    QVERIFY(kept);
    QCOMPARE(kept->state, RunRecord::State::Cancelled);
    QCOMPARE(kept->error, QStringLiteral("cancelled by alice"));
    QVERIFY(!kept->exitCode);
}

void TestRunStore::listingFiltersByProjectAndState()
{
    NewRun elsewhere = newRun(QStringLiteral("true"));
    elsewhere.projectId = m_otherProjectId;
    auto a = m_runs->create(newRun(QStringLiteral("true")), m_now);
    auto b = m_runs->create(elsewhere, m_now);
    auto c = m_runs->create(newRun(QStringLiteral("false")), m_now);
    QVERIFY(a && b && c);
    QVERIFY(m_runs->finish(c->id, RunRecord::State::Failed, 1, QString(), m_now));

    QCOMPARE(m_runs->list(std::nullopt, true)->size(), 3);
    QCOMPARE(m_runs->list(std::nullopt, false)->size(), 2);
    auto bench = m_runs->list(QList<qint64> { m_projectId }, true);
    QVERIFY(bench);
    QCOMPARE(bench->size(), 2);
    QCOMPARE(m_runs->list(QList<qint64> {}, true)->size(), 0);
    QCOMPARE(m_runs->find(424242).error().code, QStringLiteral("not_found"));
}

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_runstore.moc"
