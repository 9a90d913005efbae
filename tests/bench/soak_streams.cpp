// Many forwarded devices at once, for minutes: the resident memory of the
// hub, the forwarders and the agents sampled as the streams carry traffic,
// printed as a table, and whether it stayed flat once warmed up.
//
//   soak_streams [streams, default 100] [minutes, default 10] [seconds between samples, default 10]
//
// Each stream is a forwarder of its own with one device, bound to a project
// of its own, held by a sandboxed run of that project. One stream in five
// (rounded up) is a layer-2 segment: a veth pair whose far end is in a lab
// namespace of its own, held by a run on the segment agent, which gives its
// fwd0 an address. The others are USB devices held by runs on the USB
// agent; this kernel has no USB, so both of their ends are the kernel
// stand-ins (tests/support/usbstandin). Traffic goes round the streams
// without pause, through forwarder → hub → agent: on a USB stream, control
// transfers and a bulk transfer out and back; on a segment, pings from the
// lab to the sandbox. The first fifth of the time (at least 30 s) is
// warm-up; after it no process kind may grow by more than 5%, and every
// round must succeed: otherwise the exit code is 1. A start-up that stalls
// (no device held for minutes) ends it too, with the runs' states and what
// the hub and the agents said. Needs root and podman.

#include "bench/benchcleanup.h"
#include "bench/benchfailed.h"
#include "bench/benchutil.h"
#include "bench/sandboxruns.h"
#include "bench/sessionload.h"
#include "common/result.h"
#include "support/labnetwork.h"
#include "support/processutil.h"
#include "support/testrig.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

using namespace cloop::testing;
using namespace cloop::testsupport::usb;
using cloop::Error;
using cloop::Status;
using cloop::bench::BenchFailed;
using cloop::bench::fail;

namespace {

const char *const kUsage = "soak_streams [streams] [minutes] [seconds between samples]";
constexpr double kAllowedGrowth = 0.05;
constexpr int kPingsPerRound = 20;
// Start-up: how long without one more device held is a stall, how often
// to look, and how often to say how far it got.
constexpr qint64 kStallMs = 180'000;
// The whole start-up, forwarders to the last run: well inside the test's
// own timeout, so that the soak ends itself and ends its runs.
constexpr qint64 kStartUpMs = 600'000;
// Ending the runs, after a failure too: bounded so that what failed is
// reported within the test's timeout even when a run does not end.
constexpr int kEndRunsMs = 120'000;
constexpr int kPollMs = 500;
constexpr qint64 kReportEveryMs = 30'000;

QString projectOf(int stream)
{
    return QStringLiteral("/srv/projects/soak-%1").arg(stream);
}

// Resident memory of a process; 0 when it is gone.
double residentMiB(qint64 pid)
{
    return cloop::bench::useOf(pid).rssMiB;
}

// One stream in this many is a segment: those whose index is a multiple.
constexpr int kOneSegmentIn = 5;

// Where a segment stream's run addresses its fwd0, and its lab the other end.
QString sandboxAddress(int segment)
{
    return QStringLiteral("10.77.%1.2").arg(segment);
}

// The segment run's workload: once fwd0 is there, an address on it, then
// nothing but being reachable.
QString holdTheSegment(int segment)
{
    return QStringLiteral("i=0; while [ ! -e /sys/class/net/fwd0 ] && [ $i -lt 6000 ]; do sleep "
                          "0.1; i=$((i+1)); done; ip addr add %1/24 dev fwd0 && ip link set fwd0 "
                          "up && echo configured; sleep 86400")
        .arg(sandboxAddress(segment));
}

struct Sample
{
    double seconds = 0;
    double hubMiB = 0;
    double usbAgentMiB = 0;
    double segmentAgentMiB = 0;
    double forwardersMiB = 0; // all of them together
    double largestForwarderMiB = 0;
    qint64 rounds = 0; // traffic rounds so far, all streams
};

// One forwarded device and the run that holds it.
struct Stream
{
    enum class Kind
    {
        Usb,
        Segment
    };
    Kind kind = Kind::Usb;
    ForwarderProcess *forwarder = nullptr;
    qint64 run = 0;
    QString node; // USB: the device node the agent's stand-in made for it
    std::unique_ptr<QTemporaryDir> machine; // USB: the forwarder's fixture tree
    int segment = 0; // segment: its index among the segments
    // The lab's namespace goes at a stopping signal too, where no
    // destructor runs (declared first: it runs after the lab's own).
    std::unique_ptr<cloop::bench::UndoOnExit> labUndo;
    std::unique_ptr<LabNetwork> lab; // segment: the lab at the far end
};

// The streams and everything that carries them.
class Soak
{
public:
    explicit Soak(int streams)
        : m_streamCount(streams)
        , m_segmentCount((streams + kOneSegmentIn - 1) / kOneSegmentIn)
    { }
    ~Soak() { endRuns(); }
    Soak(const Soak &) = delete;
    Soak &operator=(const Soak &) = delete;

