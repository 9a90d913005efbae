// The aggregate TCP throughput of N forwarded segments at once against that
// of one. N forwarders each hold a segment of their own: a veth pair whose
// far end is in a lab namespace of its own, with an iperf3 server on the
// lab's address. Each is bound to a project of its own, whose run, on the
// one agent, holds it in a sandbox, all through the one hub. iperf3 runs
// from the first run's sandbox alone, then from all N at once, each against
// its own lab. Printed: the aggregate (the sum of what the N receivers
// counted), the spread among the streams, the ratio of the two aggregates,
// and in which processes the machine's CPU went during each phase. No
// figure passes or fails.
//
//   bench_streams [streams, default 8] [seconds per iperf3 run, default 5]
//       [-- more arguments for `cloop hub serve`]
//
// Needs root, podman, busybox-static and iperf3. Everything happens in
// network namespaces it makes (the process first moves into one of its
// own); the sandboxes' image is bench_segment's (sandboxruns.h).

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/sandboxruns.h"
#include "bench/sessionload.h"
#include "support/labnetwork.h"
#include "support/processutil.h"
#include "support/testrig.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include <unistd.h>

using namespace cloop::testing;
using cloop::bench::BenchFailed;
using cloop::bench::fail;

namespace {

const char *const kUsage
    = "bench_streams [streams] [seconds per iperf3 run] [-- arguments for 'cloop hub serve']";
// Stream i's lab is 10.78.(i+1).0/24.
constexpr int kMostStreams = 250;
// Starting many sandboxes, or many `podman exec`, on two cores takes a while.
constexpr int kStartMs = 10 * 60 * 1000;

QString projectOf(int stream)
{
    return QStringLiteral("/srv/projects/streams-%1").arg(stream);
}

QString labAddress(int stream)
{
    return QStringLiteral("10.78.%1.1").arg(stream + 1);
}

// What the binding gives the run's fwd0.
QString sandboxAddress(int stream)
{
    return QStringLiteral("10.78.%1.10").arg(stream + 1);
}

// CPU seconds used so far, or in a phase (the difference of two).
struct CpuTimes
{
    double hub = 0;
    double agent = 0;
    double forwarders = 0; // all of them
    double sandboxes = 0; // every process in the runs' sandboxes: the iperf3 clients
    double servers = 0; // the labs' iperf3 servers
    // Every CPU's time not idle: in any process, in the kernel, or taken by
    // the hypervisor (steal).
    double machine = 0;

