// A forwarded segment end to end: TCP throughput (iperf3) and ping RTT
// from a sandboxed run to the lab through forwarder → hub → agent → TAP,
// side by side, in the same run, with a direct veth between two namespaces
// and with an OpenSSH Ethernet tunnel (ssh -w, tap at both ends) between
// two more, all on this machine; printed as ratios. Every path runs the
// same ping line and the same iperf3 line, with TCP_NODELAY (-N); the
// chain's and SSH's own connections have it too.
//
//   bench_segment [seconds per iperf3 run, default 5] [repetitions, default 1]
//
// Needs root, podman, busybox-static, iperf3 and OpenSSH (client and
// server; the system's sshd is never used: the benchmark starts its own).
// Everything happens in network namespaces it makes (the process first
// moves into one of its own); the sandbox's image is busybox plus the
// host's iperf3 and the libraries it links, imported locally.

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/relaypaths.h"
#include "bench/sandboxruns.h"
#include "support/labnetwork.h"
#include "support/testrig.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cloop::testing;

namespace {

const char *const kUsage = "bench_segment [seconds per iperf3 run] [repetitions]";
const char *g_program = "bench_segment";
const QString kProject = QStringLiteral("/srv/projects/bench");

using cloop::bench::BenchFailed;
using cloop::bench::fail;
using cloop::bench::gbitsFromIperf;
using cloop::bench::iperfLine;
using cloop::bench::mustRun;

CliResult sh(const QString &script, int timeoutMs = 120'000)
{
    return runProgram(QStringLiteral("sh"), { QStringLiteral("-c"), script },
        QProcessEnvironment::systemEnvironment(), timeoutMs);
}

// The same ping on every path: busybox's, because the sandbox has no other.
QString pingLine(const QString &address)
{
    return QStringLiteral("busybox ping -c 20 -i 0.2 %1").arg(address);
}

struct Figures
{
    double gbits = 0;
    double rttMs = 0;
};

double rttFromPing(const QString &output)
{
    // iputils: "rtt min/avg/max/mdev = a/b/c/d ms"; busybox: "round-trip min/avg/max = a/b/c ms"
    const QRegularExpressionMatch match
        = QRegularExpression(QStringLiteral("= [0-9.]+/([0-9.]+)/")).match(output);
    return match.hasMatch() ? match.captured(1).toDouble() : -1;
}

// A signal stopping the benchmark leaves the lab's named namespace behind
// (the process's own namespace, and the links in it, go with the process).
QString undoLab(const LabNetwork &lab)
{
    return QStringLiteral("ip netns delete %1 2>/dev/null").arg(lab.name());
}

// iperf3's server started by `serve`; the ping line, then iperf3's client,
// from the namespace `client` to `address`.
Figures measureBetween(
    const QStringList &serve, const QString &client, const QString &address, int seconds)
{
    QProcess server;
    server.start(serve.first(), serve.mid(1));
    server.waitForStarted();
    QThread::msleep(300);
    Figures figures;
    const CliResult ping = sh(QStringLiteral("ip netns exec %1 %2").arg(client, pingLine(address)));
    figures.rttMs = rttFromPing(ping.stdoutText());
    const CliResult iperf
        = sh(QStringLiteral("ip netns exec %1 %2").arg(client, iperfLine(address, seconds)),
            (seconds + 30) * 1000);
    figures.gbits = gbitsFromIperf(iperf.out);
    server.waitForFinished(5000);
    if (figures.gbits <= 0 || figures.rttMs < 0)
        std::fprintf(stderr, "%s: from %s to %s:\n%s\n%s\n", g_program, qPrintable(client),
            qPrintable(address), qPrintable(ping.describe()), qPrintable(iperf.describe()));
    return figures;
}

// Two namespaces joined by a veth pair: what the chain is compared with.
Figures measureDirect(int seconds)
{
    const QString client = QStringLiteral("cloop-bench-direct-%1").arg(::getpid());
    LabNetwork lab(
        QStringLiteral("clb-direct"), QStringLiteral("clb-lab"), QStringLiteral("198.51.100.1/24"));
    const cloop::bench::UndoOnExit labUndo(undoLab(lab));
    if (!lab.create())
        fail(lab.lastError());
    const cloop::bench::UndoOnExit clientUndo(
        QStringLiteral("ip netns delete %1 2>/dev/null").arg(client));
    mustRun(QStringLiteral(
        "ip netns add %1 && ip link set clb-direct netns %1 && "
        "ip -n %1 addr add 198.51.100.10/24 dev clb-direct && ip -n %1 link set clb-direct up && "
        "ip -n %1 link set lo up")
                .arg(client));
    return measureBetween(
        lab.labCommand({ QStringLiteral("iperf3"), QStringLiteral("-s"), QStringLiteral("-1") }),
        client, QStringLiteral("198.51.100.1"), seconds);
}

// The same through forwarder → hub → agent → TAP into a podman sandbox.
Figures measureChain(TestRig &rig, LabNetwork &lab, const QString &image, int seconds)
{
    HubProcess &hub = rig.hub();
    QProcess server;
    const QStringList serve
        = lab.labCommand({ QStringLiteral("iperf3"), QStringLiteral("-s"), QStringLiteral("-1") });
    server.start(serve.first(), serve.mid(1));
    server.waitForStarted();
    const QString workload = cloop::bench::awaitForwardedAddress(QStringLiteral("192.0.2.10"))
        + QStringLiteral("sleep 0.5; %1 | tail -n 1; %2")
              .arg(pingLine(QStringLiteral("192.0.2.1")),
                  iperfLine(QStringLiteral("192.0.2.1"), seconds));
    const CliResult ran = hub.cli(
        { QStringLiteral("run"), QStringLiteral("--project"), kProject, QStringLiteral("--image"),
            image, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"), workload },
        (seconds + 60) * 1000);
    server.waitForFinished(5000);
    if (ran.exitCode != 0)
        fail(QStringLiteral("the benchmark run failed: ") + ran.describe());
    Figures figures;
    const QString output = ran.stdoutText();
    figures.rttMs = rttFromPing(output);
    figures.gbits = gbitsFromIperf(ran.out.mid(ran.out.indexOf('{')));
    if (figures.gbits <= 0)
        std::fprintf(stderr, "%s: the run printed:\n%s\n%s\n", g_program, ran.out.constData(),
            ran.err.constData());
    return figures;
}

// The same between the two ends of an OpenSSH Ethernet tunnel.
Figures measureSsh(const cloop::bench::SshEthernetTunnel &tunnel, int seconds)
{
    return measureBetween(
        tunnel.inServer({ QStringLiteral("iperf3"), QStringLiteral("-s"), QStringLiteral("-1") }),
        tunnel.clientNamespace(), cloop::bench::SshEthernetTunnel::serverAddress(), seconds);
}

// The median round trip of a 64-byte message between two processes over a
// socketpair when both sleep in between, as ping's do: what waking an idle
// process costs on this machine, twice. Each ping through the chain wakes
// about seven (agent, hub, forwarder, and back, then ping itself).
double idleWakeupRoundTripMs()
{
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        fail(QStringLiteral("socketpair failed"));
    const pid_t child = ::fork();
    if (child < 0)
        fail(QStringLiteral("fork failed"));
    char buffer[64] = {};
    if (child == 0) {
        ::close(pair[0]);
        while (::read(pair[1], buffer, sizeof buffer) > 0) {
            if (::write(pair[1], buffer, sizeof buffer) != sizeof buffer)
                break;
        }
        ::_exit(0);
    }
    ::close(pair[1]);
    std::vector<qint64> nanoseconds;
    for (int i = 0; i < 100; ++i) {
        QThread::msleep(20);
        QElapsedTimer clock;
        clock.start();
        if (::write(pair[0], buffer, sizeof buffer) != sizeof buffer
            || ::read(pair[0], buffer, sizeof buffer) <= 0)
            break;
        nanoseconds.push_back(clock.nsecsElapsed());
    }
    ::close(pair[0]);
    ::waitpid(child, nullptr, 0);
    if (nanoseconds.empty())
        fail(QStringLiteral("the wake-up probe's echo process did not answer"));
    std::nth_element(
        nanoseconds.begin(), nanoseconds.begin() + nanoseconds.size() / 2, nanoseconds.end());
    return double(nanoseconds[nanoseconds.size() / 2]) / 1e6;
}

int runBench(int argc, char **argv)
{
    const int seconds = cloop::bench::argument(argc, argv, 1, 5, kUsage);
    const int repetitions = cloop::bench::argument(argc, argv, 2, 1, kUsage);
    if (const QString why = sandboxesUnavailable(); !why.isEmpty())
        fail(why);
    if (const QString why = cloop::bench::IperfImage::unavailable(); !why.isEmpty())
        fail(why);
    if (const QString why = cloop::bench::SshEthernetTunnel::unavailable(); !why.isEmpty())
        fail(why);
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        fail(why);
    const cloop::bench::IperfImage image;

    LabNetwork lab(
        QStringLiteral("clb-seg"), QStringLiteral("clb-lab"), QStringLiteral("192.0.2.1/24"));
    const cloop::bench::UndoOnExit labUndo(undoLab(lab));
    if (!lab.create())
        fail(lab.lastError());
    TestRig rig;
    if (!rig.startHub())
        fail(rig.lastError());
    HubProcess &hub = rig.hub();
    if (hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }).exitCode != 0)
        fail(hub.transcript());
    const Enrollment forwarder = hub.enroll(
        QStringLiteral("lab"), { QStringLiteral("--interface"), QStringLiteral("clb-seg") });
    if (!forwarder.ok)
        fail(forwarder.error);
    ForwarderProcess &forwarderProcess
        = rig.addForwarder({ QStringLiteral("--bundle"), forwarder.bundle });
    if (!rig.startAndAwaitConnection(forwarderProcess, forwarder.id))
        fail(forwarderProcess.describe());
    const QJsonObject agent = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                              QStringLiteral("--name"), QStringLiteral("bench"),
                                              QStringLiteral("--json") })
                                  .toObject();
    ForwarderProcess &agentProcess = rig.addForwarder(
        { QStringLiteral("--bundle"), agent.value(QLatin1String("bundle")).toString() },
        rig.newHome(), ForwarderProcess::Program::Agent);
    if (!agentProcess.start()
        || !agentProcess.waitForStderr(QStringLiteral("connected to the hub as executor")))
        fail(agentProcess.describe());
    if (hub.cli({ QStringLiteral("forward"), QStringLiteral("bind"), QString::number(forwarder.id),
                    QStringLiteral("--project"), kProject, QStringLiteral("--address"),
                    QStringLiteral("192.0.2.10/24") })
            .exitCode
        != 0)
        fail(hub.transcript());

    const cloop::bench::SshEthernetTunnel tunnel;

    std::printf("bench_segment: %d s per iperf3 run, %d repetition(s); every path: `%s`, `%s`\n",
        seconds, repetitions, qPrintable(pingLine(QStringLiteral("ADDRESS"))),
        qPrintable(iperfLine(QStringLiteral("ADDRESS"), seconds)));
    std::printf("%-34s %12s %14s\n", "path", "TCP Gbit/s", "ping RTT (ms)");
    const auto ratios = [](const char *what, const Figures &chain, const Figures &other) {
        std::printf("%-34s %12.3f %14.2f\n", what, other.gbits > 0 ? chain.gbits / other.gbits : 0,
            other.rttMs > 0 ? chain.rttMs / other.rttMs : 0);
    };
    for (int i = 0; i < repetitions; ++i) {
        const Figures direct = measureDirect(seconds);
        const Figures chain = measureChain(rig, lab, image.name(), seconds);
        const Figures ssh = measureSsh(tunnel, seconds);
        std::printf("%-34s %12.2f %14.3f\n", "direct veth", direct.gbits, direct.rttMs);
        std::printf(
            "%-34s %12.2f %14.3f\n", "forwarder -> hub -> agent -> TAP", chain.gbits, chain.rttMs);
        std::printf("%-34s %12.2f %14.3f\n", "SSH Ethernet tunnel (OpenSSH)", ssh.gbits, ssh.rttMs);
        ratios("chain / direct", chain, direct);
        ratios("chain / SSH tunnel", chain, ssh);
        std::fflush(stdout);
    }
    std::printf("%-34s %12s %14.3f\n", "idle 2-process round trip", "", idleWakeupRoundTripMs());
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const cloop::bench::PrivateScratch scratch;
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    try {
        return runBench(argc, argv);
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "%s: %s\n", g_program, failure.what());
        return 1;
    }
}
