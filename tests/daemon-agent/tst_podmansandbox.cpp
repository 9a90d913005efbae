// Tests of the podman sandbox driver (daemon-agent/sandbox/podmansandbox.h)
// against real podman: what a workload sees (no network but lo, no host
// devices, no host files, its workspace at /work) and what the agent sees
// (separate streams, exit codes, the engine's own errors, cancel, no
// container left behind). Skipped with a reason when podman or
// busybox-static is missing; rootful podman needs root.
//
// Every container is named cloop-run-tst<pid>-<n>, so this file can run
// beside other tests and other copies of itself.
//
// CLOOP_SANDBOX_MEASURE=1 adds two measurements (start latency, stdout
// throughput) printed as qInfo lines.

#include "daemon-agent/sandbox/podmansandbox.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using cloop::agent::PodmanSandbox;
using cloop::agent::PodmanSandboxOptions;
using cloop::agent::RunSpec;
using cloop::agent::SandboxDriver;
using namespace std::chrono_literals;

namespace {

constexpr int kRunTimeoutMs = 30'000;

// What one run produced, collected from the driver's signals.
struct Outcome
{
    QByteArray out;
    QByteArray err;
    int exitCode = -2;
    QString error;
    bool finished = false;
    qint64 startedPid = 0;
    int startedCount = 0;
    qint64 elapsedMs = 0;
    qint64 firstOutputMs = -1; // since start(), for throughput without start-up
};

// Wires a sandbox's signals into an Outcome owned by the caller.
void collect(PodmanSandbox &sandbox, Outcome &outcome)
{
    QObject::connect(&sandbox, &SandboxDriver::output, &sandbox,
        [&outcome](SandboxDriver::Stream stream, const QByteArray &bytes) {
            (stream == SandboxDriver::Stream::Stdout ? outcome.out : outcome.err) += bytes;
        });
    QObject::connect(&sandbox, &SandboxDriver::started, &sandbox, [&outcome](qint64 pid) {
        outcome.startedPid = pid;
        ++outcome.startedCount;
    });
    QObject::connect(&sandbox, &SandboxDriver::finished, &sandbox,
        [&outcome](int exitCode, const QString &error) {
            outcome.exitCode = exitCode;
            outcome.error = error;
            outcome.finished = true;
        });
}

QByteArray runPodman(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral("podman"), args);
    p.waitForFinished(30'000);
    return p.readAllStandardOutput();
}

bool containerExists(const QString &name)
{
    const QByteArray names = runPodman({ QStringLiteral("ps"), QStringLiteral("-a"),
        QStringLiteral("--format"), QStringLiteral("{{.Names}}") });
    return names.split('\n').contains(name.toUtf8());
}

// /proc/<pid>/ns/net reads as "net:[inode]", which is not a path.
QByteArray readLink(const QString &path)
{
    char buffer[256];
    const ssize_t n = ::readlink(QFile::encodeName(path).constData(), buffer, sizeof buffer);
    return n > 0 ? QByteArray(buffer, int(n)) : QByteArray();
}

} // namespace

class TestPodmanSandbox final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    // No podman needed.
    void specValidation_data();
    void specValidation();
    void argumentsCarryTheSandbox();
    void missingEngineReported();

    // Real podman.
    void streamsStaySeparate();
    void exitCodePropagates_data();
    void exitCodePropagates();
    void missingImageFails();
    void missingCommandIsEngineError();
    void runtimeFailureIsEngineError();
    void envReachesWorkload();
    void largeOutputArrivesComplete();
    void onlyLoopbackNetwork();
    void noHostDevices();
    void hostFilesInvisible();
    void noCapabilitiesReadOnlyImage();
    void workdirWritableAsRunUser();
    void pidIsTheSandboxInit();
    void cancelStopsPromptly();
    void cancelKillsWhatIgnoresTerm();
    void destructorRemovesContainer();
    void destroyedRightAfterStart_data();
    void destroyedRightAfterStart();
    void limitsApply();
    void ensureDefaultImageIsIdempotent();

    void measure();

private:
    RunSpec spec(const QStringList &argv);
    bool requirePodman();
    Outcome run(const RunSpec &runSpec, PodmanSandboxOptions options = {});

    QString m_skipReason;
    std::unique_ptr<QTemporaryDir> m_work;
    QString m_runtime;
    int m_counter = 0;
};