    CpuTimes operator-(const CpuTimes &earlier) const
    {
        return { hub - earlier.hub, agent - earlier.agent, forwarders - earlier.forwarders,
            sandboxes - earlier.sandboxes, servers - earlier.servers, machine - earlier.machine };
    }
    // What no process listed took: the kernel's work charged to none of
    // them (softirqs), podman's conmon, steal, and whatever else runs.
    double rest() const { return machine - hub - agent - forwarders - sandboxes - servers; }
};

double machineBusySeconds()
{
    QFile stat(QStringLiteral("/proc/stat"));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    // "cpu user nice system idle iowait irq softirq steal ...", in ticks.
    const QList<QByteArray> fields = stat.readLine().simplified().split(' ');
    double busy = 0;
    for (const int field : { 1, 2, 3, 6, 7, 8 })
        busy += fields.value(field).toDouble();
    return busy / double(::sysconf(_SC_CLK_TCK));
}

// The file that counts the CPU time of the cgroup `pid` is in, exited
// processes included (a sandbox's iperf3 client is gone when the phase's
// figures are taken): cgroup v1's cpuacct.usage, or v2's cpu.stat; empty
// when there is neither.
QString cpuAccountOf(qint64 pid)
{
    QFile cgroups(QStringLiteral("/proc/%1/cgroup").arg(pid));
    if (!cgroups.open(QIODevice::ReadOnly))
        return {};
    QStringList candidates;
    // "ID:CONTROLLERS:PATH"; v2's line is "0::PATH".
    for (const QByteArray &line : cgroups.readAll().split('\n')) {
        const QList<QByteArray> fields = line.split(':');
        if (fields.size() < 3)
            continue;
        const QString path = QString::fromUtf8(fields.at(2));
        if (fields.at(1).split(',').contains("cpuacct")) {
            candidates.prepend(QStringLiteral("/sys/fs/cgroup/cpuacct%1/cpuacct.usage").arg(path));
            candidates.prepend(
                QStringLiteral("/sys/fs/cgroup/cpu,cpuacct%1/cpuacct.usage").arg(path));
        } else if (fields.at(1).isEmpty()) {
            candidates.append(QStringLiteral("/sys/fs/cgroup%1/cpu.stat").arg(path));
            candidates.append(QStringLiteral("/sys/fs/cgroup/unified%1/cpu.stat").arg(path));
        }
    }
    const auto found = std::find_if(candidates.begin(), candidates.end(),
        [](const QString &candidate) { return QFile::exists(candidate); });
    return found == candidates.end() ? QString() : *found;
}

double cpuSecondsOfAccount(const QString &account)
{
    QFile file(account);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray text = file.readAll();
    if (account.endsWith(QLatin1String("cpuacct.usage")))
        return text.trimmed().toDouble() / 1e9;
    for (const QByteArray &line : text.split('\n')) {
        if (line.startsWith("usage_usec "))
            return line.mid(11).toDouble() / 1e6;
    }
    return 0;
}

// One forwarded segment, the run that holds it and the lab at its far end.
struct Stream
{
    // The lab's namespace goes at a stopping signal too, where no
    // destructor runs (declared first: it runs after the lab's own).
    std::unique_ptr<cloop::bench::UndoOnExit> labUndo;
    std::unique_ptr<LabNetwork> lab;
    std::unique_ptr<QProcess> server; // iperf3 -s on the lab's address
    ForwarderProcess *forwarder = nullptr; // owned by the rig
    qint64 run = 0;
    QString sandbox; // the run's podman container
    QString cpuAccount; // its cgroup's CPU account (cpuAccountOf)
};

// What one phase measured: `gbits.size()` streams at once.
struct Phase
{
    std::vector<double> gbits; // each receiver's
    double seconds = 0; // from the go until the last client ended
    CpuTimes cpu; // used meanwhile

    double aggregate() const { return std::accumulate(gbits.begin(), gbits.end(), 0.0); }
};

class StreamsBench
{
public:
    StreamsBench(int streams, const QStringList &hubArguments);
    ~StreamsBench();
    StreamsBench(const StreamsBench &) = delete;
    StreamsBench &operator=(const StreamsBench &) = delete;

    // Hub, forwarders, labs, agent and one run a stream, each run's fwd0
    // addressed when it returns.
    void start(const QString &image);
    // iperf3 from the first `count` streams' sandboxes at once.
    Phase measure(int count, int seconds);

private:
    void addStream(int index);
    void startAgent();
    void queueRuns(const QString &image);
    void awaitRuns();
    CpuTimes cpuNow();

