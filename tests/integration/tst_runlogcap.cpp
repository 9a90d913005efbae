// Integration: the hub's run logs are bounded. A real hub started with a
// small per-run cap and budget, a real host-mode agent and host-process
// runs (no container engine needed): a run printing past its cap keeps its
// newest output and `cloop run logs` says exactly how many bytes were
// dropped; one printing forever never takes more disk than allowed, and a
// finished run's log gives way to it first.

#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

using namespace cloop::testing;

namespace {

const QString kProject = QStringLiteral("/srv/projects/bench");
constexpr qint64 kCap = 256 * 1024;
constexpr qint64 kBudget = 384 * 1024;
// A log at its cap holds at least the cap less one segment (64 KiB for this
// cap) and one record.
constexpr qint64 kLeastKept = kCap - 64 * 1024 - 64 * 1024 - 13;

// What `seq 1 last` prints.
QByteArray sequence(int last)
{
    QByteArray out;
    for (int i = 1; i <= last; ++i)
        out += QByteArray::number(i) + '\n';
    return out;
}

// The notes `cloop run logs` printed for dropped output: how many bytes each.
QList<qint64> droppedNotes(const CliResult &result, const QString &reason)
{
    static const QRegularExpression note(
        QStringLiteral("\\[cloop: (\\d+) bytes dropped: ([^\\]]*)\\]"));
    QList<qint64> out;
    for (auto it = note.globalMatch(result.stderrText()); it.hasNext();) {
        const auto match = it.next();
        if (match.captured(2).contains(reason))
            out.append(match.captured(1).toLongLong());
    }
    return out;
}

} // namespace

class TestRunLogCap final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void outputPastTheCapIsDroppedOldestFirstAndCounted();
    void aWorkloadPrintingForeverStaysWithinTheBudget();

private:
    qint64 queue(const QString &script);
    QJsonObject logPage(qint64 runId, qint64 offset);
    bool finishedWithCompleteLog(qint64 runId);
    qint64 runLogDiskBytes() const;

    std::unique_ptr<TestRig> m_rig;
    ForwarderProcess *m_agent = nullptr;
};

void TestRunLogCap::init()
{
    m_rig = std::make_unique<TestRig>();
    m_rig->hub().setServeArguments({ QStringLiteral("--run-log-cap"), QStringLiteral("256KiB"),
        QStringLiteral("--run-log-budget"), QStringLiteral("384KiB") });
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    const QJsonObject enrolled = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                                 QStringLiteral("--name"), QStringLiteral("logbox"),
                                                 QStringLiteral("--json") })
                                     .toObject();
    // The agent retains enough that whatever is dropped, the hub dropped.
    m_agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), enrolled.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--host-mode"), QStringLiteral("--retain-bytes"),
            QString::number(64 * 1024 * 1024) },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(m_agent->start());
    QVERIFY2(m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(m_agent->describe()));
}

void TestRunLogCap::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_agent = nullptr;
    m_rig.reset();
}

qint64 TestRunLogCap::queue(const QString &script)
{
    const CliResult queued = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
        kProject, QStringLiteral("--host-process"), QStringLiteral("--no-wait"),
        QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), script });
    return queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
}

QJsonObject TestRunLogCap::logPage(qint64 runId, qint64 offset)
{
    HubProcess &hub = m_rig->hub();
    QUrl url = hub.apiUrl(QStringLiteral("/api/runs/%1/log").arg(runId));
    url.setQuery(QStringLiteral("offset=%1").arg(offset));
    return pinnedGet(url, hub.pin(), hub.adminToken()).json();
}

bool TestRunLogCap::finishedWithCompleteLog(qint64 runId)
{
    return waitUntil([&] {
        const QJsonObject page = logPage(runId, 0);
        return page.value(QLatin1String("finished")).toBool()
            && page.value(QLatin1String("complete")).toBool();
    });
}

qint64 TestRunLogCap::runLogDiskBytes() const
{
    qint64 total = 0;
    for (const QFileInfo &file :
        QDir(m_rig->hub().dataDir() + QLatin1String("/runs")).entryInfoList(QDir::Files))
        total += file.size();
    return total;
}

