// Sessions at scale on one hub: N real TLS WebSocket forwarder sessions
// (this process holds them with the project's own tunnel client, heartbeats
// on) against a real `cloop hub serve` on loopback, and what the hub costs
// with them: memory and CPU while idle, /api/health and `cloop forward list`
// at that size, its shutdown with them connected, and how long after a
// restart all are back (with /api/health probed throughout).
//
//   bench_sessions [sessions, default 10000] [idle seconds, default 30]
//
// Goals (docs/performance.md): at 10,000 sessions at most 512 MiB and 5% of
// one core while idle, /api/health within 20 ms, `forward list` within
// 200 ms, shutdown within 1 s, all back within 30 s of a restart with
// /api/health answering within 200 ms throughout.

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/sessionload.h"
#include "common/protocol/devicespec.h"
#include "common/util/eventdispatcher.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "support/hubprocess.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTest>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

namespace {

const char *const kUsage = "bench_sessions [sessions] [idle seconds]";
const char *g_program = "bench_sessions";

using cloop::bench::BenchFailed;
using cloop::bench::fail;

// GET /api/health over HTTPS every `every` from a thread of its own with
// curl (its time_total: connection and TLS handshake included, its own
// start not), so the probe neither waits on nor holds up this process's
// event loop, which carries the sessions.
class HealthProbe
{
public:
    HealthProbe(HubProcess &hub, std::chrono::milliseconds every)
    {
        // curl's pin syntax for the hub's "sha256:<base64>".
        const QByteArray command
            = u"curl -s -k --max-time 10 --pinnedpubkey sha256//%1 -o /dev/null "
              "-w '%{http_code} %{time_total}' %2"_s
                  .arg(hub.pin().section(u':', 1), hub.apiUrl(u"/api/health"_s).toString())
                  .toLocal8Bit();
        m_thread = std::thread([this, command, every] {
            const auto born = std::chrono::steady_clock::now();
            while (!m_stop) {
                const auto started = std::chrono::steady_clock::now();
                double ms = -1;
                if (FILE *curl = ::popen(command.constData(), "r")) {
                    int status = 0;
                    double seconds = 0;
                    if (std::fscanf(curl, "%d %lf", &status, &seconds) == 2 && status == 200)
                        ms = seconds * 1000;
                    ::pclose(curl);
                }
                {
                    const std::lock_guard lock(m_mutex);
                    m_samples.push_back(ms);
                    if (ms >= 0 && m_firstAnswerSeconds < 0)
                        m_firstAnswerSeconds
                            = std::chrono::duration<double>(std::chrono::steady_clock::now() - born)
                                  .count();
                }
                std::this_thread::sleep_until(started + every);
            }
        });
    }
    ~HealthProbe() { stop(); }

    // From the probe's start to its first answer; -1 before one came.
    double firstAnswerSeconds()
    {
        const std::lock_guard lock(m_mutex);
        return m_firstAnswerSeconds;
    }

    std::vector<double> stop()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
        const std::lock_guard lock(m_mutex);
        return m_samples;
    }

private:
    std::atomic<bool> m_stop { false };
    std::mutex m_mutex;
    std::vector<double> m_samples;
    double m_firstAnswerSeconds = -1;
    std::thread m_thread;
};

struct Spread
{
    double median = 0;
    double worst = 0;
    int failed = 0;
};

Spread spreadOf(const std::vector<double> &samples)
{
    Spread spread;
    std::vector<double> answered;
    for (const double sample : samples) {
        if (sample < 0)
            ++spread.failed;
        else
            answered.push_back(sample);
    }
    if (!answered.empty()) {
        spread.median = bench::median(answered);
        spread.worst = *std::max_element(answered.begin(), answered.end());
    }
    return spread;
}

QStringList enrollStraightIntoTheRecords(HubProcess &hub, int sessions)
{
    auto db = hub::Database::openSqlite(hub.databasePath(), cloop::Clock::system());
    if (!db)
        fail(db.error().message);
    hub::ForwarderStore store(**db);
    const auto device = protocol::DeviceSpec::parseUsb(u"1050:0407"_s);
    QStringList tokens;
    for (int i = 0; i < sessions; ++i) {
        auto enrolled = store.enroll(u"idle-%1"_s.arg(i), *device, u"bench"_s);
        if (!enrolled)
            fail(enrolled.error().message);
        tokens.append(enrolled->token);
    }
    return tokens;
}