    int usbCount() const { return m_streamCount - m_segmentCount; }
    int segmentCount() const { return m_segmentCount; }

    void start();
    // Traffic round the streams until `seconds` have passed, sampling
    // every `sampleSeconds`.
    std::vector<Sample> run(int seconds, int sampleSeconds);
    qint64 failures() const { return m_failures; }
    QString firstFailure() const { return m_firstFailure; }
    // Ends every run, then what each end of every segment stream counted
    // (frames, and frames dropped where and why): where a lost ping went.
    QStringList endAndCountSegments();

private:
    void addUsbStream(int index);
    void addSegmentStream(int index, int segment);
    void startAndBind(
        ForwarderProcess &forwarder, qint64 forwarderId, int index, const QString &readyLine = {});
    ForwarderProcess *startAgent(const QString &name, ForwarderProcess::Program program);
    void queueRuns();
    void awaitAll(const QString &what, int target, const std::function<int()> &count);
    void awaitUsbDevices();
    void awaitSegments();
    QString runStates();
    QString diagnosis();
    Status usbRound(const Stream &stream, StandInControl &control) const;
    Status segmentRound(const Stream &stream) const;
    Sample sample(double seconds);
    void endRuns();

    const int m_streamCount;
    const int m_segmentCount;
    TestRig m_rig;
    QTemporaryDir m_usbAgentRoot;
    ForwarderProcess *m_usbAgent = nullptr;
    ForwarderProcess *m_segmentAgent = nullptr;
    std::vector<Stream> m_streams;
    QDeadlineTimer m_startUp { kStartUpMs };
    qint64 m_rounds = 0;
    qint64 m_failures = 0;
    QString m_firstFailure;
};

void Soak::start()
{
    m_startUp.setRemainingTime(kStartUpMs);
    if (usbCount() > 0 && !UsbFixture::makeAgentMachine(m_usbAgentRoot.path(), usbCount()))
        fail(QStringLiteral("cannot make the agent's fixture tree"));
    if (!m_rig.startHub())
        fail(m_rig.lastError());
    for (int index = 0, segment = 0; index < m_streamCount; ++index) {
        m_rig.hub().cli({ QStringLiteral("project"), QStringLiteral("add"), projectOf(index) });
        // Spread the segments among the USB streams.
        if (index % kOneSegmentIn == 0)
            addSegmentStream(index, ++segment);
        else
            addUsbStream(index);
    }
    std::printf("%d forwarders connected and bound (%d USB, %d segments)\n", m_streamCount,
        usbCount(), segmentCount());
    std::fflush(stdout);

    if (usbCount() > 0) {
        m_usbAgent
            = startAgent(QStringLiteral("soak-usb"), ForwarderProcess::Program::AgentUsbStandIn);
    }
    if (segmentCount() > 0)
        m_segmentAgent = startAgent(QStringLiteral("soak-l2"), ForwarderProcess::Program::Agent);
    queueRuns();
    awaitUsbDevices();
    awaitSegments();
    std::printf("%d runs hold their devices\n", m_streamCount);
    std::fflush(stdout);
}

void Soak::addUsbStream(int index)
{
    HubProcess &hub = m_rig.hub();
    FixtureDevice device;
    device.busId = QStringLiteral("1-1");
    device.vendorId = 0x1d50;
    device.productId = 0x6089;
    auto root = std::make_unique<QTemporaryDir>();
    if (!UsbFixture::makeForwarderMachine(root->path(), { device }))
        fail(QStringLiteral("cannot make a forwarder's fixture tree"));
    const Enrollment enrolled = hub.enroll(QStringLiteral("soak-%1").arg(index),
        { QStringLiteral("--usb"), QStringLiteral("1d50:6089") });
    if (!enrolled.ok)
        fail(enrolled.error);
    ForwarderProcess &forwarder
        = m_rig.addForwarder({ QStringLiteral("--bundle"), enrolled.bundle }, {},
            ForwarderProcess::Program::ForwarderUsbStandIn);
    forwarder.setEnvironmentVariable(
        QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
    forwarder.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), root->path());
    startAndBind(forwarder, enrolled.id, index, QStringLiteral("is present as"));
    Stream stream;
    stream.kind = Stream::Kind::Usb;
    stream.forwarder = &forwarder;
    stream.machine = std::move(root);
    m_streams.push_back(std::move(stream));
}