void TestPodmanSandbox::initTestCase()
{
    m_work = std::make_unique<QTemporaryDir>();
    QVERIFY(m_work->isValid());
    m_runtime = qEnvironmentVariable("CLOOP_TEST_RUNTIME", RunSpec::defaultRuntime());

    if (QStandardPaths::findExecutable(QStringLiteral("podman")).isEmpty()) {
        m_skipReason = QStringLiteral("podman is not installed (apt-get install -y podman)");
    } else if (!QFileInfo(QStringLiteral("/bin/busybox")).isExecutable()) {
        m_skipReason = QStringLiteral("busybox-static is not installed "
                                      "(apt-get install -y busybox-static)");
    } else if (::geteuid() != 0) {
        m_skipReason = QStringLiteral("the sandbox runs rootful podman; run this test as root");
    }
    if (!m_skipReason.isEmpty()) {
        qWarning("podman tests will be skipped: %s", qPrintable(m_skipReason));
        return;
    }
    QElapsedTimer timer;
    timer.start();
    const cloop::Status image = PodmanSandbox::ensureDefaultImage();
    QVERIFY2(image.ok(), qPrintable(image.ok() ? QString() : image.error().message));
    qInfo("default image ready after %lld ms", timer.elapsed());
}

void TestPodmanSandbox::cleanupTestCase()
{
    m_work.reset();
}

bool TestPodmanSandbox::requirePodman()
{
    return m_skipReason.isEmpty();
}

RunSpec TestPodmanSandbox::spec(const QStringList &argv)
{
    RunSpec s;
    s.runId = QStringLiteral("tst%1-%2").arg(::getpid()).arg(++m_counter);
    s.argv = argv;
    s.runtime = m_runtime;
    const QString dir = m_work->filePath(s.runId);
    QDir().mkpath(dir);
    s.workdir = dir;
    return s;
}

Outcome TestPodmanSandbox::run(const RunSpec &runSpec, PodmanSandboxOptions options)
{
    Outcome outcome;
    PodmanSandbox sandbox(std::move(options));
    collect(sandbox, outcome);
    QElapsedTimer timer;
    timer.start();
    QObject::connect(&sandbox, &SandboxDriver::output, &sandbox, [&] {
        if (outcome.firstOutputMs < 0)
            outcome.firstOutputMs = timer.elapsed();
    });
    const cloop::Status started = sandbox.start(runSpec);
    if (!started.ok()) {
        outcome.error = started.error().message;
        return outcome;
    }
    // A real event loop, not QTest::qWaitFor: that sleeps 10 ms between
    // rounds, and a full 64 KiB pipe then caps output at a few MB/s. A run
    // that does not finish shows as outcome.finished == false.
    QEventLoop loop;
    QObject::connect(
        &sandbox, &SandboxDriver::finished, &loop, &QEventLoop::quit, Qt::QueuedConnection);
    QTimer::singleShot(kRunTimeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    outcome.elapsedMs = timer.elapsed();
    return outcome;
}

#define REQUIRE_PODMAN()                                                                           \
    do {                                                                                           \
        if (!requirePodman())                                                                      \
            QSKIP(qPrintable(m_skipReason));                                                       \
    } while (false)

void TestPodmanSandbox::specValidation_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("valid");

    QTest::newRow("good") << QString() << QString() << true;
    QTest::newRow("env lower") << QStringLiteral("env") << QStringLiteral("path") << false;
    QTest::newRow("env digit first") << QStringLiteral("env") << QStringLiteral("1X") << false;
    QTest::newRow("env wildcard") << QStringLiteral("env") << QStringLiteral("FOO*") << false;
    QTest::newRow("env equals") << QStringLiteral("env") << QStringLiteral("A=B") << false;
    QTest::newRow("env ok") << QStringLiteral("env") << QStringLiteral("_A1_B") << true;
    QTest::newRow("env value newline")
        << QStringLiteral("envValue") << QStringLiteral("a\nb") << false;
    QTest::newRow("env value odd")
        << QStringLiteral("envValue") << QStringLiteral(" =#$(x) ") << true;
    QTest::newRow("run id slash") << QStringLiteral("runId") << QStringLiteral("a/b") << false;
    QTest::newRow("run id empty") << QStringLiteral("runId") << QString() << false;
    QTest::newRow("image option") << QStringLiteral("image") << QStringLiteral("--privileged")
                                  << false;
    QTest::newRow("image space") << QStringLiteral("image") << QStringLiteral("a b") << false;
    QTest::newRow("argv empty") << QStringLiteral("argv") << QString() << false;
    QTest::newRow("workdir relative") << QStringLiteral("workdir") << QStringLiteral("w") << false;
    QTest::newRow("workdir colon")
        << QStringLiteral("workdir") << QStringLiteral("/w:/etc") << false;
    QTest::newRow("workdir comma") << QStringLiteral("workdir") << QStringLiteral("/w,ro") << false;
    QTest::newRow("user name") << QStringLiteral("user") << QStringLiteral("root") << false;
    QTest::newRow("user uid only") << QStringLiteral("user") << QStringLiteral("1000") << false;
    QTest::newRow("user ok") << QStringLiteral("user") << QStringLiteral("1000:1000") << true;
    QTest::newRow("runtime option") << QStringLiteral("runtime") << QStringLiteral("--x") << false;
    QTest::newRow("memory tiny") << QStringLiteral("memory") << QStringLiteral("1024") << false;
    QTest::newRow("capability for a segment")
        << QStringLiteral("capability") << QStringLiteral("NET_ADMIN") << true;
    QTest::newRow("capability raw")
        << QStringLiteral("capability") << QStringLiteral("NET_RAW") << true;
    QTest::newRow("capability sys admin")
        << QStringLiteral("capability") << QStringLiteral("SYS_ADMIN") << false;
    QTest::newRow("capability all")
        << QStringLiteral("capability") << QStringLiteral("ALL") << false;
}

