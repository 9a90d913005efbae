// A forwarded USB device end to end: round trips of small control
// transfers (a 48-byte command, a 112-byte answer; p50 and p99) and bulk
// throughput through forwarder → hub → agent, side by side with the same
// two kernel stand-ins joined by a direct socketpair and by a relay in C
// through two TLS hops on loopback (socat: client → relay → server), all
// measured in the same run and printed as ratios. The chain's control
// transfers are measured once more while curl asks the hub's admin API 50
// times a second over a kept-alive connection (the binding sweep runs in
// both), to show what control work on the hub costs the relay. The chain
// runs twice: as the hub relays by default (each daemon's leg of the
// stream on a connection of its own, spliced on a relay thread), and with
// --relay-threads 0 (on the daemons' tunnels, through the hub's main
// thread, as with daemons before protocol 32).
//
//   bench_usbip [control transfers, default 2000] [bulk MiB, default 256]
//
// This kernel has no USB, so both ends are the in-process stand-ins of
// usbip-host and vhci_hcd (tests/support/usbstandin): the direct line is
// what the two kernels would do on one cable, the relay what a plain TLS
// relay puts between them, the chain everything cloop puts between them
// (two TLS WebSockets, the hub's splice, the channel pumps). Every TCP
// socket on the relay's and the chain's paths has TCP_NODELAY. Each side
// measures in the process that holds the vhci port, so no control hop is
// counted. The relay needs socat and openssl; the chain needs root and
// podman (a run must hold the device); without them only what can run is
// printed.

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/relaypaths.h"
#include "common/util/fd.h"
#include "support/testrig.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

using namespace cloop::testing;
using namespace cloop::testsupport::usb;
using cloop::device::SysfsRoot;