// Starts an enrolled forwarder, waits until it is connected (and has said
// `readyLine`, when given) and binds it to the stream's project.
void Soak::startAndBind(
    ForwarderProcess &forwarder, qint64 forwarderId, int index, const QString &readyLine)
{
    if (!m_rig.startAndAwaitConnection(forwarder, forwarderId)
        || (!readyLine.isEmpty() && !forwarder.waitForStderr(readyLine)))
        fail(QStringLiteral("forwarder %1 did not come up: %2")
                 .arg(index)
                 .arg(forwarder.describe()));
    HubProcess &hub = m_rig.hub();
    if (hub.bind(forwarderId, projectOf(index), QStringLiteral("12h")) == 0)
        fail(QStringLiteral("cannot bind forwarder %1: %2")
                 .arg(index)
                 .arg(hub.transcript().right(2000)));
}

void Soak::addSegmentStream(int index, int segment)
{
    HubProcess &hub = m_rig.hub();
    const QString local = QStringLiteral("soak-seg%1").arg(segment);
    auto lab = std::make_unique<LabNetwork>(local, QStringLiteral("soak-lab%1").arg(segment),
        QStringLiteral("10.77.%1.1/24").arg(segment));
    if (!lab->create())
        fail(lab->lastError());
    auto labUndo = std::make_unique<cloop::bench::UndoOnExit>(
        QStringLiteral("ip netns delete %1 2>/dev/null").arg(lab->name()));
    const Enrollment enrolled = hub.enroll(
        QStringLiteral("soak-%1").arg(index), { QStringLiteral("--interface"), local });
    if (!enrolled.ok)
        fail(enrolled.error);
    ForwarderProcess &forwarder
        = m_rig.addForwarder({ QStringLiteral("--bundle"), enrolled.bundle });
    startAndBind(forwarder, enrolled.id, index);
    Stream stream;
    stream.kind = Stream::Kind::Segment;
    stream.forwarder = &forwarder;
    stream.segment = segment;
    stream.lab = std::move(lab);
    stream.labUndo = std::move(labUndo);
    m_streams.push_back(std::move(stream));
}

ForwarderProcess *Soak::startAgent(const QString &name, ForwarderProcess::Program program)
{
    HubProcess &hub = m_rig.hub();
    const QJsonObject executor
        = hub.cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                          QStringLiteral("--name"), name, QStringLiteral("--json") })
              .toObject();
    ForwarderProcess &agent = m_rig.addForwarder(
        { QStringLiteral("--bundle"), executor.value(QLatin1String("bundle")).toString(),
            QStringLiteral("--max-concurrent"), QString::number(m_streamCount) },
        m_rig.newHome(), program);
    if (program == ForwarderProcess::Program::AgentUsbStandIn) {
        agent.setEnvironmentVariable(QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("agent"));
        agent.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), m_usbAgentRoot.path());
        agent.setEnvironmentVariable(QStringLiteral("CLOOP_DEV_ROOT"), m_usbAgentRoot.path());
    }
    if (!agent.start() || !agent.waitForStderr(QStringLiteral("connected to the hub as executor")))
        fail(QStringLiteral("the agent %1 did not come up: %2").arg(name, agent.describe()));
    return &agent;
}