    const int m_streamCount;
    TestRig m_rig;
    ForwarderProcess *m_agent = nullptr; // owned by the rig
    std::vector<Stream> m_streams;
};

StreamsBench::StreamsBench(int streams, const QStringList &hubArguments)
    : m_streamCount(streams)
{
    m_rig.hub().setServeArguments(hubArguments);
}

StreamsBench::~StreamsBench()
{
    QList<qint64> runs;
    for (const Stream &stream : m_streams) {
        if (stream.run > 0)
            runs.append(stream.run);
    }
    if (m_agent)
        cloop::bench::cancelRuns(m_rig.hub(), runs, { m_agent });
    for (Stream &stream : m_streams) {
        stream.server->terminate();
        stream.server->waitForFinished(5000);
    }
}

void StreamsBench::start(const QString &image)
{
    if (!m_rig.startHub())
        fail(m_rig.lastError());
    for (int index = 0; index < m_streamCount; ++index)
        addStream(index);
    std::printf("%d forwarders connected and bound, an iperf3 server in each lab\n", m_streamCount);
    std::fflush(stdout);
    startAgent();
    queueRuns(image);
    awaitRuns();
    std::printf("%d runs hold their segments\n", m_streamCount);
    std::fflush(stdout);
}

void StreamsBench::addStream(int index)
{
    HubProcess &hub = m_rig.hub();
    Stream stream;
    const QString local = QStringLiteral("clst-seg%1").arg(index);
    stream.lab = std::make_unique<LabNetwork>(
        local, QStringLiteral("clst-lab%1").arg(index), labAddress(index) + QStringLiteral("/24"));
    if (!stream.lab->create())
        fail(stream.lab->lastError());
    stream.labUndo = std::make_unique<cloop::bench::UndoOnExit>(
        QStringLiteral("ip netns delete %1 2>/dev/null").arg(stream.lab->name()));
    stream.server = makeDaemonProcess();
    const QStringList serve = stream.lab->labCommand(
        // Its stdout is a pipe: unflushed, "Server listening" would not come.
        { QStringLiteral("iperf3"), QStringLiteral("-s"), QStringLiteral("--forceflush"),
            QStringLiteral("-B"), labAddress(index) });
    stream.server->start(serve.first(), serve.mid(1));
    QByteArray said;
    if (!waitUntil([&] {
            said += stream.server->readAllStandardOutput();
            return said.contains("Server listening");
        }))
        fail(QStringLiteral("lab %1's iperf3 server did not start: %2%3")
                 .arg(index)
                 .arg(QString::fromLocal8Bit(said),
                     QString::fromLocal8Bit(stream.server->readAllStandardError())));

    if (hub.cli({ QStringLiteral("project"), QStringLiteral("add"), projectOf(index) }).exitCode
        != 0)
        fail(hub.transcript());
    const Enrollment enrolled = hub.enroll(
        QStringLiteral("streams-%1").arg(index), { QStringLiteral("--interface"), local });
    if (!enrolled.ok)
        fail(enrolled.error);
    stream.forwarder = &m_rig.addForwarder({ QStringLiteral("--bundle"), enrolled.bundle });
    if (!m_rig.startAndAwaitConnection(*stream.forwarder, enrolled.id))
        fail(QStringLiteral("forwarder %1 did not come up: %2")
                 .arg(index)
                 .arg(stream.forwarder->describe()));
    if (hub.bind(enrolled.id, projectOf(index), QStringLiteral("12h"),
            { QStringLiteral("--address"), sandboxAddress(index) + QStringLiteral("/24") })
        == 0)
        fail(QStringLiteral("cannot bind forwarder %1: %2")
                 .arg(index)
                 .arg(hub.transcript().right(2000)));
    m_streams.push_back(std::move(stream));
}

void StreamsBench::startAgent()
{
    const QJsonObject executor
        = m_rig.hub()
              .cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                  QStringLiteral("--name"), QStringLiteral("streams"), QStringLiteral("--json") })
              .toObject();
    m_agent = &m_rig.addForwarder(
        { QStringLiteral("--bundle"), executor.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--max-concurrent"), QString::number(m_streamCount) },
        m_rig.newHome(), ForwarderProcess::Program::Agent);
    if (!m_agent->start()
        || !m_agent->waitForStderr(QStringLiteral("connected to the hub as executor")))
        fail(QStringLiteral("the agent did not come up: ") + m_agent->describe());
}

// Each run waits for the address its binding gives fwd0, says so, and
// holds the segment until it is cancelled.
void StreamsBench::queueRuns(const QString &image)
{
    for (int index = 0; index < m_streamCount; ++index) {
        const QString workload = cloop::bench::awaitForwardedAddress(sandboxAddress(index))
            + QStringLiteral("echo configured; exec sleep 86400");
        const CliResult queued
            = m_rig.hub().cli({ QStringLiteral("run"), QStringLiteral("--project"),
                projectOf(index), QStringLiteral("--image"), image, QStringLiteral("--no-wait"),
                QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), workload });
        if (queued.exitCode != 0)
            fail(queued.describe());
        m_streams.at(index).run = queued.stdoutText().trimmed().toLongLong();
    }
}

