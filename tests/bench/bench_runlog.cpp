// Run output end to end: a real hub, a real `cloop-agent` in host mode and
// host-process runs, so no container engine is needed.
//
//   bench_runlog [MiB per run, default 100] [repetitions, default 3]
//
// Figures:
//   hub-side log    median MB/s from `cloop run --no-wait` to the hub
//                   reporting the whole log stored (so it includes queueing,
//                   dispatch and the workload's start)
//   hub away        the agent's resident memory while a run writes MiB with
//                   the hub killed, against its idle size, and what the log
//                   holds once the hub is back (the default 1 MiB retention
//                   turns the rest into one gap)
//
// Run it as root (as the agent would be) or as any user; it needs the
// programs next to it, or CLOOP_BINARY_DIR naming their folder.

#include "bench/benchutil.h"
#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QUrlQuery>

#include <cstdio>
#include <vector>

using namespace cloop::testing;

namespace {

const char *const kUsage = "bench_runlog [MiB per run] [repetitions]";
const char *g_program = "bench_runlog";
const QString kProject = QStringLiteral("/srv/projects/bench");

[[noreturn]] void fail(const QString &what)
{
    cloop::bench::die(g_program, qPrintable(what));
}

// One page of GET /api/runs/ID/log from `offset`.
QJsonObject logPage(HubProcess &hub, qint64 id, qint64 offset)
{
    QUrl url = hub.apiUrl(QStringLiteral("/api/runs/%1/log").arg(id));
    url.setQuery(QStringLiteral("offset=%1").arg(offset));
    const HttpResult result = pinnedGet(url, hub.pin(), hub.adminToken());
    if (result.status != 200)
        fail(QStringLiteral("reading the log of run %1: %2").arg(id).arg(result.describe()));
    return result.json();
}

QString runState(HubProcess &hub, qint64 id)
{
    const HttpResult result = pinnedGet(
        hub.apiUrl(QStringLiteral("/api/runs/%1").arg(id)), hub.pin(), hub.adminToken());
    return result.json().value(QLatin1String("state")).toString();
}

// Waits until the hub holds the run's whole log; false on timeout.
bool awaitCompleteLog(HubProcess &hub, qint64 id, qint64 expectedEnd, int timeoutMs)
{
    return waitUntil(
        [&] {
            const QJsonObject page = logPage(hub, id, expectedEnd);
            return page.value(QLatin1String("complete")).toBool();
        },
        timeoutMs);
}

qint64 queueHostRun(HubProcess &hub, const QString &script)
{
    const CliResult queued = hub.cli({ QStringLiteral("run"), QStringLiteral("--project"), kProject,
        QStringLiteral("--host-process"), QStringLiteral("--no-wait"), QStringLiteral("--"),
        QStringLiteral("sh"), QStringLiteral("-c"), script });
    const qint64 id = queued.exitCode == 0 ? queued.stdoutText().trimmed().toLongLong() : 0;
    if (id <= 0)
        fail(QStringLiteral("queueing a run failed: %1").arg(queued.stderrText()));
    return id;
}

// A hub with the project and an enrolled host-mode agent, connected.
ForwarderProcess &startHubAndAgent(TestRig &rig, const QStringList &agentOptions)
{
    if (!rig.startHub())
        fail(rig.lastError());
    HubProcess &hub = rig.hub();
    if (hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }).exitCode != 0)
        fail(QStringLiteral("cloop project add failed"));
    const QJsonObject enrolled
        = hub.cliJson(
                 { QStringLiteral("executor"), QStringLiteral("enroll"), QStringLiteral("--name"),
                     QStringLiteral("benchbox"), QStringLiteral("--json") })
              .toObject();
    ForwarderProcess &agent = rig.addForwarder(
        QStringList { QStringLiteral("--bundle"),
            enrolled.value(QLatin1String("bundle")).toString(), QStringLiteral("--host-mode") }
            + agentOptions,
        rig.newHome(), ForwarderProcess::Program::Agent);
    if (!agent.start() || !agent.waitForStderr(QStringLiteral("connected to the hub as executor")))
        fail(QStringLiteral("the agent did not connect:\n%1").arg(agent.describe()));
    return agent;
}

// A field of /proc/PID/status in kB ("VmRSS", "VmHWM").
qint64 statusKiB(qint64 pid, const char *field)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        fail(QStringLiteral("cannot read %1").arg(status.fileName()));
    const QByteArray prefix = QByteArray(field) + ':';
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(prefix))
            return line.mid(prefix.size()).trimmed().split(' ').value(0).toLongLong();
    }
    fail(QStringLiteral("no %1 in %2").arg(QLatin1String(field), status.fileName()));
}