// A run goes to an agent that can hold its device: the USB agent has no
// TAP (its /dev is the fixture tree), the segment agent no USB.
void Soak::queueRuns()
{
    for (int index = 0; index < m_streamCount; ++index) {
        Stream &stream = m_streams.at(index);
        QStringList command { QStringLiteral("run"), QStringLiteral("--project"), projectOf(index),
            QStringLiteral("--no-wait"), QStringLiteral("--") };
        if (stream.kind == Stream::Kind::Usb)
            command << QStringLiteral("sleep") << QStringLiteral("86400");
        else
            command << QStringLiteral("sh") << QStringLiteral("-c")
                    << holdTheSegment(stream.segment);
        const CliResult queued = m_rig.hub().cli(command);
        if (queued.exitCode != 0)
            fail(queued.describe());
        stream.run = queued.stdoutText().trimmed().toLongLong();
    }
}

// How the runs stand, state by state ("running 97, queued 3"): for a
// failure message.
QString Soak::runStates()
{
    QMap<QString, int> counts;
    const QJsonArray runs = m_rig.hub().cliItems(
        { QStringLiteral("run"), QStringLiteral("list"), QStringLiteral("--json") });
    for (const QJsonValue &run : runs)
        ++counts[run.toObject().value(QLatin1String("state")).toString()];
    QStringList states;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        states.append(QStringLiteral("%1 %2").arg(it.key()).arg(it.value()));
    return states.join(QStringLiteral(", "));
}

// What a stalled start-up left to read: the runs' states and the tails of
// the hub's log and of both agents' output.
QString Soak::diagnosis()
{
    QString text = QStringLiteral("\nruns: ") + runStates();
    text += QStringLiteral("\n--- hub log (tail) ---\n") + m_rig.hub().log().right(6000);
    for (const ForwarderProcess *agent : { m_usbAgent, m_segmentAgent }) {
        if (agent)
            text += QStringLiteral("\n--- agent (tail) ---\n") + agent->stderrText().right(6000);
    }
    return text;
}

// Polls count() until it reaches `target`, saying how far it got every
// half minute. Starting a hundred sandboxes on two cores takes minutes, so
// the bound is on a stall, not on the whole: no progress for kStallMs
// fails with what the hub and the agents said meanwhile.
void Soak::awaitAll(const QString &what, int target, const std::function<int()> &count)
{
    QElapsedTimer sinceStart;
    sinceStart.start();
    QElapsedTimer sinceProgress;
    sinceProgress.start();
    qint64 nextReport = kReportEveryMs;
    int reached = -1;
    for (;;) {
        const int now = count();
        if (now >= target)
            break;
        if (now > reached) {
            reached = now;
            sinceProgress.restart();
        }
        if (sinceProgress.elapsed() > kStallMs)
            fail(QStringLiteral("%1: %2 of %3, none more for %4 s%5")
                     .arg(what)
                     .arg(reached)
                     .arg(target)
                     .arg(kStallMs / 1000)
                     .arg(diagnosis()));
        if (m_startUp.hasExpired())
            fail(QStringLiteral("%1: %2 of %3 when the start-up's %4 s were over%5")
                     .arg(what)
                     .arg(reached)
                     .arg(target)
                     .arg(kStartUpMs / 1000)
                     .arg(diagnosis()));
        if (sinceStart.elapsed() >= nextReport) {
            std::printf("  %s: %d of %d after %lld s\n", qPrintable(what), reached, target,
                static_cast<long long>(sinceStart.elapsed() / 1000));
            std::fflush(stdout);
            nextReport += kReportEveryMs;
        }
        waitUntil([] { return false; }, kPollMs);
    }
    std::printf("  %s: all %d after %lld s\n", qPrintable(what), target,
        static_cast<long long>(sinceStart.elapsed() / 1000));
    std::fflush(stdout);
}