void TestPodmanSandbox::specValidation()
{
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(bool, valid);

    RunSpec s;
    s.runId = QStringLiteral("r1");
    s.argv = { QStringLiteral("true") };
    s.workdir = QStringLiteral("/w");
    if (field == QLatin1String("env"))
        s.env.insert(value, QStringLiteral("v"));
    else if (field == QLatin1String("envValue"))
        s.env.insert(QStringLiteral("V"), value);
    else if (field == QLatin1String("runId"))
        s.runId = value;
    else if (field == QLatin1String("image"))
        s.image = value;
    else if (field == QLatin1String("argv"))
        s.argv.clear();
    else if (field == QLatin1String("workdir"))
        s.workdir = value;
    else if (field == QLatin1String("user"))
        s.user = value;
    else if (field == QLatin1String("runtime"))
        s.runtime = value;
    else if (field == QLatin1String("capability"))
        s.addedCapabilities = { value };
    else if (field == QLatin1String("memory"))
        s.memoryLimitBytes = value.toLongLong();
    const cloop::Status status = s.validate();
    QCOMPARE(status.ok(), valid);
    if (!valid)
        QCOMPARE(status.error().code, QStringLiteral("run_spec_invalid"));
}

void TestPodmanSandbox::argumentsCarryTheSandbox()
{
    RunSpec s;
    s.runId = QStringLiteral("42");
    s.argv
        = { QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo $X; --privileged") };
    s.workdir = QStringLiteral("/srv/work/p/42");
    s.env.insert(QStringLiteral("X"), QStringLiteral("a b"));
    s.user = QStringLiteral("999:998");
    s.memoryLimitBytes = 64 * 1024 * 1024;
    const QStringList args = PodmanSandbox::runArguments(s, QStringLiteral("/private/env"));

    auto valueAfter = [&args](const QString &flag) {
        const qsizetype i = args.indexOf(flag);
        return i >= 0 && i + 1 < args.size() ? args.at(i + 1) : QString();
    };
    QCOMPARE(args.first(), QStringLiteral("run"));
    QVERIFY(args.contains(QStringLiteral("--rm")));
    QCOMPARE(valueAfter(QStringLiteral("--name")), QStringLiteral("cloop-run-42"));
    QCOMPARE(valueAfter(QStringLiteral("--network")), QStringLiteral("none"));
    QCOMPARE(valueAfter(QStringLiteral("--runtime")), QStringLiteral("runc"));
    QCOMPARE(valueAfter(QStringLiteral("--cap-drop")), QStringLiteral("ALL"));
    QCOMPARE(valueAfter(QStringLiteral("--security-opt")), QStringLiteral("no-new-privileges"));
    QCOMPARE(valueAfter(QStringLiteral("--pull")), QStringLiteral("never"));
    QCOMPARE(valueAfter(QStringLiteral("--user")), QStringLiteral("999:998"));
    // Values stay off the command line, where any local user could read them.
    QCOMPARE(valueAfter(QStringLiteral("--env-file")), QStringLiteral("/private/env"));
    QVERIFY(!args.join(QLatin1Char(' ')).contains(QStringLiteral("a b")));
    QCOMPARE(PodmanSandbox::envFileContents(s), QByteArray("X=a b\n"));
    QCOMPARE(valueAfter(QStringLiteral("--volume")),
        QStringLiteral("/srv/work/p/42:/work:rw,nosuid,nodev"));
    QCOMPARE(valueAfter(QStringLiteral("--workdir")), QStringLiteral("/work"));
    QCOMPARE(valueAfter(QStringLiteral("--memory")), QStringLiteral("67108864"));
    QVERIFY(args.contains(QStringLiteral("--read-only")));
    QVERIFY(args.contains(QStringLiteral("nofile=20000:20000")));
    QVERIFY(args.contains(QStringLiteral("nproc=4096:4096")));
    QVERIFY(!args.contains(QStringLiteral("--device")));
    QVERIFY(!args.contains(QStringLiteral("--cap-add")));
    // The image, then the command exactly as given, at the end: podman
    // stops reading options at the image.
    QCOMPARE(args.mid(args.size() - 4),
        QStringList({ RunSpec::defaultImage(), s.argv.at(0), s.argv.at(1), s.argv.at(2) }));
    QCOMPARE(args.indexOf(QStringLiteral("--privileged")), -1);

    // A run with a segment may configure it, and nothing more.
    s.addedCapabilities = { QStringLiteral("NET_ADMIN"), QStringLiteral("NET_RAW") };
    const QStringList withDevice = PodmanSandbox::runArguments(s, QStringLiteral("/private/env"));
    QCOMPARE(withDevice.count(QStringLiteral("--cap-add")), 2);
    QVERIFY(withDevice.indexOf(QStringLiteral("--cap-add"))
        > withDevice.indexOf(QStringLiteral("--cap-drop")));
    QVERIFY(withDevice.contains(QStringLiteral("NET_ADMIN"))
        && withDevice.contains(QStringLiteral("NET_RAW")));
    QVERIFY(!withDevice.contains(QStringLiteral("--device-cgroup-rule")));

    // A run with a USB device gets its node, and the device cgroup lets it
    // use the node the agent makes when the device comes back, read and
    // write only (the agent makes the node, never the workload).
    s.addedCapabilities.clear();
    s.deviceNodes = { RunSpec::DeviceNode {
        QStringLiteral("/dev/bus/usb/003/002"), QStringLiteral("/dev/bus/usb/003/002") } };
    s.usbNodesMayReturn = true;
    const QStringList withUsb = PodmanSandbox::runArguments(s, QStringLiteral("/private/env"));
    QCOMPARE(withUsb.at(withUsb.indexOf(QStringLiteral("--device")) + 1),
        QStringLiteral("/dev/bus/usb/003/002:/dev/bus/usb/003/002:rwm"));
    QCOMPARE(withUsb.at(withUsb.indexOf(QStringLiteral("--device-cgroup-rule")) + 1),
        QStringLiteral("c 189:* rw"));
    QCOMPARE(withUsb.count(QStringLiteral("--device-cgroup-rule")), 1);
    QVERIFY(!withUsb.contains(QStringLiteral("--cap-add")));
}

void TestPodmanSandbox::missingEngineReported()
{
    RunSpec s;
    s.runId = QStringLiteral("tst%1-noengine").arg(::getpid());
    s.argv = { QStringLiteral("true") };
    s.workdir = m_work->path();
    PodmanSandboxOptions options;
    options.podman = QStringLiteral("/nonexistent/podman");
    const Outcome o = run(s, options);
    QVERIFY(o.finished);
    QCOMPARE(o.exitCode, -1);
    QVERIFY2(o.error.contains(QStringLiteral("/nonexistent/podman")), qPrintable(o.error));
    QCOMPARE(o.startedCount, 0);
}

void TestPodmanSandbox::streamsStaySeparate()
{
    REQUIRE_PODMAN();
    const Outcome o = run(spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("echo to-out; echo to-err >&2; printf partial") }));
    QVERIFY(o.finished);
    QCOMPARE(o.error, QString());
    QCOMPARE(o.exitCode, 0);
    QCOMPARE(o.out, QByteArray("to-out\npartial"));
    QCOMPARE(o.err, QByteArray("to-err\n"));
}