void TestRunLogCap::outputPastTheCapIsDroppedOldestFirstAndCounted()
{
    // Given a run that prints 2.7 MB, ten times its cap …
    const QByteArray printed = sequence(400'000);
    const qint64 id = queue(QStringLiteral("seq 1 400000"));
    QVERIFY(id > 0);
    QVERIFY(finishedWithCompleteLog(id));

    // … its log keeps the newest output, up to the last byte …
    const CliResult logs
        = m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("logs"), QString::number(id) });
    CLOOP_COMPARE_EXIT(logs, 0);
    QVERIFY2(printed.endsWith(logs.out), qPrintable(logs.describe().left(2000)));
    QVERIFY2(logs.out.size() <= kCap && logs.out.size() >= kLeastKept,
        qPrintable(QString::number(logs.out.size())));
    // … and says once, exactly, how many bytes it dropped before it.
    const QList<qint64> dropped
        = droppedNotes(logs, QStringLiteral("the hub keeps only the newest output"));
    QCOMPARE(dropped.size(), 1);
    QCOMPARE(dropped.first() + logs.out.size(), qint64(printed.size()));
    QCOMPARE(logs.stderrText().count(QLatin1String("bytes dropped")), 1);
    // The hub's disk holds no more than the cap.
    QVERIFY2(runLogDiskBytes() <= kCap, qPrintable(QString::number(runLogDiskBytes())));
    // A read from an offset inside what was kept starts exactly there.
    const qint64 from = qint64(printed.size()) - 1000;
    const QJsonArray records = logPage(id, from).value(QLatin1String("records")).toArray();
    QVERIFY(!records.isEmpty());
    QCOMPARE(records.first().toObject().value(QLatin1String("offset")).toInteger(), from);
    QCOMPARE(QByteArray::fromBase64(
                 records.first().toObject().value(QLatin1String("data")).toString().toLatin1()),
        printed.right(1000));
}

void TestRunLogCap::aWorkloadPrintingForeverStaysWithinTheBudget()
{
    // Given a finished run's log of 200 KB …
    const qint64 earlier = queue(QStringLiteral("seq 1 36000"));
    QVERIFY(earlier > 0);
    QVERIFY(finishedWithCompleteLog(earlier));
    const qint64 earlierSize = sequence(36'000).size();
    QVERIFY(droppedNotes(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("logs"),
                             QString::number(earlier) }),
        QStringLiteral("hub"))
                .isEmpty());

    // … when a workload prints without end, the hub's run logs stay within
    // the budget while its output grows to many times that (seen from
    // outside: a batch being written, up to a channel's window of 256 KiB,
    // may be on disk a moment before the oldest segments go) …
    const qint64 forever = queue(QStringLiteral("yes 'a line of output that never ends'"));
    QVERIFY(forever > 0);
    qint64 largest = 0;
    const bool grew = waitUntil([&] {
        largest = qMax(largest, runLogDiskBytes());
        return logPage(forever, 0).value(QLatin1String("end")).toInteger() > 32 * 1024 * 1024;
    });
    QVERIFY(grew);
    QVERIFY2(largest <= kBudget + 256 * 1024, qPrintable(QString::number(largest)));
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("run"), QStringLiteral("cancel"),
                           QString::number(forever) }),
        0);
    QVERIFY(finishedWithCompleteLog(forever));
    QVERIFY(runLogDiskBytes() <= kBudget);

    // … and the finished run's log gave way first: it says how much it lost.
    const CliResult logs = m_rig->hub().cli(
        { QStringLiteral("run"), QStringLiteral("logs"), QString::number(earlier) });
    CLOOP_COMPARE_EXIT(logs, 0);
    const QList<qint64> dropped
        = droppedNotes(logs, QStringLiteral("the hub keeps only the newest output"));
    QCOMPARE(dropped.size(), 1);
    QCOMPARE(dropped.first() + logs.out.size(), earlierSize);
    QVERIFY(sequence(36'000).endsWith(logs.out));
}

QTEST_MAIN(TestRunLogCap)
#include "tst_runlogcap.moc"