double hubSideThroughput(qint64 bytes, int repetitions)
{
    TestRig rig;
    // Enough retention that nothing is dropped: this measures the stream.
    startHubAndAgent(rig, { QStringLiteral("--retain-bytes"), QString::number(bytes + (1 << 20)) });
    HubProcess &hub = rig.hub();
    std::vector<double> rates;
    for (int i = 0; i < repetitions; ++i) {
        QElapsedTimer timer;
        timer.start();
        const qint64 id = queueHostRun(hub, QStringLiteral("head -c %1 /dev/zero").arg(bytes));
        if (!awaitCompleteLog(hub, id, bytes, 600'000))
            fail(QStringLiteral("run %1 did not complete its log").arg(id));
        const QJsonObject page = logPage(hub, id, bytes);
        if (page.value(QLatin1String("end")).toInteger() != bytes)
            fail(QStringLiteral("run %1 stored %2 bytes, not %3")
                     .arg(id)
                     .arg(page.value(QLatin1String("end")).toInteger())
                     .arg(bytes));
        const double seconds = timer.nsecsElapsed() / 1e9;
        rates.push_back(bytes / seconds / 1e6);
        std::printf("  run %lld: %.1f MiB in %.2f s\n", static_cast<long long>(id),
            bytes / 1048576.0, seconds);
    }
    return cloop::bench::median(rates);
}

void memoryWhileTheHubIsAway(qint64 bytes)
{
    TestRig rig;
    ForwarderProcess &agent = startHubAndAgent(rig, {});
    HubProcess &hub = rig.hub();
    // The workload waits for a file in its run directory, so it writes only
    // once the hub is gone.
    const qint64 id = queueHostRun(hub,
        QStringLiteral("while [ ! -e go ]; do sleep 0.05; done; head -c %1 /dev/zero").arg(bytes));
    if (!waitUntil([&] { return runState(hub, id) == QLatin1String("running"); }))
        fail(QStringLiteral("run %1 did not start").arg(id));
    const qint64 pid = agent.processId();
    const qint64 idleRss = statusKiB(pid, "VmRSS");
    const qint64 hwmBefore = statusKiB(pid, "VmHWM");

    hub.kill();
    if (!agent.waitForStderr(QStringLiteral("not connected")))
        fail(QStringLiteral("the agent did not notice the hub leaving:\n%1").arg(agent.describe()));
    QFile go(agent.home() + QStringLiteral("/.cloop/work/runs/%1/go").arg(id));
    if (!go.open(QIODevice::WriteOnly))
        fail(QStringLiteral("cannot create %1").arg(go.fileName()));
    go.close();
    QElapsedTimer timer;
    timer.start();
    if (!agent.waitForStderr(QStringLiteral("run %1 finished").arg(id), 600'000))
        fail(QStringLiteral("run %1 did not finish:\n%2").arg(id).arg(agent.describe()));
    const double seconds = timer.nsecsElapsed() / 1e9;
    const qint64 hwmAfter = statusKiB(pid, "VmHWM");
    const qint64 rssAfter = statusKiB(pid, "VmRSS");

    if (!hub.start())
        fail(hub.lastError());
    if (!awaitCompleteLog(hub, id, bytes, 60'000))
        fail(QStringLiteral("run %1's log did not complete after the hub came back").arg(id));
    qint64 stored = 0;
    qint64 lost = 0;
    qint64 gaps = 0;
    for (qint64 offset = 0; offset < bytes;) {
        const QJsonArray records
            = logPage(hub, id, offset).value(QLatin1String("records")).toArray();
        if (records.isEmpty())
            break;
        for (const QJsonValue &value : records) {
            const QJsonObject record = value.toObject();
            if (record.contains(QLatin1String("lost"))) {
                lost += record.value(QLatin1String("lost")).toInteger();
                ++gaps;
            } else {
                stored += QByteArray::fromBase64(
                    record.value(QLatin1String("data")).toString().toLatin1())
                              .size();
            }
        }
        offset = stored + lost;
    }
    if (stored + lost != bytes)
        fail(QStringLiteral("stored %1 + lost %2 is not %3").arg(stored).arg(lost).arg(bytes));

    std::printf("hub away: %.1f MiB written in %.2f s while the hub was down\n", bytes / 1048576.0,
        seconds);
    std::printf("  agent VmRSS idle %.1f MB, after %.1f MB; VmHWM before %.1f MB, after %.1f MB\n",
        idleRss / 1024.0, rssAfter / 1024.0, hwmBefore / 1024.0, hwmAfter / 1024.0);
    std::printf("  log once the hub was back: %lld bytes stored, %lld lost in %lld gap(s)\n",
        static_cast<long long>(stored), static_cast<long long>(lost), static_cast<long long>(gaps));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int mib = cloop::bench::argument(argc, argv, 1, 100, kUsage);
    const int repetitions = cloop::bench::argument(argc, argv, 2, 3, kUsage);
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    const qint64 bytes = qint64(mib) * 1048576;

    std::printf("hub-side log, %d MiB per run, %d run(s):\n", mib, repetitions);
    const double rate = hubSideThroughput(bytes, repetitions);
    std::printf("hub-side log: median %.1f MB/s (queue to complete log)\n", rate);
    memoryWhileTheHubIsAway(bytes);
    return 0;
}