void TestPodmanSandbox::exitCodePropagates_data()
{
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("exitCode");

    QTest::newRow("7") << QStringLiteral("exit 7") << 7;
    // The codes podman uses for its own failures are the workload's when
    // the workload returns them: a shell's "command not found" is not
    // podman's error.
    QTest::newRow("shell's 127") << QStringLiteral("nosuchtool") << 127;
    QTest::newRow("own 126") << QStringLiteral("exit 126") << 126;
    QTest::newRow("own 125") << QStringLiteral("echo oops >&2; exit 125") << 125;
    QTest::newRow("killed by a signal") << QStringLiteral("kill -KILL $$") << 128 + 9;
}

void TestPodmanSandbox::exitCodePropagates()
{
    REQUIRE_PODMAN();
    QFETCH(QString, script);
    QFETCH(int, exitCode);
    const Outcome o = run(spec({ QStringLiteral("sh"), QStringLiteral("-c"), script }));
    QVERIFY(o.finished);
    QCOMPARE(o.exitCode, exitCode);
    QCOMPARE(o.error, QString());
}

void TestPodmanSandbox::missingImageFails()
{
    REQUIRE_PODMAN();
    RunSpec s = spec({ QStringLiteral("true") });
    s.image = QStringLiteral("localhost/cloop-no-such-image-%1:latest").arg(::getpid());
    const Outcome o = run(s);
    QVERIFY(o.finished);
    QCOMPARE(o.exitCode, 125);
    QVERIFY2(o.error.contains(s.image) && o.error.contains(QStringLiteral("image not known")),
        qPrintable(o.error));
    QCOMPARE(o.startedCount, 0);
}