int runBench(int sessions, int idleSeconds)
{
    rlimit limit { rlim_t(sessions + 4096), rlim_t(sessions + 4096) };
    ::setrlimit(RLIMIT_NOFILE, &limit);
    HubProcess hub;
    hub.setServeArguments({ u"--connection-rate"_s, u"100000"_s, u"--max-unauthenticated"_s,
        u"4096"_s, u"--max-unauthenticated-per-source"_s, u"4096"_s });
    hub.setOpenFilesLimit(sessions + 4096);
    if (!hub.start())
        fail(hub.transcript().right(3000));
    std::printf(
        "bench_sessions: %d forwarder sessions on one hub, idle for %d s\n", sessions, idleSeconds);

    QElapsedTimer took;
    took.start();
    const QStringList tokens = enrollStraightIntoTheRecords(hub, sessions);
    std::printf("  enrolled %d forwarders in %.1f s (straight into the records)\n", sessions,
        took.elapsed() / 1000.0);

    bench::SessionLoad load(
        { { QUrl(u"wss://127.0.0.1:%1"_s.arg(hub.port())), hub.pin() } }, tokens);
    const int inFlight = 25;
    took.restart();
    if (!load.connectAll(inFlight, std::chrono::minutes(30)))
        fail(u"only %1 of %2 sessions came up"_s.arg(load.liveCount()).arg(sessions));
    std::printf("  all connected from cold in %.1f s (%d dials in flight)\n",
        took.elapsed() / 1000.0, inFlight);

    QTest::qWait(3000);
    const bench::ProcessUse before = bench::useOf(hub.pid());
    took.restart();
    QTest::qWait(idleSeconds * 1000);
    const double seconds = took.elapsed() / 1000.0;
    const bench::ProcessUse after = bench::useOf(hub.pid());
    std::printf("  idle: %.0f MiB resident (%.1f KiB a session; goal 512 MiB), %.1f%% of a core "
                "(goal 5%%)\n",
        after.rssMiB, after.rssMiB * 1024.0 / sessions,
        100.0 * (after.cpuSeconds - before.cpuSeconds) / seconds);

    HealthProbe idleProbe(hub, std::chrono::milliseconds(100));
    QTest::qWait(2000);
    std::vector<double> health = idleProbe.stop();
    const Spread idleHealth = spreadOf(health);
    std::printf("  /api/health while idle: median %.1f ms, worst %.1f ms, %d unanswered of %zu "
                "(goal 20 ms)\n",
        idleHealth.median, idleHealth.worst, idleHealth.failed, health.size());

    std::vector<double> lists;
    for (int i = 0; i < 5; ++i) {
        took.restart();
        const CliResult listed = hub.cli({ u"forward"_s, u"list"_s });
        if (listed.exitCode != 0)
            fail(listed.describe().left(3000));
        lists.push_back(took.nsecsElapsed() / 1e6);
    }
    std::printf("  cloop forward list: median %.0f ms of 5, the command's own start included "
                "(goal 200 ms)\n",
        bench::median(lists));

    load.takeLossReasons();
    took.restart();
    const int stopped = hub.stop();
    std::printf("  hub shutdown with them connected: %.2f s, exit %d (goal 1 s)\n",
        took.elapsed() / 1000.0, stopped);
    // Every session notices and starts its backoff.
    if (!load.awaitLive(0, std::chrono::minutes(2)))
        fail(u"%1 sessions still live two minutes after the hub stopped"_s.arg(load.liveCount()));
    // The hub's reason, or what a session saw instead (a reset, a timeout).
    const QMap<QString, int> losses = load.takeLossReasons();
    for (auto loss = losses.cbegin(); loss != losses.cend(); ++loss)
        std::printf("    %d of them heard: %s\n", loss.value(), qPrintable(loss.key()));

    took.restart();
    if (!hub.relaunch())
        fail(hub.lastError());
    const double loadCpuBefore = bench::useOf(QCoreApplication::applicationPid()).cpuSeconds;
    load.markReturn();
    HealthProbe restartProbe(hub, std::chrono::milliseconds(200));
    const bool back = load.awaitLive(sessions, std::chrono::minutes(5));
    const double allBack = took.elapsed() / 1000.0;
    // Whose CPU the return took: the hub's, and this one process's, which
    // dials all the sessions on the same two cores.
    const double hubCpu = bench::useOf(hub.pid()).cpuSeconds;
    const double loadCpu
        = bench::useOf(QCoreApplication::applicationPid()).cpuSeconds - loadCpuBefore;
    const double firstAnswer = restartProbe.firstAnswerSeconds();
    health = restartProbe.stop();
    const Spread restartHealth = spreadOf(health);
    std::printf("  hub restart: first /api/health answer after %.1f s; %s %d of %d sessions back "
                "after %.1f s (goal 30 s)\n",
        firstAnswer, back ? "all" : "only", load.liveCount(), sessions, allBack);
    std::printf("  /api/health meanwhile: median %.1f ms, worst %.1f ms, %d unanswered of %zu "
                "(goal 200 ms)\n",
        restartHealth.median, restartHealth.worst, restartHealth.failed, health.size());
    std::printf("  CPU the return took: the hub %.1f s (%.2f ms a session), the sessions' own "
                "process %.1f s\n",
        hubCpu, 1000.0 * hubCpu / sessions, loadCpu);
    std::printf("    back: half after %.1f s, 90%% after %.1f s, 99%% after %.1f s\n",
        load.backAfter(0.5), load.backAfter(0.9), load.backAfter(0.99));
    // The attempts that failed on the way, by what the sessions were told
    // (the most frequent first), so the time can be put where it went.
    const QMap<QString, int> failures = load.takeAttemptFailures();
    std::vector<std::pair<int, QString>> byCount;
    int attemptsFailed = 0;
    for (auto failure = failures.cbegin(); failure != failures.cend(); ++failure) {
        byCount.emplace_back(failure.value(), failure.key());
        attemptsFailed += failure.value();
    }
    std::sort(byCount.rbegin(), byCount.rend());
    std::printf("    %d attempts failed on the way%s\n", attemptsFailed,
        byCount.empty() ? "" : ", most often:");
    for (size_t i = 0; i < std::min<size_t>(byCount.size(), 4); ++i)
        std::printf("      %d: %s\n", byCount[i].first, qPrintable(byCount[i].second.left(160)));

    took.restart();
    load.clear();
    std::printf(
        "  %d sessions closed by their ends in %.1f s\n", sessions, took.elapsed() / 1000.0);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    // Thousands of sockets in this process too.
    util::installScalableEventDispatcher();
    QCoreApplication app(argc, argv);
    // Figures as they come, also into a file.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const bench::PrivateScratch scratch;
    const int sessions = bench::argument(argc, argv, 1, 10000, kUsage);
    const int idleSeconds = bench::argument(argc, argv, 2, 30, kUsage);
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    qputenv("QT_LOGGING_RULES", "cloop.*.info=false");
    try {
        return runBench(sessions, idleSeconds);
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "%s: %s\n", g_program, failure.what());
        return 1;
    }
}