// Every USB run holds its device once its sandbox is up.
void Soak::awaitUsbDevices()
{
    if (usbCount() == 0)
        return;
    StandInControl control(m_usbAgentRoot.path());
    QStringList nodes;
    awaitAll(QStringLiteral("USB devices attached"), usbCount(), [&] {
        const auto ports = control.call({ { QStringLiteral("op"), QStringLiteral("ports") } });
        nodes.clear();
        if (ports) {
            for (const QJsonValue &port : ports->value(QLatin1String("ports")).toArray()) {
                const QString node = port.toObject().value(QLatin1String("node")).toString();
                if (!node.isEmpty())
                    nodes.append(node);
            }
        }
        return int(nodes.size());
    });
    // Which node is which stream's does not matter: each carries one device.
    qsizetype next = 0;
    for (Stream &stream : m_streams) {
        if (stream.kind == Stream::Kind::Usb)
            stream.node = nodes.at(next++);
    }
    awaitAll(QStringLiteral("runs running"), usbCount(), [&] {
        const QJsonArray runs = m_rig.hub().cliItems(
            { QStringLiteral("run"), QStringLiteral("list"), QStringLiteral("--json") });
        return int(std::count_if(runs.begin(), runs.end(), [](const QJsonValue &run) {
            return run.toObject().value(QLatin1String("state")).toString()
                == QLatin1String("running");
        }));
    });
}

// Every segment run has given its fwd0 an address.
void Soak::awaitSegments()
{
    std::vector<bool> configured(m_streams.size(), false);
    awaitAll(QStringLiteral("segments configured"), segmentCount(), [&] {
        int done = 0;
        for (std::size_t index = 0; index < m_streams.size(); ++index) {
            const Stream &stream = m_streams.at(index);
            if (stream.kind != Stream::Kind::Segment)
                continue;
            if (!configured.at(index)) {
                const QStringList logs { QStringLiteral("run"), QStringLiteral("logs"),
                    QString::number(stream.run) };
                configured.at(index) = m_rig.hub().cli(logs).stdoutText().contains(u"configured");
            }
            done += configured.at(index) ? 1 : 0;
        }
        return done;
    });
}