void TestPodmanSandbox::missingCommandIsEngineError()
{
    REQUIRE_PODMAN();
    const RunSpec s = spec({ QStringLiteral("/no/such/binary") });
    const Outcome o = run(s);
    QVERIFY(o.finished);
    QCOMPARE(o.exitCode, 127);
    QVERIFY2(o.error.contains(QStringLiteral("/no/such/binary"))
            && o.error.contains(QStringLiteral("No such file or directory")),
        qPrintable(o.error));
    // podman's --rm cleaned up after the failed start.
    QVERIFY(!containerExists(PodmanSandbox::containerNameFor(s.runId)));

    const Outcome notExecutable = run(spec({ QStringLiteral("/etc/passwd") }));
    QCOMPARE(notExecutable.exitCode, 126);
    QVERIFY2(notExecutable.error.contains(QStringLiteral("Permission denied")),
        qPrintable(notExecutable.error));
}

void TestPodmanSandbox::runtimeFailureIsEngineError()
{
    REQUIRE_PODMAN();
    // An OCI runtime that fails the way a broken one would.
    const QString runtime = m_work->filePath(QStringLiteral("broken-runtime"));
    QFile script(runtime);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write("#!/bin/sh\necho \"broken runtime refuses: $1\" >&2\nexit 1\n");
    script.close();
    QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));

    RunSpec s = spec({ QStringLiteral("true") });
    s.runtime = runtime;
    const Outcome o = run(s);
    QVERIFY(o.finished);
    QCOMPARE(o.exitCode, 126);
    QVERIFY2(
        o.error.contains(QStringLiteral("broken runtime refuses: create")), qPrintable(o.error));
    QVERIFY(!containerExists(PodmanSandbox::containerNameFor(s.runId)));
}

void TestPodmanSandbox::envReachesWorkload()
{
    REQUIRE_PODMAN();
    RunSpec s = spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("printf '%s|%s' \"$GREETING\" \"$CLOOP_FORWARDED_DEVICES\"") });
    s.env.insert(QStringLiteral("GREETING"), QStringLiteral(" hello world; $(not run) #1 "));
    s.env.insert(QStringLiteral("CLOOP_FORWARDED_DEVICES"), QStringLiteral("fwd-lab=l2:fwd0"));
    const Outcome o = run(s);
    QCOMPARE(o.error, QString());
    QCOMPARE(o.out, QByteArray(" hello world; $(not run) #1 |fwd-lab=l2:fwd0"));
}

void TestPodmanSandbox::largeOutputArrivesComplete()
{
    REQUIRE_PODMAN();
    // 5 MiB of a pattern whose every byte is checkable: 655360 lines of
    // seven digits and a newline.
    constexpr int kFirst = 1'000'000;
    constexpr int kLines = 5 * 1024 * 1024 / 8;
    const Outcome o = run(spec(
        { QStringLiteral("seq"), QString::number(kFirst), QString::number(kFirst + kLines - 1) }));
    QCOMPARE(o.error, QString());
    QCOMPARE(o.exitCode, 0);
    QCOMPARE(o.out.size(), qsizetype(5 * 1024 * 1024));
    QByteArray expected;
    expected.reserve(o.out.size());
    for (int i = 0; i < kLines; ++i)
        expected += QByteArray::number(kFirst + i) + '\n';
    QVERIFY(o.out == expected);
    QVERIFY(o.err.isEmpty());
}