namespace {

const char *const kUsage = "bench_usbip [control transfers] [bulk MiB]";
const char *g_program = "bench_usbip";
const QString kProject = QStringLiteral("/srv/projects/bench");

using cloop::bench::BenchFailed;
using cloop::bench::fail;

FixtureDevice benchDevice()
{
    FixtureDevice device;
    device.busId = QStringLiteral("1-1");
    device.vendorId = 0x1d50;
    device.productId = 0x6089;
    return device;
}

// The node vhci's port 0 shows once the device has enumerated.
QString nodeOf(const QJsonObject &ports)
{
    for (const QJsonValue &port : ports.value(QLatin1String("ports")).toArray()) {
        const QString node = port.toObject().value(QLatin1String("node")).toString();
        if (!node.isEmpty())
            return node;
    }
    return {};
}

// Both kernels in this process, joined by one connection: usbip bind on
// `stubEnd`, vhci attach on `vhciEnd`.
QJsonObject joined(int stubEnd, int vhciEnd, const TransferMeasurement &measure)
{
    QTemporaryDir forwarderRoot;
    QTemporaryDir agentRoot;
    if (!UsbFixture::makeForwarderMachine(forwarderRoot.path(), { benchDevice() })
        || !UsbFixture::makeAgentMachine(agentRoot.path()))
        fail(QStringLiteral("cannot make the fixture trees"));
    const SysfsRoot forwarderRoots(forwarderRoot.path());
    UsbKernelStandIn forwarder { forwarderRoots };
    UsbKernelStandIn agent { SysfsRoot(agentRoot.path()) };
    const auto step = [](const cloop::Status &status) {
        if (!status)
            fail(status.error().message);
    };
    step(forwarder.write(u"/sys/bus/usb/drivers/usb/unbind", "1-1"));
    step(forwarder.write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 1-1"));
    step(forwarder.write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1"));
    step(forwarder.write(u"/sys/bus/usb/devices/1-1/usbip_sockfd", QByteArray::number(stubEnd)));
    const quint32 devnum = forwarderRoots.readAttribute(u"/sys/bus/usb/devices/1-1/devnum")
                               .value_or(QString())
                               .toUInt();
    const quint32 devid = (1u << 16) | devnum;
    step(agent.write(u"/sys/devices/platform/vhci_hcd.0/attach",
        QStringLiteral("0 %1 %2 3").arg(vhciEnd).arg(devid).toLatin1()));
    QString node;
    for (int i = 0; i < 500 && node.isEmpty(); ++i) {
        node = nodeOf(agent.portStatus());
        if (node.isEmpty())
            QThread::msleep(10);
    }
    if (node.isEmpty())
        fail(QStringLiteral("the attached device did not enumerate"));
    auto measured = agent.measureTransfers(node, measure);
    if (!measured)
        fail(measured.error().message);
    return *measured;
}

// One socketpair between the two kernels, nothing in between.
QJsonObject direct(const TransferMeasurement &measure)
{
    int ends[2] = { -1, -1 };
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
        fail(QStringLiteral("socketpair failed"));
    const cloop::util::Fd stubEnd(ends[0]);
    const cloop::util::Fd vhciEnd(ends[1]);
    return joined(stubEnd.get(), vhciEnd.get(), measure);
}

void setNoDelay(int fd)
{
    const int on = 1;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
        fail(QStringLiteral("cannot set TCP_NODELAY"));
}

// The same two kernels, their connection carried over loopback by socat
// through two TLS hops: vhci's socket → client socat → relay socat →
// server socat → the socket usbip-host was given (both TCP_NODELAY, as is
// every socket of socat's).
QJsonObject throughTlsRelay(const TransferMeasurement &measure)
{
    const cloop::util::Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(0x7f000001u);
    socklen_t length = sizeof address;
    if (!listener.valid()
        || ::bind(listener.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
        || ::listen(listener.get(), 1) != 0
        || ::getsockname(listener.get(), reinterpret_cast<sockaddr *>(&address), &length) != 0)
        fail(QStringLiteral("cannot listen on 127.0.0.1"));
    cloop::bench::SocatTlsRelay relay(ntohs(address.sin_port));

    const cloop::util::Fd vhciEnd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!vhciEnd.valid())
        fail(QStringLiteral("cannot make a TCP socket"));
    setNoDelay(vhciEnd.get());
    address.sin_port = htons(relay.listenPort());
    if (::connect(vhciEnd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
        fail(QStringLiteral("cannot connect to the relay: ") + relay.transcript());
    pollfd accepting { listener.get(), POLLIN, 0 };
    if (::poll(&accepting, 1, 15'000) != 1)
        fail(QStringLiteral("the relay did not connect through: ") + relay.transcript());
    const cloop::util::Fd stubEnd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!stubEnd.valid())
        fail(QStringLiteral("accept failed"));
    setNoDelay(stubEnd.get());
    return joined(stubEnd.get(), vhciEnd.get(), measure);
}

// What the chain measured idle, and its control transfers again while the
// admin API is asked 50 times a second.
struct ChainFigures
{
    QJsonObject idle;
    QJsonObject loaded;
    int apiAnswers = 0;
    double apiSeconds = 0;
};

constexpr int kApiRequestsPerSecond = 50;

// Asks the hub's admin API for its forwarders kApiRequestsPerSecond times a
// second over one kept-alive TLS connection, as a dashboard and a few
// scripts would, until stopped; counts the answers.
class ApiLoad
{
public:
    ApiLoad(const HubProcess &hub, const QString &scratch)
        : m_codes(QDir(scratch).filePath(QStringLiteral("api-load-codes")))
    {
        // -k: the hub's certificate is its own; the pin is checked instead.
        QString pin = hub.pin();
        pin.replace(QLatin1String("sha256:"), QLatin1String("sha256//"));
        // Each answer's code goes to stderr, which curl does not buffer.
        m_curl.setStandardOutputFile(QProcess::nullDevice());
        m_curl.setStandardErrorFile(m_codes);
        m_curl.start(QStringLiteral("curl"),
            { QStringLiteral("-sSN"), QStringLiteral("-k"), QStringLiteral("--pinnedpubkey"), pin,
                QStringLiteral("--rate"), QStringLiteral("%1/s").arg(kApiRequestsPerSecond),
                QStringLiteral("-H"), QStringLiteral("Authorization: Bearer ") + hub.adminToken(),
                QStringLiteral("-o"), QStringLiteral("/dev/null"), QStringLiteral("-w"),
                QStringLiteral("%{stderr}%{http_code}\\n"),
                hub.apiUrl(QStringLiteral("/api/forwarders")).toString()
                    + QStringLiteral("?n=[1-100000]") });
        if (!m_curl.waitForStarted())
            fail(QStringLiteral("cannot start curl for the API load"));
        m_started.start();
    }
    ApiLoad(const ApiLoad &) = delete;
    ApiLoad &operator=(const ApiLoad &) = delete;
    ~ApiLoad()
    {
        m_curl.kill();
        m_curl.waitForFinished();
    }

    // The answers with HTTP 200, and over how many seconds.
    std::pair<int, double> stop()
    {
        if (m_curl.state() != QProcess::NotRunning) {
            m_seconds = double(m_started.elapsed()) / 1000.0;
            m_curl.kill();
            m_curl.waitForFinished();
        }
        QFile codes(m_codes);
        int answered = 0;
        if (codes.open(QIODevice::ReadOnly)) {
            for (const QByteArray &line : codes.readAll().split('\n'))
                answered += line == "200" ? 1 : 0;
        }
        if (answered == 0) {
            codes.seek(0);
            fail(QStringLiteral("the API load got no answer: ")
                + QString::fromLocal8Bit(codes.readAll().right(500)));
        }
        return { answered, m_seconds };
    }

private:
    QString m_codes;
    QProcess m_curl;
    QElapsedTimer m_started;
    double m_seconds = 0;
};

// Real hub, forwarder and agent processes; a sandboxed run holds the device.
// `hubArguments` go to `cloop hub serve`.
ChainFigures chain(
    const TransferMeasurement &measure, const QString &scratch, const QStringList &hubArguments)
{
    QTemporaryDir forwarderRoot;
    QTemporaryDir agentRoot;
    if (!UsbFixture::makeForwarderMachine(forwarderRoot.path(), { benchDevice() })
        || !UsbFixture::makeAgentMachine(agentRoot.path()))
        fail(QStringLiteral("cannot make the fixture trees"));
    TestRig rig;
    rig.hub().setServeArguments(hubArguments);
    if (!rig.startHub())
        fail(rig.lastError());
    HubProcess &hub = rig.hub();
    hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject });
    const Enrollment enrolled = hub.enroll(
        QStringLiteral("bench"), { QStringLiteral("--usb"), QStringLiteral("1d50:6089") });
    if (!enrolled.ok)
        fail(enrolled.error);
    ForwarderProcess &forwarder = rig.addForwarder({ QStringLiteral("--bundle"), enrolled.bundle },
        {}, ForwarderProcess::Program::ForwarderUsbStandIn);
    forwarder.setEnvironmentVariable(
        QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
    forwarder.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), forwarderRoot.path());
    if (!rig.startAndAwaitConnection(forwarder, enrolled.id)
        || !forwarder.waitForStderr(QStringLiteral("is present as")))
        fail(QStringLiteral("the forwarder did not come up: ") + forwarder.describe());
    const QJsonObject executor = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                                 QStringLiteral("--name"), QStringLiteral("bench"),
                                                 QStringLiteral("--json") })
                                     .toObject();
    ForwarderProcess &agent = rig.addForwarder(
        { QStringLiteral("--bundle"), executor.value(QLatin1String("bundle")).toString() },
        rig.newHome(), ForwarderProcess::Program::AgentUsbStandIn);
    agent.setEnvironmentVariable(QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("agent"));
    agent.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), agentRoot.path());
    agent.setEnvironmentVariable(QStringLiteral("CLOOP_DEV_ROOT"), agentRoot.path());
    if (!agent.start() || !agent.waitForStderr(QStringLiteral("connected to the hub as executor")))
        fail(QStringLiteral("the agent did not come up: ") + agent.describe());
    if (hub.bind(enrolled.id, kProject) == 0)
        fail(QStringLiteral("cannot bind the forwarder: ") + hub.transcript().right(2000));
    const CliResult queued = hub.cli(
        { QStringLiteral("run"), QStringLiteral("--project"), kProject, QStringLiteral("--no-wait"),
            QStringLiteral("--"), QStringLiteral("sleep"), QStringLiteral("3600") });
    if (queued.exitCode != 0)
        fail(queued.describe());
    StandInControl control(agentRoot.path());
    QString node;
    waitUntil([&] {
        auto ports = control.call({ { QStringLiteral("op"), QStringLiteral("ports") } });
        node = ports ? nodeOf(*ports) : QString();
        return !node.isEmpty();
    });
    if (node.isEmpty())
        fail(QStringLiteral("the run's device did not attach: ") + agent.stderrText().right(2000));
    // The device attaches before the sandbox starts, and podman, conmon and
    // runc starting it took both cores for a few hundred milliseconds: a
    // measurement begun then timed the container's start, not the chain.
    const QString runId = queued.stdoutText().trimmed();
    const auto runState = [&] {
        return hub
            .cliJson(
                { QStringLiteral("run"), QStringLiteral("show"), runId, QStringLiteral("--json") })
            .toObject()
            .value(QLatin1String("state"))
            .toString();
    };
    if (!waitUntil([&] { return runState() == QLatin1String("running"); }))
        fail(QStringLiteral("the run did not start: ") + agent.stderrText().right(2000));
    QThread::sleep(2);
    const auto measureWith = [&](qint64 bulkBytes) {
        return control.call(
            { { QStringLiteral("op"), QStringLiteral("measure") }, { QStringLiteral("node"), node },
                { QStringLiteral("control_count"), measure.controlCount },
                { QStringLiteral("bulk_bytes"), bulkBytes },
                { QStringLiteral("urb_bytes"), measure.urbBytes },
                { QStringLiteral("bulk_in_flight"), measure.bulkInFlight } },
            30 * 60 * 1000);
    };
    auto measured = measureWith(measure.bulkBytes);
    cloop::Result<QJsonObject> loaded = QJsonObject();
    std::pair<int, double> answers { 0, 0.0 };
    if (measured) {
        ApiLoad load(hub, scratch);
        // The load's own start (curl, the TLS handshake) is not measured.
        QThread::sleep(1);
        loaded = measureWith(0);
        answers = load.stop();
    }
    // The run ends before its agent does, or its sandbox would outlive the
    // benchmark: an agent that stops leaves its runs to its next start.
    hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), runId });
    if (!agent.waitForStderr(QStringLiteral("run %1 finished").arg(runId), 120'000))
        fail(QStringLiteral("run %1 did not end when cancelled: ").arg(runId)
            + agent.stderrText().right(2000));
    if (!measured)
        fail(measured.error().message);
    if (!loaded)
        fail(loaded.error().message);
    return { *measured, *loaded, answers.first, answers.second };
}

double number(const QJsonObject &figures, const char *key)
{
    return figures.value(QLatin1String(key)).toDouble();
}

void print(const char *what, const QJsonObject &figures)
{
    std::printf("%-26s %12.1f %12.1f %12.1f\n", what, number(figures, "control_p50_us"),
        number(figures, "control_p99_us"), number(figures, "bulk_mb_per_s"));
    std::fflush(stdout);
}

// The slowest 1% of control transfers, each as place:microseconds, to tell
// a periodic stall from scattered ones.
void printSlowest(const char *what, const QJsonObject &figures)
{
    std::printf("slowest %-6s", what);
    for (const QJsonValue &each : figures.value(QLatin1String("control_slowest")).toArray()) {
        const QJsonArray pair = each.toArray();
        std::printf(" %d:%.0f", pair.at(0).toInt(), pair.at(1).toDouble());
    }
    std::printf("\n");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const cloop::bench::PrivateScratch scratch;
    TransferMeasurement measure;
    measure.controlCount = cloop::bench::argument(argc, argv, 1, 2000, kUsage);
    measure.bulkBytes = qint64(cloop::bench::argument(argc, argv, 2, 256, kUsage)) * 1048576;
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    try {
        if (const QString why = cloop::bench::SocatTlsRelay::unavailable(); !why.isEmpty())
            fail(why);
        std::printf("bench_usbip: %d control transfers, %.0f MiB bulk in %d KiB URBs, %d under "
                    "way\n",
            measure.controlCount, double(measure.bulkBytes) / 1048576.0, measure.urbBytes / 1024,
            measure.bulkInFlight);
        std::printf("%-26s %12s %12s %12s\n", "path", "p50 (us)", "p99 (us)", "bulk MB/s");
        const QJsonObject line = direct(measure);
        print("direct socketpair", line);
        const QJsonObject relay = throughTlsRelay(measure);
        print("socat TLS relay (2 hops)", relay);
        const QString why = sandboxesUnavailable();
        if (!why.isEmpty()) {
            std::printf("chain: skipped (%s)\n", qPrintable(why));
            return 0;
        }
        // The hub relays a stream on a relay thread of its own (its legs),
        // or on its main thread, through the daemons' tunnels.
        const ChainFigures figures = chain(measure, scratch.path(), {});
        const ChainFigures tunnels = chain(
            measure, scratch.path(), { QStringLiteral("--relay-threads"), QStringLiteral("0") });
        const QJsonObject &chained = figures.idle;
        print("forwarder -> hub -> agent", chained);
        std::printf("%-26s %12.1f %12.1f %12s\n", "  with 50 API requests/s",
            number(figures.loaded, "control_p50_us"), number(figures.loaded, "control_p99_us"),
            "-");
        print("  on the tunnels", tunnels.idle);
        std::printf("%-26s %12.1f %12.1f %12s\n", "  on the tunnels, API load",
            number(tunnels.loaded, "control_p50_us"), number(tunnels.loaded, "control_p99_us"),
            "-");
        const auto ratio = [&](const QJsonObject &other, const char *key) {
            return number(chained, key) / number(other, key);
        };
        std::printf("chain / direct:            control p50 %.2fx  p99 %.2fx   bulk %.0f%%\n",
            ratio(line, "control_p50_us"), ratio(line, "control_p99_us"),
            100.0 * ratio(line, "bulk_mb_per_s"));
        std::printf("chain / TLS relay:         control p50 %.2fx  p99 %.2fx   bulk %.0f%%\n",
            ratio(relay, "control_p50_us"), ratio(relay, "control_p99_us"),
            100.0 * ratio(relay, "bulk_mb_per_s"));
        std::printf("chain / on the tunnels:    control p50 %.2fx  p99 %.2fx   bulk %.0f%%\n",
            ratio(tunnels.idle, "control_p50_us"), ratio(tunnels.idle, "control_p99_us"),
            100.0 * ratio(tunnels.idle, "bulk_mb_per_s"));
        std::printf("chain p99 / chain p50:     %.2fx\n",
            number(chained, "control_p99_us") / number(chained, "control_p50_us"));
        const auto underLoad = [](const char *what, const ChainFigures &each) {
            std::printf("%s control p50 %.2fx  p99 %.2fx of idle (%d answers in %.1f s, "
                        "%.0f/s)\n",
                what, number(each.loaded, "control_p50_us") / number(each.idle, "control_p50_us"),
                number(each.loaded, "control_p99_us") / number(each.idle, "control_p99_us"),
                each.apiAnswers, each.apiSeconds,
                each.apiSeconds > 0 ? each.apiAnswers / each.apiSeconds : 0.0);
        };
        underLoad("chain under API load:     ", figures);
        underLoad("on the tunnels, API load: ", tunnels);
        printSlowest("direct", line);
        printSlowest("relay", relay);
        printSlowest("chain", chained);
        printSlowest("loaded", figures.loaded);
        printSlowest("tunnel", tunnels.idle);
        printSlowest("tunnel+", tunnels.loaded);
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "%s: %s\n", g_program, failure.what());
        return 1;
    }
    return 0;
}