Status Soak::usbRound(const Stream &stream, StandInControl &control) const
{
    const auto measured = control.call(
        { { QStringLiteral("op"), QStringLiteral("measure") },
            { QStringLiteral("node"), stream.node }, { QStringLiteral("control_count"), 20 },
            { QStringLiteral("bulk_bytes"), 256 * 1024 },
            { QStringLiteral("urb_bytes"), 16 * 1024 }, { QStringLiteral("bulk_in_flight"), 4 } },
        60'000);
    if (!measured)
        return Error::make(
            measured.error().code, stream.node + QStringLiteral(": ") + measured.error().message);
    return {};
}

// Pings from the lab, one each 5 ms: every one must come back. With -w,
// ping waits for every reply until that deadline; without it, it gives up on a
// late one two round trips after the last ping, which on a loaded machine
// counts a reply held up by a moment without a CPU as lost.
Status Soak::segmentRound(const Stream &stream) const
{
    const CliResult ping = stream.lab->inLab({ QStringLiteral("ping"), QStringLiteral("-q"),
        QStringLiteral("-c"), QString::number(kPingsPerRound), QStringLiteral("-i"),
        QStringLiteral("0.005"), QStringLiteral("-s"), QStringLiteral("1200"), QStringLiteral("-w"),
        QStringLiteral("10"), sandboxAddress(stream.segment) });
    // With -c and -w, ping ends (exit 0) once the count's replies came
    // back, whatever it sent meanwhile: a ping sent while the last reply was
    // on its way is not waited for ("21 transmitted, 20 received"), nor lost.
    // Every one of the count must come back within the deadline.
    static const QRegularExpression counts(
        QStringLiteral("(\\d+) packets transmitted, (\\d+) received"));
    const QRegularExpressionMatch counted = counts.match(ping.stdoutText());
    const int sent = counted.hasMatch() ? counted.captured(1).toInt() : 0;
    const int received = counted.hasMatch() ? counted.captured(2).toInt() : -1;
    if (ping.exitCode != 0 || received < kPingsPerRound || received > sent)
        return Error::make(QStringLiteral("ping"),
            QStringLiteral("segment %1: %2").arg(stream.segment).arg(ping.describe()));
    return {};
}

Sample Soak::sample(double seconds)
{
    Sample taken;
    taken.seconds = seconds;
    taken.hubMiB = residentMiB(m_rig.hub().pid());
    if (m_usbAgent)
        taken.usbAgentMiB = residentMiB(m_usbAgent->processId());
    if (m_segmentAgent)
        taken.segmentAgentMiB = residentMiB(m_segmentAgent->processId());
    for (const Stream &stream : m_streams) {
        const double mib = residentMiB(stream.forwarder->processId());
        taken.forwardersMiB += mib;
        taken.largestForwarderMiB = std::max(taken.largestForwarderMiB, mib);
    }
    taken.rounds = m_rounds;
    return taken;
}

std::vector<Sample> Soak::run(int seconds, int sampleSeconds)
{
    StandInControl control(m_usbAgentRoot.path());
    std::vector<Sample> samples;
    QElapsedTimer clock;
    clock.start();
    samples.push_back(sample(0));
    for (std::size_t next = 0; clock.elapsed() < seconds * 1000LL; ++next) {
        const Stream &stream = m_streams.at(next % m_streams.size());
        const Status outcome
            = stream.kind == Stream::Kind::Usb ? usbRound(stream, control) : segmentRound(stream);
        ++m_rounds;
        if (!outcome && m_failures++ == 0)
            m_firstFailure = outcome.error().message;
        if (clock.elapsed() >= qint64(samples.size()) * sampleSeconds * 1000) {
            samples.push_back(sample(clock.elapsed() / 1000.0));
            const Sample &last = samples.back();
            std::printf("%8.0f %9.1f %10.1f %10.1f %14.1f %12.1f %8lld\n", last.seconds,
                last.hubMiB, last.usbAgentMiB, last.segmentAgentMiB, last.forwardersMiB,
                last.largestForwarderMiB, static_cast<long long>(last.rounds));
            std::fflush(stdout);
        }
    }
    return samples;
}

QStringList Soak::endAndCountSegments()
{
    endRuns();
    const auto summaries = [](const QString &log) {
        QStringList lines;
        for (const QString &line : log.split(u'\n')) {
            // Without the log line's time and category.
            if (const qsizetype at = line.indexOf(u"segment stream on"); at >= 0)
                lines.append(line.mid(at).trimmed());
        }
        return lines;
    };
    QStringList lines;
    for (const Stream &stream : m_streams) {
        if (stream.kind == Stream::Kind::Segment)
            lines += summaries(stream.forwarder->stderrText());
    }
    if (m_segmentAgent)
        lines += summaries(m_segmentAgent->stderrText());
    return lines;
}

void Soak::endRuns()
{
    QList<qint64> runs;
    for (const Stream &stream : m_streams) {
        if (stream.run > 0)
            runs.append(stream.run);
    }
    QList<const ForwarderProcess *> agents;
    for (const ForwarderProcess *agent : { m_usbAgent, m_segmentAgent }) {
        if (agent)
            agents.append(agent);
    }
    const QList<qint64> unfinished
        = cloop::bench::cancelRuns(m_rig.hub(), runs, agents, kEndRunsMs);
    for (const qint64 run : unfinished)
        std::fprintf(stderr, "soak_streams: run %lld did not end within %d s of its cancelling\n",
            static_cast<long long>(run), kEndRunsMs / 1000);
    for (Stream &stream : m_streams)
        stream.run = 0;
}

struct Growth
{
    const char *what;
    double fromMiB;
    double toMiB;
    double ratio() const { return fromMiB > 0 ? (toMiB - fromMiB) / fromMiB : 0; }
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const cloop::bench::PrivateScratch scratch;
    const int streams = cloop::bench::argument(argc, argv, 1, 100, kUsage);
    const int minutes = cloop::bench::argument(argc, argv, 2, 10, kUsage);
    const int sampleSeconds = cloop::bench::argument(argc, argv, 3, 10, kUsage);
    if (qEnvironmentVariableIsEmpty("CLOOP_BINARY_DIR"))
        qputenv("CLOOP_BINARY_DIR", QCoreApplication::applicationDirPath().toLocal8Bit());
    if (const QString why = sandboxesUnavailable(); !why.isEmpty()) {
        std::printf("soak_streams: skipped (%s)\n", qPrintable(why));
        return 0;
    }
    // The segments' veth pairs and everything started see only this
    // namespace's loopback and interfaces.
    if (const QString why = enterPrivateNetwork(); !why.isEmpty()) {
        std::printf("soak_streams: skipped (%s)\n", qPrintable(why));
        return 0;
    }
    // Outside the try: what failed is printed before the runs are ended.
    std::unique_ptr<Soak> soaking;
    try {
        soaking = std::make_unique<Soak>(streams);
        Soak &soak = *soaking;
        std::printf("soak_streams: %d streams (%d USB, %d segments) for %d min, a sample every "
                    "%d s\n",
            streams, soak.usbCount(), soak.segmentCount(), minutes, sampleSeconds);
        soak.start();
        std::printf("%8s %9s %10s %10s %14s %12s %8s\n", "seconds", "hub MiB", "USB agent",
            "L2 agent", "forwarders MiB", "largest MiB", "rounds");
        const std::vector<Sample> samples = soak.run(minutes * 60, sampleSeconds);
        const double warmUp = std::max(30.0, minutes * 60 / 5.0);
        const auto warmed = std::find_if(samples.begin(), samples.end(),
            [&](const Sample &taken) { return taken.seconds >= warmUp; });
        if (warmed == samples.end() || warmed == samples.end() - 1)
            fail(QStringLiteral("too short to tell: no samples after the warm-up"));
        const Sample &from = *warmed;
        const Sample &to = samples.back();
        const Growth growths[] = {
            { "hub", from.hubMiB, to.hubMiB },
            { "USB agent", from.usbAgentMiB, to.usbAgentMiB },
            { "segment agent", from.segmentAgentMiB, to.segmentAgentMiB },
            { "forwarders", from.forwardersMiB, to.forwardersMiB },
            { "largest forwarder", from.largestForwarderMiB, to.largestForwarderMiB },
        };
        std::printf(
            "after %.0f s of warm-up, from %.0f s to %.0f s:\n", warmUp, from.seconds, to.seconds);
        bool flat = true;
        for (const Growth &growth : growths) {
            if (growth.fromMiB == 0 && growth.toMiB == 0)
                continue; // no such process in this soak
            const bool within = growth.ratio() <= kAllowedGrowth;
            flat = flat && within;
            std::printf("  %-18s %10.1f -> %10.1f MiB  %+6.1f%%  %s\n", growth.what, growth.fromMiB,
                growth.toMiB, 100.0 * growth.ratio(), within ? "flat" : "GREW");
        }
        std::printf("  %lld rounds (USB: 20 control transfers and 256 KiB out and back; segment: "
                    "%d pings of 1,200 bytes), %lld failed\n",
            static_cast<long long>(to.rounds), kPingsPerRound,
            static_cast<long long>(soak.failures()));
        if (soak.segmentCount() > 0) {
            std::printf("segment streams, as their ends counted them:\n");
            for (const QString &line : soak.endAndCountSegments())
                std::printf("  %s\n", qPrintable(line));
        }
        if (soak.failures() > 0)
            fail(QStringLiteral("%1 rounds failed, the first: %2")
                     .arg(soak.failures())
                     .arg(soak.firstFailure()));
        if (!flat)
            fail(QStringLiteral("resident memory grew by more than %1% after the warm-up")
                     .arg(100 * kAllowedGrowth));
    } catch (const BenchFailed &failure) {
        std::fprintf(stderr, "soak_streams: %s\n", failure.what());
        return 1;
    }
    return 0;
}