void StreamsBench::awaitRuns()
{
    for (Stream &stream : m_streams) {
        const QStringList logs { QStringLiteral("run"), QStringLiteral("logs"),
            QString::number(stream.run) };
        if (!waitUntil([&] { return m_rig.hub().cli(logs).stdoutText().contains(u"configured"); },
                kStartMs))
            fail(QStringLiteral("run %1 never said its fwd0 was configured: %2 %3")
                     .arg(stream.run)
                     .arg(m_rig.hub().cli(logs).stdoutText(), m_agent->stderrText().right(3000)));
        stream.sandbox = m_agent->sandboxOf(stream.run);
        const CliResult inspected = runProgram(QStringLiteral("podman"),
            { QStringLiteral("inspect"), QStringLiteral("--format"),
                QStringLiteral("{{.State.Pid}}"), stream.sandbox },
            QProcessEnvironment::systemEnvironment());
        stream.cpuAccount = cpuAccountOf(inspected.stdoutText().trimmed().toLongLong());
        if (stream.cpuAccount.isEmpty())
            fail(QStringLiteral("cannot find the CPU account of sandbox %1: %2")
                     .arg(stream.sandbox, inspected.describe()));
    }
}

CpuTimes StreamsBench::cpuNow()
{
    CpuTimes times;
    times.machine = machineBusySeconds();
    times.hub = cloop::bench::useOf(m_rig.hub().pid()).cpuSeconds;
    times.agent = cloop::bench::useOf(m_agent->processId()).cpuSeconds;
    for (const Stream &stream : m_streams) {
        times.forwarders += cloop::bench::useOf(stream.forwarder->processId()).cpuSeconds;
        times.sandboxes += cpuSecondsOfAccount(stream.cpuAccount);
        // `ip netns exec` runs iperf3 in its own process.
        times.servers += cloop::bench::useOf(stream.server->processId()).cpuSeconds;
    }
    return times;
}

// Each client waits in its sandbox for a line on stdin before it starts, so
// that all start together however long podman takes to start them.
Phase StreamsBench::measure(int count, int seconds)
{
    std::vector<std::unique_ptr<QProcess>> clients;
    std::vector<QByteArray> said(count);
    for (int index = 0; index < count; ++index) {
        auto client = std::make_unique<QProcess>();
        client->start(QStringLiteral("podman"),
            { QStringLiteral("exec"), QStringLiteral("-i"), m_streams.at(index).sandbox,
                QStringLiteral("sh"), QStringLiteral("-c"),
                QStringLiteral("echo ready; read go; exec ")
                    + cloop::bench::iperfLine(labAddress(index), seconds) });
        clients.push_back(std::move(client));
    }
    const auto readOutput = [&] {
        for (int index = 0; index < count; ++index)
            said[index] += clients[index]->readAllStandardOutput();
    };
    const auto clientsSaid = [&] {
        QString all;
        for (int index = 0; index < count; ++index)
            all += QStringLiteral("stream %1: %2%3\n")
                       .arg(index)
                       .arg(QString::fromLocal8Bit(said[index]),
                           QString::fromLocal8Bit(clients[index]->readAllStandardError()));
        return all;
    };
    if (!waitUntil(
            [&] {
                readOutput();
                return std::all_of(said.begin(), said.end(),
                    [](const QByteArray &output) { return output.startsWith("ready\n"); });
            },
            kStartMs))
        fail(QStringLiteral("the iperf3 clients did not all start: ") + clientsSaid());

    Phase phase;
    const CpuTimes before = cpuNow();
    QElapsedTimer clock;
    clock.start();
    for (const auto &client : clients) {
        client->write("go\n");
        client->closeWriteChannel();
    }
    const bool ended = waitUntil(
        [&] {
            return std::all_of(clients.begin(), clients.end(),
                [](const auto &client) { return client->state() == QProcess::NotRunning; });
        },
        (seconds + 120) * 1000);
    phase.seconds = double(clock.elapsed()) / 1000;
    phase.cpu = cpuNow() - before;
    readOutput();
    if (!ended)
        fail(QStringLiteral("the iperf3 clients did not all end: ") + clientsSaid());
    for (int index = 0; index < count; ++index) {
        const QByteArray &output = said[index];
        phase.gbits.push_back(cloop::bench::gbitsFromIperf(output.mid(output.indexOf('{'))));
        if (phase.gbits.back() <= 0)
            fail(QStringLiteral("stream %1 measured nothing: ").arg(index) + clientsSaid());
    }
    return phase;
}