void TestPodmanSandbox::onlyLoopbackNetwork()
{
    REQUIRE_PODMAN();
    const Outcome o = run(spec({ QStringLiteral("cat"), QStringLiteral("/proc/net/dev") }));
    QCOMPARE(o.error, QString());
    QCOMPARE(o.exitCode, 0);
    QStringList interfaces;
    for (const QByteArray &line : o.out.split('\n')) {
        if (line.contains(':'))
            interfaces << QString::fromUtf8(line.left(line.indexOf(':')).trimmed());
    }
    QCOMPARE(interfaces, QStringList({ QStringLiteral("lo") }));
}

void TestPodmanSandbox::noHostDevices()
{
    REQUIRE_PODMAN();
    const Outcome o = run(spec({ QStringLiteral("ls"), QStringLiteral("-1a"),
        QStringLiteral("/dev"), QStringLiteral("/dev/net") }));
    QVERIFY(o.finished);
    const QList<QByteArray> inside = o.out.split('\n');
    QVERIFY(inside.contains("null"));
    QVERIFY(inside.contains("urandom"));
    QVERIFY(!inside.contains("kvm"));
    QVERIFY(!inside.contains("sda"));
    QVERIFY(!inside.contains("vda"));
    QVERIFY(!inside.contains("tun"));
    // Every device node of the host beyond the few harmless ones podman
    // creates itself stays outside.
    const QStringList harmless = { QStringLiteral("null"), QStringLiteral("zero"),
        QStringLiteral("full"), QStringLiteral("random"), QStringLiteral("urandom"),
        QStringLiteral("tty"), QStringLiteral("ptmx"), QStringLiteral("console") };
    const QStringList hostDev
        = QDir(QStringLiteral("/dev")).entryList(QDir::System | QDir::NoDotAndDotDot);
    for (const QString &name : hostDev) {
        struct stat st
        {
        };
        if (::lstat(QFile::encodeName(QStringLiteral("/dev/") + name).constData(), &st) != 0)
            continue;
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
            continue;
        if (harmless.contains(name))
            continue;
        QVERIFY2(!inside.contains(name.toUtf8()),
            qPrintable(QStringLiteral("/dev/%1 is visible").arg(name)));
    }
}

void TestPodmanSandbox::hostFilesInvisible()
{
    REQUIRE_PODMAN();
    // A marker in the host's /root proves the workload is not looking at it.
    const QString marker = QStringLiteral("cloop-tst-marker-%1").arg(::getpid());
    const QString markerPath = QStringLiteral("/root/") + marker;
    QFile file(markerPath);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("secret");
    file.close();
    const auto removeMarker = qScopeGuard([&] { QFile::remove(markerPath); });

    QFile shadow(QStringLiteral("/etc/shadow"));
    QByteArray hostShadowFirstLine;
    if (shadow.open(QIODevice::ReadOnly))
        hostShadowFirstLine = shadow.readLine().trimmed();

    const Outcome o = run(spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("cat /etc/shadow; ls -a /root /; cat /root/%1").arg(marker) }));
    QVERIFY(o.finished);
    QCOMPARE(o.error, QString());
    QVERIFY(!o.out.contains(marker.toUtf8()));
    QVERIFY(!o.out.contains("secret"));
    if (!hostShadowFirstLine.isEmpty())
        QVERIFY(!o.out.contains(hostShadowFirstLine));
    QVERIFY(o.err.contains("/etc/shadow"));
}

void TestPodmanSandbox::noCapabilitiesReadOnlyImage()
{
    REQUIRE_PODMAN();
    const Outcome o = run(spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("grep -E '^Cap(Eff|Bnd)' /proc/self/status; "
                       "grep NoNewPrivs /proc/self/status; "
                       "touch /etc/x 2>/dev/null && echo image-writable; "
                       "touch /tmp/x && echo tmp-writable") }));
    QCOMPARE(o.error, QString());
    QVERIFY2(o.out.contains("CapEff:\t0000000000000000"), o.out.constData());
    QVERIFY2(o.out.contains("CapBnd:\t0000000000000000"), o.out.constData());
    QVERIFY2(o.out.contains("NoNewPrivs:\t1"), o.out.constData());
    QVERIFY(!o.out.contains("image-writable"));
    QVERIFY(o.out.contains("tmp-writable"));
}

