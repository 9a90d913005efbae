// A hub cluster on a real PostgreSQL server (the bench starts it), measured:
//
//  1. Revocation across members: a forwarder revoked through member A, and
//     the time until member B applies it (its event stream says so, in the
//     same turn its dispatcher detaches the device); p50 and p99 over N
//     revocations. Also how soon A cuts the session of a forwarder revoked
//     through B.
//  2. Idle sessions: N real TLS WebSocket forwarder sessions (this process
//     dials them, answering heartbeats as forwarders do), spread over two
//     members; the database's writes per second while they idle (WAL
//     bytes, rows written, transactions), each member's memory and CPU.
//  3. A forwarded USB device through the holder (forwarder on A, agent on
//     B; the agent's direct leg to A, and B relaying when the agent cannot
//     reach A) against the same on one member, all three up at once and
//     measured in turn over five rounds: control round trips (p50, p99)
//     and bulk throughput, as ratios. Needs root and podman (a run must
//     hold the device); skipped, saying why, without them.
//
//   bench_cluster [sessions, default 10000] [revocations, default 100]
//                 [idle seconds, default 30]

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/sessionload.h"
#include "common/net/hubtls.h"
#include "common/protocol/devicespec.h"
#include "common/tunnel/tunnelclient.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "support/eventclient.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"
#include "support/packetfilter.h"
#include "support/postgresserver.h"
#include "support/processutil.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace cloop;
using namespace cloop::testing;
using namespace cloop::testsupport::usb;
using namespace Qt::StringLiterals;

namespace {

const char *const kUsage = "bench_cluster [sessions] [revocations] [idle seconds]";
const char *g_program = "bench_cluster";

using cloop::bench::BenchFailed;
using cloop::bench::fail;

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const size_t at = std::min(values.size() - 1, size_t(p * double(values.size() - 1) + 0.5));
    return values[at];
}

// Two members on one database, with room for many sessions.
struct Cluster
{
    // Before the server: at a normal end the server's destructor has
    // stopped it and removed its folder, and this finds nothing to do.
    std::unique_ptr<bench::UndoOnExit> serverUndo;
    PostgresServer server;
    QTemporaryDir scratch;
    QString database;
    QStringList databaseOptions;
    std::unique_ptr<HubProcess> a;
    std::unique_ptr<HubProcess> b;

    void start(int sessions)
    {
        const bool started = server.start();
        // A server pg_ctl started outlives this process unless told to stop
        // (SIGQUIT: at once); its folder is outside the private scratch,
        // where the postgres user may enter.
        serverUndo = std::make_unique<bench::UndoOnExit>(
            u"d=%1; for f in $(find \"$d\" -name postmaster.pid 2>/dev/null); do "
            "kill -QUIT $(head -n 1 \"$f\") 2>/dev/null; sleep 1; done; rm -rf \"$d\""_s.arg(
                bench::shellQuoted(server.socketDirectory())));
        if (!started)
            fail(u"no PostgreSQL server: "_s + server.lastError());
        database = server.createDatabase();
        if (database.isEmpty())
            fail(server.lastError());
        const QString password = scratch.filePath(u"password"_s);
        QFile file(password);
        if (!file.open(QIODevice::WriteOnly))
            fail(u"cannot write the password file"_s);
        file.write(server.password().toUtf8() + '\n');
        file.close();
        file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        databaseOptions = { u"--database"_s,
            u"host=%1 dbname=%2 user=%3"_s.arg(server.socketDirectory(), database, server.user()),
            u"--database-password-file"_s, password };
        const QStringList roomy = databaseOptions
            + QStringList { u"--connection-rate"_s, u"100000"_s, u"--max-unauthenticated"_s,
                  u"4096"_s, u"--max-unauthenticated-per-source"_s, u"4096"_s };
        a = std::make_unique<HubProcess>();
        b = std::make_unique<HubProcess>();
        for (HubProcess *hub : { a.get(), b.get() }) {
            hub->setServeArguments(roomy);
            hub->setOpenFilesLimit(sessions + 4096);
            if (!hub->start())
                fail(hub->transcript());
        }
    }

    // One SQL statement's first value, through psql.
    QString sql(const QString &statement)
    {
        const CliResult result = runProgram(u"psql"_s,
            { u"-h"_s, server.socketDirectory(), u"-U"_s, server.user(), u"-d"_s, database,
                u"-tAc"_s, statement },
            [this] {
                QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
                environment.insert(u"PGPASSWORD"_s, server.password());
                return environment;
            }());
        return result.stdoutText().trimmed();
    }
};