void printThroughput(const Phase &phase)
{
    std::vector<double> sorted = phase.gbits;
    std::sort(sorted.begin(), sorted.end());
    std::printf("%7zu %17.2f %9.2f %9.2f %9.2f\n", sorted.size(), phase.aggregate(), sorted.front(),
        cloop::bench::median(sorted), sorted.back());
    std::fflush(stdout);
}

// In cores: CPU seconds a second of the phase.
void printCpu(const Phase &phase)
{
    const CpuTimes &cpu = phase.cpu;
    const double wall = phase.seconds;
    std::printf("%7zu %8.2f %6.2f %6.2f %11.2f %10.2f %15.2f %6.2f %8.2f\n", phase.gbits.size(),
        wall, cpu.hub / wall, cpu.agent / wall, cpu.forwarders / wall, cpu.sandboxes / wall,
        cpu.servers / wall, cpu.rest() / wall, cpu.machine / wall);
}

int runBench(int streams, int seconds, const QStringList &hubArguments)
{
    if (streams > kMostStreams)
        fail(QStringLiteral("at most %1 streams").arg(kMostStreams));
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        fail(why);
    if (const QString why = cloop::bench::IperfImage::unavailable(); !why.isEmpty())
        fail(why);
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        fail(why);
    const cloop::bench::IperfImage image;

    std::printf("bench_streams: %d segment streams, each `%s` from its run's sandbox to its own "
                "lab; hub: cloop hub serve %s\n",
        streams, qPrintable(cloop::bench::iperfLine(QStringLiteral("LAB"), seconds)),
        qPrintable(hubArguments.join(QLatin1Char(' '))));
    std::fflush(stdout);
    StreamsBench bench(streams, hubArguments);
    bench.start(image.name());
    std::printf("%7s %17s %9s %9s %9s  (per stream, Gbit/s)\n", "streams", "aggregate Gbit/s",
        "min", "median", "max");
    const Phase one = bench.measure(1, seconds);
    printThroughput(one);
    const Phase all = bench.measure(streams, seconds);
    printThroughput(all);
    std::printf("aggregate(%d) / aggregate(1): %.2f  (the target at 8: at least 1.6)\n", streams,
        all.aggregate() / one.aggregate());
    std::printf("CPU in each phase, in cores (CPU seconds a second; this machine has %ld); rest: "
                "the kernel's work charged to none of these, conmon, steal, anything else\n",
        ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("%7s %8s %6s %6s %11s %10s %15s %6s %8s\n", "streams", "seconds", "hub", "agent",
        "forwarders", "sandboxes", "iperf3 servers", "rest", "machine");
    printCpu(one);
    printCpu(all);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const cloop::bench::PrivateScratch scratch;
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    // Everything after "--" is the hub's.
    int ours = argc;
    QStringList hubArguments;
    for (int index = 1; index < argc; ++index) {
        if (ours == argc && std::strcmp(argv[index], "--") == 0)
            ours = index;
        else if (ours < argc)
            hubArguments.append(QString::fromLocal8Bit(argv[index]));
    }
    const int streams = cloop::bench::argument(ours, argv, 1, 8, kUsage);
    const int seconds = cloop::bench::argument(ours, argv, 2, 5, kUsage);
    try {
        return runBench(streams, seconds, hubArguments);
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "bench_streams: %s\n", failure.what());
        return 1;
    }
}