void TestPodmanSandbox::workdirWritableAsRunUser()
{
    REQUIRE_PODMAN();
    // As the agent does when root: the workspace belongs to an unprivileged
    // user and the workload runs as that user.
    RunSpec s = spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("id -u; pwd; echo written > result.txt") });
    QVERIFY(::chown(QFile::encodeName(s.workdir).constData(), 65534, 65534) == 0);
    QVERIFY(::chmod(QFile::encodeName(s.workdir).constData(), 0700) == 0);
    s.user = QStringLiteral("65534:65534");
    const Outcome o = run(s);
    QCOMPARE(o.error, QString());
    QCOMPARE(o.exitCode, 0);
    QCOMPARE(o.out, QByteArray("65534\n/work\n"));
    QFile result(s.workdir + QStringLiteral("/result.txt"));
    QVERIFY(result.open(QIODevice::ReadOnly));
    QCOMPARE(result.readAll(), QByteArray("written\n"));
    struct stat st
    {
    };
    QVERIFY(::stat(QFile::encodeName(result.fileName()).constData(), &st) == 0);
    QCOMPARE(st.st_uid, uid_t(65534));
}

void TestPodmanSandbox::pidIsTheSandboxInit()
{
    REQUIRE_PODMAN();
    Outcome o;
    PodmanSandbox sandbox;
    collect(sandbox, o);
    QVERIFY(sandbox.start(spec({ QStringLiteral("sleep"), QStringLiteral("1000") })).ok());
    QTRY_VERIFY_WITH_TIMEOUT(o.startedCount == 1, 10'000);
    QCOMPARE(sandbox.pid(), o.startedPid);
    QVERIFY(o.startedPid > 0);
    // Its own network namespace: the one a TAP would be moved into.
    const QByteArray theirs = readLink(QStringLiteral("/proc/%1/ns/net").arg(o.startedPid));
    const QByteArray ours = readLink(QStringLiteral("/proc/self/ns/net"));
    QVERIFY(!theirs.isEmpty());
    QVERIFY(theirs != ours);
    sandbox.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(o.finished, 10'000);
    QCOMPARE(sandbox.pid(), qint64(0));
    QCOMPARE(o.startedCount, 1);
}

void TestPodmanSandbox::cancelStopsPromptly()
{
    REQUIRE_PODMAN();
    Outcome o;
    PodmanSandbox sandbox;
    collect(sandbox, o);
    const RunSpec s = spec({ QStringLiteral("sleep"), QStringLiteral("1000") });
    QVERIFY(sandbox.start(s).ok());
    QTRY_VERIFY_WITH_TIMEOUT(o.startedCount == 1, 10'000);
    QElapsedTimer timer;
    timer.start();
    sandbox.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(o.finished, 5'000);
    qInfo("cancel took %lld ms", timer.elapsed());
    // TERM reached sleep through the sandbox's init: no KILL needed.
    QCOMPARE(o.exitCode, 128 + 15);
    QCOMPARE(o.error, QString());
    QVERIFY(!containerExists(sandbox.containerName()));
}

void TestPodmanSandbox::cancelKillsWhatIgnoresTerm()
{
    REQUIRE_PODMAN();
    Outcome o;
    PodmanSandboxOptions options;
    options.gracePeriod = 500ms;
    PodmanSandbox sandbox(options);
    collect(sandbox, o);
    QVERIFY(sandbox
                .start(spec({ QStringLiteral("sh"), QStringLiteral("-c"),
                    QStringLiteral("trap '' TERM; echo ready; while :; do sleep 1; done") }))
                .ok());
    QTRY_VERIFY_WITH_TIMEOUT(o.startedCount == 1 && o.out.contains("ready"), 10'000);
    QElapsedTimer timer;
    timer.start();
    sandbox.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(o.finished, 10'000);
    qInfo("cancel with KILL took %lld ms", timer.elapsed());
    QVERIFY(timer.elapsed() >= 500);
    QCOMPARE(o.exitCode, 128 + 9);
    QVERIFY(!containerExists(sandbox.containerName()));
}

void TestPodmanSandbox::destructorRemovesContainer()
{
    REQUIRE_PODMAN();
    QString name;
    {
        Outcome o;
        PodmanSandbox sandbox;
        collect(sandbox, o);
        QVERIFY(sandbox.start(spec({ QStringLiteral("sleep"), QStringLiteral("1000") })).ok());
        QTRY_VERIFY_WITH_TIMEOUT(o.startedCount == 1, 10'000);
        name = sandbox.containerName();
        QVERIFY(containerExists(name));
    }
    QVERIFY(!containerExists(name));
}

void TestPodmanSandbox::destroyedRightAfterStart_data()
{
    QTest::addColumn<int>("delayMs");
    // Before, around and after the moment podman creates the container.
    QTest::newRow("0 ms") << 0;
    QTest::newRow("60 ms") << 60;
    QTest::newRow("120 ms") << 120;
    QTest::newRow("180 ms") << 180;
}

void TestPodmanSandbox::destroyedRightAfterStart()
{
    REQUIRE_PODMAN();
    QFETCH(int, delayMs);
    // The agent may drop a run while podman is still creating it.
    QString name;
    QElapsedTimer timer;
    timer.start();
    {
        PodmanSandbox sandbox;
        QVERIFY(sandbox.start(spec({ QStringLiteral("sleep"), QStringLiteral("1000") })).ok());
        name = sandbox.containerName();
        QTest::qWait(delayMs);
    }
    qInfo("destroyed after %d ms; %lld ms in all", delayMs, timer.elapsed());
    QVERIFY(!containerExists(name));
}

void TestPodmanSandbox::limitsApply()
{
    REQUIRE_PODMAN();
    RunSpec s = spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                       "/sys/fs/cgroup/memory.max /sys/fs/cgroup/pids/pids.max "
                       "/sys/fs/cgroup/pids.max 2>/dev/null; ulimit -n; ulimit -u") });
    s.memoryLimitBytes = 64 * 1024 * 1024;
    s.pidsLimit = 100;
    const Outcome o = run(s);
    QCOMPARE(o.error, QString());
    // cgroup v1 or v2 file names, whichever this host has.
    QCOMPARE(o.out, QByteArray("67108864\n100\n20000\n4096\n"));
}

void TestPodmanSandbox::ensureDefaultImageIsIdempotent()
{
    REQUIRE_PODMAN();
    // Already there from initTestCase: a second call only asks.
    QElapsedTimer timer;
    timer.start();
    QVERIFY(PodmanSandbox::ensureDefaultImage().ok());
    QVERIFY(timer.elapsed() < 5'000);

    // A fresh import under a name of this process, removed afterwards.
    const QString image = QStringLiteral("localhost/cloop-tst-busybox-%1:latest").arg(::getpid());
    const auto removeImage = qScopeGuard([&] {
        runPodman({ QStringLiteral("rmi"), QStringLiteral("-f"), image });
    });
    const cloop::Status imported = PodmanSandbox::ensureDefaultImage(image);
    QVERIFY2(imported.ok(), qPrintable(imported.ok() ? QString() : imported.error().message));
    RunSpec s = spec({ QStringLiteral("sh"), QStringLiteral("-c"),
        QStringLiteral("ls /bin/ls /usr/bin/seq && id -un") });
    s.image = image;
    const Outcome o = run(s);
    QCOMPARE(o.error, QString());
    QCOMPARE(o.exitCode, 0);
    QVERIFY(o.out.endsWith("root\n"));

    const cloop::Status noBusybox = PodmanSandbox::ensureDefaultImage(
        QStringLiteral("localhost/cloop-tst-none-%1:latest").arg(::getpid()),
        QStringLiteral("/nonexistent/busybox"));
    QVERIFY(!noBusybox.ok());
    QVERIFY(noBusybox.error().message.contains(QStringLiteral("busybox-static")));
}

void TestPodmanSandbox::measure()
{
    REQUIRE_PODMAN();
    if (qEnvironmentVariableIntValue("CLOOP_SANDBOX_MEASURE") != 1)
        QSKIP("set CLOOP_SANDBOX_MEASURE=1 to measure latency and throughput");

    QList<qint64> latencies;
    for (int i = 0; i < 10; ++i) {
        const Outcome o = run(spec({ QStringLiteral("true") }));
        QCOMPARE(o.exitCode, 0);
        latencies << o.elapsedMs;
    }
    std::sort(latencies.begin(), latencies.end());
    qInfo("podman run true through the driver: median %lld ms (min %lld, max %lld)",
        (latencies.at(4) + latencies.at(5)) / 2, latencies.first(), latencies.last());

    for (int i = 0; i < 3; ++i) {
        const Outcome o = run(spec({ QStringLiteral("dd"), QStringLiteral("if=/dev/zero"),
            QStringLiteral("bs=1M"), QStringLiteral("count=200") }));
        QCOMPARE(o.exitCode, 0);
        QCOMPARE(o.out.size(), qsizetype(200) * 1024 * 1024);
        const double megabytes = 200.0 * 1024 * 1024 / 1e6;
        const qint64 streamingMs = std::max<qint64>(1, o.elapsedMs - o.firstOutputMs);
        qInfo("200 MiB of stdout in %lld ms: %.1f MB/s including start, %.1f MB/s from the "
              "first byte",
            o.elapsedMs, megabytes / (double(o.elapsedMs) / 1000.0),
            megabytes / (double(streamingMs) / 1000.0));
    }
}

QTEST_GUILESS_MAIN(TestPodmanSandbox)
#include "tst_podmansandbox.moc"