// 1. Revocations.
void revocations(Cluster &cluster, int count)
{
    std::printf("\n1. Revocation across members (%d revocations)\n", count);
    EventClient onA(*cluster.a);
    EventClient onB(*cluster.b);
    if (!onA.subscribe(cluster.a->adminToken()) || !onB.subscribe(cluster.b->adminToken()))
        fail(u"cannot subscribe to the members' events"_s);
    // When a member's event stream says the forwarder was revoked.
    const auto heardOn = [](const EventClient &stream, qint64 id) {
        for (qsizetype m = stream.messages.size() - 1; m >= 0; --m) {
            const QJsonObject &message = stream.messages.at(m);
            if (message.value("event"_L1).toString() == u"forwarder.revoked"_s
                && message.value("data"_L1).toObject().value("id"_L1).toInteger() == id)
                return true;
        }
        return false;
    };
    std::vector<double> applied;
    std::vector<double> acrossTheBus;
    for (int i = 0; i < count; ++i) {
        const Enrollment enrolled = cluster.a->enroll(u"revoked-%1"_s.arg(i));
        if (!enrolled.ok)
            fail(enrolled.error);
        // Through A's API, timed from the request to B's event, and from
        // A's own event to B's.
        QProcess revoke;
        revoke.setProcessEnvironment(cluster.a->cliEnvironment());
        revoke.start(binaryPath(u"cloop"_s),
            { u"forward"_s, u"revoke"_s, QString::number(enrolled.id), u"--reason"_s, u"bench"_s });
        QElapsedTimer took;
        took.start();
        double onAAt = -1;
        double onBAt = -1;
        (void)QTest::qWaitFor(
            [&] {
                if (onAAt < 0 && heardOn(onA, enrolled.id))
                    onAAt = double(took.nsecsElapsed()) / 1e6;
                if (onBAt < 0 && heardOn(onB, enrolled.id))
                    onBAt = double(took.nsecsElapsed()) / 1e6;
                return onAAt >= 0 && onBAt >= 0;
            },
            10'000);
        revoke.waitForFinished(30'000);
        if (onBAt < 0 || onAAt < 0)
            fail(u"a member never heard of revocation %1"_s.arg(i));
        applied.push_back(onBAt);
        acrossTheBus.push_back(std::max(0.0, onBAt - onAAt));
    }
    std::printf("   revoked through A, applied on B: p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  "
                "(goal: p99 <= 100 ms; includes starting the cloop command)\n",
        percentile(applied, 0.5), percentile(applied, 0.99), percentile(applied, 1.0));
    std::printf("   of which from A's event to B's:  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n",
        percentile(acrossTheBus, 0.5), percentile(acrossTheBus, 0.99),
        percentile(acrossTheBus, 1.0));

    // The session cut on A, revoked through B.
    const int cuts = std::min(count, 20);
    std::vector<double> cut;
    for (int i = 0; i < cuts; ++i) {
        const Enrollment enrolled = cluster.a->enroll(u"cut-%1"_s.arg(i));
        QTemporaryDir home;
        ForwarderProcess forwarder({ u"--bundle"_s, enrolled.bundle }, home.path());
        if (!forwarder.start() || !forwarder.waitForStderr(u"connected to the hub as forwarder"_s))
            fail(forwarder.describe());
        QElapsedTimer took;
        took.start();
        const CliResult revoked = cluster.b->cli(
            { u"forward"_s, u"revoke"_s, QString::number(enrolled.id), u"--reason"_s, u"bench"_s });
        if (revoked.exitCode != 0 || !forwarder.waitForExit())
            fail(revoked.describe() + forwarder.describe());
        cut.push_back(double(took.nsecsElapsed()) / 1e6);
    }
    std::printf(
        "   revoked through B, session on A cut: p50 %6.1f ms  p99 %6.1f ms  (%d forwarders)\n",
        percentile(cut, 0.5), percentile(cut, 0.99), cuts);
}

// 2. Idle sessions.
void idleSessions(Cluster &cluster, int sessions, int idleSeconds)
{
    std::printf("\n2. %d idle forwarder sessions over two members\n", sessions);
    auto db = hub::Database::openPostgres(
        cluster.server.connectionString(cluster.database), cloop::Clock::system());
    if (!db)
        fail(db.error().message);
    hub::ForwarderStore store(**db);
    const auto device = protocol::DeviceSpec::parseUsb(u"1050:0407"_s);
    QStringList tokens;
    QElapsedTimer took;
    took.start();
    for (int i = 0; i < sessions; ++i) {
        auto enrolled = store.enroll(u"idle-%1"_s.arg(i), *device, u"bench"_s);
        if (!enrolled)
            fail(enrolled.error().message);
        tokens.append(enrolled->token);
    }
    std::printf("   enrolled %d forwarders in %.1f s (straight into the records)\n", sessions,
        took.elapsed() / 1000.0);

    rlimit limit { rlim_t(sessions + 4096), rlim_t(sessions + 4096) };
    ::setrlimit(RLIMIT_NOFILE, &limit);
    bench::SessionLoad load(
        { { QUrl(u"wss://127.0.0.1:%1"_s.arg(cluster.a->port())), cluster.a->pin() },
            { QUrl(u"wss://127.0.0.1:%1"_s.arg(cluster.b->port())), cluster.b->pin() } },
        tokens);
    const int inFlight = 25;
    took.restart();
    if (!load.connectAll(inFlight, std::chrono::minutes(30)))
        fail(u"only %1 of %2 sessions came up"_s.arg(load.liveCount()).arg(sessions));
    std::printf("   all connected from cold in %.1f s (%d dials in flight)\n",
        took.elapsed() / 1000.0, inFlight);

    // Settle, then watch the database while nothing happens.
    QTest::qWait(3000);
    const qint64 walBefore = cluster.sql(u"SELECT pg_current_wal_lsn() - '0/0'"_s).toLongLong();
    const auto rowsAndCommits = [&] {
        const QStringList values
            = cluster
                  .sql(u"SELECT tup_inserted + tup_updated + tup_deleted, xact_commit FROM "
                       "pg_stat_database WHERE datname = current_database()"_s)
                  .split(u'|');
        return std::make_pair(values.value(0).toLongLong(), values.value(1).toLongLong());
    };
    const auto [rowsBefore, commitsBefore] = rowsAndCommits();
    const bench::ProcessUse aBefore = bench::useOf(cluster.a->pid());
    const bench::ProcessUse bBefore = bench::useOf(cluster.b->pid());
    QElapsedTimer idle;
    idle.start();
    QTest::qWait(idleSeconds * 1000);
    const double seconds = idle.elapsed() / 1000.0;
    const bench::ProcessUse aAfter = bench::useOf(cluster.a->pid());
    const bench::ProcessUse bAfter = bench::useOf(cluster.b->pid());
    // Statistics reach the view once a second or so.
    QTest::qWait(1500);
    const auto [rowsAfter, commitsAfter] = rowsAndCommits();
    const qint64 walAfter = cluster.sql(u"SELECT pg_current_wal_lsn() - '0/0'"_s).toLongLong();
    std::printf("   database while idle for %.0f s: %.2f rows written/s, %.1f transactions/s, "
                "%.0f WAL bytes/s (goal: under 10 writes/s)\n",
        seconds, double(rowsAfter - rowsBefore) / seconds,
        double(commitsAfter - commitsBefore) / seconds, double(walAfter - walBefore) / seconds);
    for (const auto &[name, before, after] :
        { std::tuple { "A", aBefore, aAfter }, std::tuple { "B", bBefore, bAfter } })
        std::printf("   member %s: %.0f MiB resident (%.1f KiB a session), %.1f%% of a core while "
                    "idle\n",
            name, after.rssMiB, after.rssMiB * 1024.0 / (sessions / 2.0),
            100.0 * (after.cpuSeconds - before.cpuSeconds) / seconds);
    took.restart();
    load.clear();
    std::printf("   %d sessions closed in %.1f s\n", sessions, took.elapsed() / 1000.0);
}

// 3. A USB device through the holder against one member.
QString nodeOf(const QJsonObject &ports)
{
    for (const QJsonValue &port : ports.value("ports"_L1).toArray())
        if (const QString node = port.toObject().value("node"_L1).toString(); !node.isEmpty())
            return node;
    return {};
}

// How the agent on B reaches a forwarder A holds.
enum class Leg
{
    Direct, // it dials A itself (protocol 30)
    Relayed // it cannot reach A's daemon port: B relays through A
};

// A USB stand-in device on a forwarder of `forwarderHub`, lent to a run of
// an agent on B for as long as this lives. The run ends before its agent
// does: a busy member may pass the cancel on late, and an agent stopped
// first would leave its sandbox behind.
class LentUsbDevice
{
public:
    LentUsbDevice(Cluster &cluster, HubProcess &forwarderHub, const QString &name, Leg leg)
        : m_agentHub(*cluster.b)
    {
        FixtureDevice device;
        device.busId = u"1-1"_s;
        device.vendorId = 0x1d50;
        device.productId = 0x6089;
        if (!UsbFixture::makeForwarderMachine(m_forwarderRoot.path(), { device })
            || !UsbFixture::makeAgentMachine(m_agentRoot.path()))
            fail(u"cannot make the fixture trees"_s);
        const QString project = u"/srv/projects/"_s + name;
        m_agentHub.cli({ u"project"_s, u"add"_s, project });
        const Enrollment enrolled = forwarderHub.enroll(name, { u"--usb"_s, u"1d50:6089"_s });
        if (!enrolled.ok)
            fail(enrolled.error);
        m_forwarder
            = std::make_unique<ForwarderProcess>(QStringList { u"--bundle"_s, enrolled.bundle },
                m_forwarderHome.path(), ForwarderProcess::Program::ForwarderUsbStandIn);
        m_forwarder->setEnvironmentVariable(u"CLOOP_USB_STANDIN"_s, u"forwarder"_s);
        m_forwarder->setEnvironmentVariable(u"CLOOP_SYSFS_ROOT"_s, m_forwarderRoot.path());
        if (!m_forwarder->start() || !m_forwarder->waitForStderr(u"is present as"_s))
            fail(m_forwarder->describe());
        const QJsonObject executor
            = m_agentHub.cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, name, u"--json"_s })
                  .toObject();
        m_agent = std::make_unique<ForwarderProcess>(
            QStringList { u"--bundle"_s, executor.value("bundle"_L1).toString() },
            m_agentHome.path(), ForwarderProcess::Program::AgentUsbStandIn);
        m_agent->setEnvironmentVariable(u"CLOOP_USB_STANDIN"_s, u"agent"_s);
        m_agent->setEnvironmentVariable(u"CLOOP_SYSFS_ROOT"_s, m_agentRoot.path());
        m_agent->setEnvironmentVariable(u"CLOOP_DEV_ROOT"_s, m_agentRoot.path());
        if (!m_agent->start() || !m_agent->waitForStderr(u"connected to the hub as executor"_s))
            fail(m_agent->describe());
        if (forwarderHub.bind(enrolled.id, project) == 0)
            fail(forwarderHub.transcript().right(2000));
        // New connections to the holder's daemon port are reset while the
        // run starts; the forwarder's session, already up, goes on.
        std::unique_ptr<PacketFilter> reset;
        std::unique_ptr<bench::UndoOnExit> resetUndo;
        if (leg == Leg::Relayed) {
            reset = std::make_unique<PacketFilter>(
                PacketFilter::resetNewConnections(forwarderHub.port()));
            resetUndo = std::make_unique<bench::UndoOnExit>(
                u"nft delete table inet %1 2>/dev/null"_s.arg(reset->table()));
            if (!reset->error().isEmpty())
                fail(reset->error());
        }
        const CliResult queued = m_agentHub.cli({ u"run"_s, u"--project"_s, project,
            u"--executor"_s, name, u"--no-wait"_s, u"--"_s, u"sleep"_s, u"3600"_s });
        if (queued.exitCode != 0)
            fail(queued.describe());
        m_runId = queued.stdoutText().trimmed();
        StandInControl control(m_agentRoot.path());
        waitUntil([&] {
            auto ports = control.call({ { u"op"_s, u"ports"_s } });
            m_node = ports ? nodeOf(*ports) : QString();
            return !m_node.isEmpty();
        });
        if (m_node.isEmpty())
            fail(u"the run's device did not attach: "_s + m_agent->stderrText().right(2000));
        if ((leg == Leg::Relayed)
            != m_agent->stderrText().contains(u"so its hub carries the stream"_s))
            fail(u"the stream did not take the leg it was meant to: "_s
                + m_agent->stderrText().right(2000));
    }

    ~LentUsbDevice()
    {
        m_agentHub.cli({ u"run"_s, u"cancel"_s, m_runId });
        if (!m_agent->waitForStderr(u"run %1 finished"_s.arg(m_runId), 120'000))
            std::fprintf(
                stderr, "bench_cluster: run %s did not end within 120 s\n", qPrintable(m_runId));
    }

    LentUsbDevice(const LentUsbDevice &) = delete;
    LentUsbDevice &operator=(const LentUsbDevice &) = delete;

    QJsonObject measure(const TransferMeasurement &measure)
    {
        StandInControl control(m_agentRoot.path());
        auto measured = control.call(
            { { u"op"_s, u"measure"_s }, { u"node"_s, m_node },
                { u"control_count"_s, measure.controlCount },
                { u"bulk_bytes"_s, measure.bulkBytes }, { u"urb_bytes"_s, measure.urbBytes },
                { u"bulk_in_flight"_s, measure.bulkInFlight } },
            30 * 60 * 1000);
        if (!measured)
            fail(measured.error().message);
        return *measured;
    }

private:
    HubProcess &m_agentHub;
    QTemporaryDir m_forwarderRoot;
    QTemporaryDir m_agentRoot;
    QTemporaryDir m_forwarderHome;
    QTemporaryDir m_agentHome;
    std::unique_ptr<ForwarderProcess> m_forwarder;
    std::unique_ptr<ForwarderProcess> m_agent;
    QString m_runId;
    QString m_node;
};

double median(std::vector<double> values)
{
    return percentile(std::move(values), 0.5);
}

void deviceStreams(Cluster &cluster)
{
    std::printf("\n3. A USB device's stream through the holder against one member\n");
    if (const QString why = sandboxesUnavailable(); !why.isEmpty()) {
        std::printf("   skipped: %s\n", qPrintable(why));
        return;
    }
    // The three paths are up at once and measured in turn, round after
    // round, so that what the machine does meanwhile falls on all three;
    // each ratio is taken within a round, and the median is shown.
    constexpr int kRounds = 5;
    TransferMeasurement measure;
    measure.controlCount = 2000 / kRounds;
    measure.bulkBytes = (128 << 20) / kRounds;
    struct Path
    {
        const char *what;
        std::unique_ptr<LentUsbDevice> device;
        std::vector<double> p50, p99, bulk;
    };
    std::array<Path, 3> paths { {
        { "one member (agent and forwarder on B)",
            std::make_unique<LentUsbDevice>(cluster, *cluster.b, u"onemember"_s, Leg::Direct), {},
            {}, {} },
        { "A holds it, the agent's direct leg",
            std::make_unique<LentUsbDevice>(cluster, *cluster.a, u"directleg"_s, Leg::Direct), {},
            {}, {} },
        { "A holds it, relayed by B (no leg)",
            std::make_unique<LentUsbDevice>(cluster, *cluster.a, u"relayedbyb"_s, Leg::Relayed), {},
            {}, {} },
    } };
    for (int round = 0; round < kRounds; ++round) {
        for (Path &path : paths) {
            const QJsonObject figures = path.device->measure(measure);
            path.p50.push_back(figures.value("control_p50_us"_L1).toDouble());
            path.p99.push_back(figures.value("control_p99_us"_L1).toDouble());
            path.bulk.push_back(figures.value("bulk_mb_per_s"_L1).toDouble());
        }
    }
    std::printf("   medians of %d rounds of %d control transfers and %d MiB each\n", kRounds,
        measure.controlCount, int(measure.bulkBytes >> 20));
    for (const Path &path : paths)
        std::printf("   %-40s control p50 %7.1f us  p99 %7.1f us   bulk %7.1f MB/s\n", path.what,
            median(path.p50), median(path.p99), median(path.bulk));
    const Path &one = paths[0];
    for (const auto &[what, path] :
        { std::pair { "direct leg", &paths[1] }, std::pair { "relayed by B", &paths[2] } }) {
        std::vector<double> rtt, tail, throughput;
        for (int round = 0; round < kRounds; ++round) {
            rtt.push_back(path->p50[round] / one.p50[round]);
            tail.push_back(path->p99[round] / one.p99[round]);
            throughput.push_back(100.0 * path->bulk[round] / one.bulk[round]);
        }
        const auto [rttLow, rttHigh] = std::minmax_element(rtt.cbegin(), rtt.cend());
        std::printf("   %-12s / one member: RTT p50 %.2fx (%.2f-%.2f; goal <= 1.3x), p99 %.2fx, "
                    "throughput %.0f%% (goal >= 80%%)\n",
            what, median(rtt), *rttLow, *rttHigh, median(tail), median(throughput));
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bench::PrivateScratch scratch;
    const int sessions = bench::argument(argc, argv, 1, 10000, kUsage);
    const int revocationCount = bench::argument(argc, argv, 2, 100, kUsage);
    const int idleSeconds = bench::argument(argc, argv, 3, 30, kUsage);
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    // The hubs' own lines would drown the figures.
    qputenv("QT_LOGGING_RULES", "cloop.*.info=false");
    try {
        Cluster cluster;
        cluster.start(sessions);
        revocations(cluster, revocationCount);
        deviceStreams(cluster);
        idleSessions(cluster, sessions, idleSeconds);
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "%s: %s\n", g_program, failure.what());
        return 1;
    }
    return 0;
}
