// Unit tests of the agent's capability detection (daemon-agent/capabilities,
// daemon-agent/system): the sysfs root override, the USB inventory and the
// attach verdicts on fixture trees made at test time, podman and nft through
// a fake command runner, the value type's JSON and summary, and one probe of
// the real machine that checks only what holds everywhere.

#include "cloop/buildinfo.h"
#include "common/device/sysfsroot.h"
#include "common/protocol/agentcapabilities.h"
#include "common/protocol/protocolversion.h"
#include "common/util/commandrunner.h"
#include "common/util/processcommandrunner.h"
#include "daemon-agent/capabilities/capabilityprobe.h"
#include "daemon-agent/capabilities/containersconf.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace cloop;
using namespace cloop::agent;
using cloop::util::CommandOutput;
using cloop::util::ProcessCommandRunner;
using namespace std::chrono_literals;

using Caps = AgentCapabilities;

Q_DECLARE_METATYPE(cloop::protocol::AgentCapabilities)

namespace {

// What `podman info --format json` printed with podman 4.3.1 on Debian 12
// (trimmed to the parts around what the probe reads).
const QByteArray kPodmanInfo = R"({
  "host": {
    "arch": "amd64",
    "buildahVersion": "1.28.2",
    "cgroupManager": "cgroupfs",
    "cgroupVersion": "v1",
    "conmon": {"package": "conmon_2.1.6+ds1-1_amd64", "path": "/usr/bin/conmon",
               "version": "conmon version 2.1.6, commit: unknown"},
    "cpus": 2,
    "distribution": {"distribution": "debian", "version": "12", "codename": "bookworm"},
    "kernel": "6.1.0-18-amd64",
    "memTotal": 25276502016,
    "networkBackend": "netavark",
    "ociRuntime": {
      "name": "runc",
      "package": "runc_1.1.5+ds1-1+deb12u1_amd64",
      "path": "/usr/bin/runc",
      "version": "runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev"
    },
    "os": "linux",
    "security": {"rootless": false, "seccompEnabled": true}
  },
  "store": {"graphDriverName": "overlay", "graphRoot": "/var/lib/containers/storage"},
  "registries": {},
  "plugins": {"volume": ["local"], "network": ["bridge", "macvlan"], "authorization": null},
  "version": {
    "APIVersion": "4.3.1",
    "Version": "4.3.1",
    "GoVersion": "go1.19.8",
    "OsArch": "linux/amd64",
    "Os": "linux"
  }
})";

// Canned answers instead of the host's tools. A command nobody faked fails
// the way a missing one would.
class FakeRunner final : public CommandRunner
{
public:
    QMap<QString, QString> executables; // name or absolute path -> path
    std::map<QString, Result<CommandOutput>> answers; // "podman info --format json" -> answer
    QStringList calls;
    QList<std::chrono::milliseconds> timeouts; // what each call was given

    QString findExecutable(const QString &nameOrPath) const override
    {
        return executables.value(nameOrPath);
    }

    Result<CommandOutput> run(const QString &program, const QStringList &arguments,
        std::chrono::milliseconds timeout) override
    {
        const QString line
            = QFileInfo(program).fileName() + QLatin1Char(' ') + arguments.join(QLatin1Char(' '));
        calls.append(line);
        timeouts.append(timeout);
        const auto it = answers.find(line);
        if (it == answers.end())
            return Error::make(
                QStringLiteral("command_failed"), QStringLiteral("%1 not faked").arg(line));
        return it->second;
    }

    void answer(
        const QString &line, int exitCode, const QByteArray &out, const QByteArray &err = {})
    {
        answers.insert_or_assign(line, Result<CommandOutput>(CommandOutput { exitCode, out, err }));
    }
};

// A fake "/" with sys/, dev/ and proc/ below it.
class Fixture
{
public:
    Fixture() { QVERIFY(m_dir.isValid()); }

    QString root() const { return m_dir.path(); }
    SysfsRoot roots() const { return SysfsRoot(root()); }

    void write(const QString &absolute, const QByteArray &contents)
    {
        const QString path = root() + absolute;
        QVERIFY(QDir().mkpath(QFileInfo(path).path()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(file.write(contents), contents.size());
    }

    void mkdir(const QString &absolute) { QVERIFY(QDir().mkpath(root() + absolute)); }

    void usbDevice(const QString &busId, const QByteArray &vid, const QByteArray &pid)
    {
        const QString base = QStringLiteral("/sys/bus/usb/devices/") + busId;
        write(base + QStringLiteral("/idVendor"), vid + '\n');
        write(base + QStringLiteral("/idProduct"), pid + '\n');
    }

    // A USB device, one of its interfaces and a root hub.
    void usbTree()
    {
        usbDevice(QStringLiteral("1-1"), "1050", "0407");
        write(QStringLiteral("/sys/bus/usb/devices/1-1/serial"), "0012345678\n");
        write(QStringLiteral("/sys/bus/usb/devices/1-1/product"), "YubiKey OTP+FIDO+CCID\n");
        write(QStringLiteral("/sys/bus/usb/devices/1-1/speed"), "12\n");
        write(QStringLiteral("/sys/bus/usb/devices/1-1:1.0/bInterfaceClass"), "03\n");
        usbDevice(QStringLiteral("usb1"), "1d6b", "0002");
    }

    void vhci(bool withAttach)
    {
        mkdir(QStringLiteral("/sys/devices/platform/vhci_hcd.0"));
        if (withAttach)
            write(QStringLiteral("/sys/devices/platform/vhci_hcd.0/attach"), {});
    }

private:
    QTemporaryDir m_dir;
};

struct ProbeParts
{
    FakeRunner *runner = nullptr; // owned by the probe
    std::unique_ptr<CapabilityProbe> probe;
};

ProbeParts makeProbe(const SysfsRoot &roots, unsigned int euid = 0,
    const std::function<void(FakeRunner &)> &setUp = {}, QStringList confFiles = {})
{
    auto runner = std::make_unique<FakeRunner>();
    if (setUp)
        setUp(*runner);
    ProbeParts parts;
    parts.runner = runner.get();
    parts.probe = std::make_unique<CapabilityProbe>(
        roots, std::move(runner), [euid] { return euid; }, std::move(confFiles));
    return parts;
}

// A podman with runc (its default, per `podman info`) and crun registered.
void podmanWithRuncAndCrun(FakeRunner &runner)
{
    runner.executables.insert(QStringLiteral("podman"), QStringLiteral("/usr/bin/podman"));
    runner.executables.insert(QStringLiteral("runc"), QStringLiteral("/usr/bin/runc"));
    runner.executables.insert(QStringLiteral("crun"), QStringLiteral("/usr/bin/crun"));
    runner.answer(QStringLiteral("podman info --format json"), 0, kPodmanInfo);
}

void networkTools(FakeRunner &runner)
{
    runner.executables.insert(QStringLiteral("ip"), QStringLiteral("/usr/sbin/ip"));
    runner.executables.insert(QStringLiteral("nsenter"), QStringLiteral("/usr/bin/nsenter"));
}

Caps sampleCapabilities()
{
    Caps caps;
    caps.softwareVersion = QStringLiteral("0.1.0");
    caps.protocolVersion = 22;
    caps.os = QStringLiteral("linux");
    caps.arch = QStringLiteral("x86_64");
    caps.kernel = QStringLiteral("6.1.0-18-amd64");
    caps.cpus = 2;
    caps.memoryBytes = qint64(24684084) * 1024;
    caps.labels = { { QStringLiteral("rack"), QStringLiteral("b3") },
        { QStringLiteral("gpu"), QStringLiteral("none") } };
    caps.maxConcurrent = 2;
    caps.mode = Caps::Mode::Container;
    caps.engine.present = true;
    caps.engine.name = QStringLiteral("podman");
    caps.engine.version = QStringLiteral("4.3.1");
    caps.engine.defaultRuntime = QStringLiteral("runc");
    caps.engine.runtimes = { { QStringLiteral("runc"), QStringLiteral("/usr/bin/runc"),
                                 Caps::RuntimeKind::Runc },
        { QStringLiteral("crun"), QStringLiteral("/usr/bin/crun"), Caps::RuntimeKind::Crun } };
    caps.kvm = { true, {} };
    caps.packetFilter = { true, QStringLiteral("nft"), QStringLiteral("1.0.6"), {} };
    caps.usbInventory = { { QStringLiteral("1-1"), 0x1050, 0x0407, QStringLiteral("0012345678"),
        QStringLiteral("YubiKey"), QStringLiteral("12") } };
    caps.usbAttach = { false, QStringLiteral("vhci_hcd missing") };
    caps.l2Attach = { true, {} };
    return caps;
}

} // namespace

class TestCapabilities final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // SysfsRoot
    void sysfsRootMapsKernelPaths();
    void sysfsRootKeepsSeparateRoots();
    void sysfsRootReads();

    // Detection on fixtures and fake tools
    void usbInventorySkipsInterfacesAndRootHubs();
    void usbAttach_data();
    void usbAttach();
    void engineFromPodmanInfo();
    void engineWithBrokenJson();
    void engineMissing();
    void engineFailing();
    void runtimesFromContainersConf();
    void parsesContainersConf();
    void kvmOnFixtures();
    void packetFilter_data();
    void packetFilter();
    void l2Attach_data();
    void l2Attach();
    void memoryFromMeminfo();
    void probeFillsEverything();

    // The value type
    void summary_data();
    void summary();
    void summaryKeepsOneLine();
    void jsonRoundTrip();
    void fromJsonToleratesOlderAndNewerAgents();
    void fromJsonRefuses_data();
    void fromJsonRefuses();
    void fromJsonRefusesOversizedInput();
    void validatesLabels();
    void harnessesAreFoundOnPath();

    // The real tools and machine
    void processRunnerRunsAndTimesOut();
    void realProbeInvariants();
};

void TestCapabilities::sysfsRootMapsKernelPaths()
{
    const SysfsRoot real;
    QCOMPARE(real.path(u"/sys/bus/usb/devices"), QStringLiteral("/sys/bus/usb/devices"));

    const SysfsRoot fake(QStringLiteral("/tmp/fx/"));
    QCOMPARE(fake.path(u"/sys/bus/usb"), QStringLiteral("/tmp/fx/sys/bus/usb"));
    QCOMPARE(fake.path(u"/sys"), QStringLiteral("/tmp/fx/sys"));
    QCOMPARE(fake.path(u"/dev/kvm"), QStringLiteral("/tmp/fx/dev/kvm"));
    QCOMPARE(fake.path(u"/proc/meminfo"), QStringLiteral("/tmp/fx/proc/meminfo"));
    QCOMPARE(fake.path(u"/sys//bus/./usb/"), QStringLiteral("/tmp/fx/sys/bus/usb"));
    // Not kernel file systems: left alone, also when ".." tries to leave /sys.
    QCOMPARE(fake.path(u"/system/x"), QStringLiteral("/system/x"));
    QCOMPARE(fake.path(u"/etc/containers"), QStringLiteral("/etc/containers"));
    QCOMPARE(fake.path(u"/sys/../../etc/passwd"), QStringLiteral("/etc/passwd"));
    QCOMPARE(fake.path(u"/sys/bus/../../../sys/x"), QStringLiteral("/tmp/fx/sys/x"));
    QCOMPARE(fake.path(u"/../sys/x"), QStringLiteral("/tmp/fx/sys/x"));
    QCOMPARE(fake.path(u"sys/x"), QStringLiteral("/tmp/fx/sys/x"));
    QCOMPARE(fake.path(u"/"), QStringLiteral("/"));
}

void TestCapabilities::sysfsRootKeepsSeparateRoots()
{
    const SysfsRoot roots(QStringLiteral("/a"), QStringLiteral("/b"), QStringLiteral("/c"));
    QCOMPARE(roots.path(u"/sys/x"), QStringLiteral("/a/sys/x"));
    QCOMPARE(roots.path(u"/dev/x"), QStringLiteral("/b/dev/x"));
    QCOMPARE(roots.path(u"/proc/x"), QStringLiteral("/c/proc/x"));
    const SysfsRoot onlySys(QStringLiteral("/a"), QStringLiteral("/"), QString());
    QCOMPARE(onlySys.path(u"/dev/kvm"), QStringLiteral("/dev/kvm"));
    QCOMPARE(onlySys.procRoot(), QStringLiteral("/"));
}

void TestCapabilities::sysfsRootReads()
{
    Fixture fixture;
    fixture.write(QStringLiteral("/sys/class/x/value"), "  480\n");
    fixture.write(QStringLiteral("/sys/class/x/b"), "");
    fixture.mkdir(QStringLiteral("/sys/class/x/a"));
    const SysfsRoot roots = fixture.roots();

    QCOMPARE(
        roots.readAttribute(u"/sys/class/x/value"), std::optional<QString>(QStringLiteral("480")));
    QCOMPARE(roots.readAttribute(u"/sys/class/x/b"), std::optional<QString>(QString()));
    QCOMPARE(roots.readAttribute(u"/sys/class/x/missing"), std::nullopt);
    QCOMPARE(roots.readAttribute(u"/sys/class/x/value", 4),
        std::optional<QString>(QStringLiteral("48")));
    QCOMPARE(roots.list(u"/sys/class/x"),
        QStringList({ QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("value") }));
    QVERIFY(roots.list(u"/sys/class/none").isEmpty());
    QVERIFY(roots.exists(u"/sys/class/x/a"));
    QVERIFY(!roots.exists(u"/sys/class/x/c"));
    QVERIFY(roots.isWritable(u"/sys/class/x/value"));
    QVERIFY(!roots.isWritable(u"/sys/class/x/c"));
    QVERIFY(!roots.isCharacterDevice(u"/sys/class/x/value"));
    // The real /proc through the real root: a file that reports size 0.
    const auto meminfo = SysfsRoot().readAttribute(u"/proc/meminfo");
    QVERIFY(meminfo && meminfo->startsWith(QLatin1String("MemTotal:")));
}

void TestCapabilities::usbInventorySkipsInterfacesAndRootHubs()
{
    // Given a device 1-1 with an interface 1-1:1.0, a root hub usb1, a hub
    // port's device 2-1.4 and an entry without ids
    Fixture fixture;
    fixture.usbTree();
    fixture.usbDevice(QStringLiteral("2-1.4"), "0403", "6001");
    fixture.usbDevice(QStringLiteral("3-0"), "1d6b", "0003");
    fixture.mkdir(QStringLiteral("/sys/bus/usb/devices/4-1"));
    const auto parts = makeProbe(fixture.roots());

    // When the inventory is read
    const auto devices = parts.probe->readUsbInventory();

    // Then only the two real devices are in it, with what sysfs says
    QCOMPARE(devices.size(), 2);
    const Caps::UsbDevice expected { QStringLiteral("1-1"), 0x1050, 0x0407,
        QStringLiteral("0012345678"), QStringLiteral("YubiKey OTP+FIDO+CCID"),
        QStringLiteral("12") };
    QCOMPARE(devices.at(0), expected);
    QCOMPARE(devices.at(1).busId, QStringLiteral("2-1.4"));
    QCOMPARE(devices.at(1).vendorId, quint16(0x0403));
    QVERIFY(devices.at(1).serial.isEmpty());
    QVERIFY(devices.at(1).speed.isEmpty());

    // And no USB at all is an empty list
    Fixture empty;
    QVERIFY(makeProbe(empty.roots()).probe->readUsbInventory().isEmpty());
}

void TestCapabilities::usbAttach_data()
{
    QTest::addColumn<bool>("usbBus");
    QTest::addColumn<int>("vhci"); // 0 none, 1 without attach, 2 with
    QTest::addColumn<uint>("euid");
    QTest::addColumn<bool>("possible");
    QTest::addColumn<QString>("reason");

    QTest::newRow("root, vhci_hcd.0/attach writable") << true << 2 << 0u << true << QString();
    QTest::newRow("not root") << true << 2 << 1000u << false
                              << QStringLiteral("not running as root");
    QTest::newRow("no vhci_hcd") << true << 0 << 0u << false
                                 << QStringLiteral("vhci_hcd missing: modprobe vhci-hcd");
    QTest::newRow("no USB in the kernel")
        << false << 0 << 0u << false
        << QStringLiteral("vhci_hcd missing: no USB support in this kernel");
    QTest::newRow("no attach file")
        << true << 1 << 0u << false << QStringLiteral("vhci_hcd.0 has no attach file");
}

void TestCapabilities::usbAttach()
{
    QFETCH(bool, usbBus);
    QFETCH(int, vhci);
    QFETCH(uint, euid);
    QFETCH(bool, possible);
    QFETCH(QString, reason);

    Fixture fixture;
    if (usbBus)
        fixture.usbTree();
    if (vhci > 0)
        fixture.vhci(vhci == 2);
    const auto verdict = makeProbe(fixture.roots(), euid).probe->detectUsbAttach();
    QCOMPARE(verdict.yes, possible);
    QCOMPARE(verdict.reason, reason);
}

void TestCapabilities::engineFromPodmanInfo()
{
    Fixture fixture;
    const auto parts = makeProbe(fixture.roots(), 0, podmanWithRuncAndCrun);

    const auto engine = parts.probe->detectEngine();

    QVERIFY2(engine.present, qPrintable(engine.reason));
    QCOMPARE(engine.name, QStringLiteral("podman"));
    QCOMPARE(engine.version, QStringLiteral("4.3.1"));
    QCOMPARE(engine.defaultRuntime, QStringLiteral("runc"));
    const QList<Caps::OciRuntime> expected {
        { QStringLiteral("runc"), QStringLiteral("/usr/bin/runc"), Caps::RuntimeKind::Runc },
        { QStringLiteral("crun"), QStringLiteral("/usr/bin/crun"), Caps::RuntimeKind::Crun }
    };
    QCOMPARE(engine.runtimes, expected);
    QVERIFY(engine.reason.isEmpty());
    QCOMPARE(parts.runner->calls, QStringList { QStringLiteral("podman info --format json") });
    // The engine's first answer may take long (its storage is set up then):
    // it is given more than the other tools.
    QCOMPARE(parts.runner->timeouts.value(0), CapabilityProbe::kEngineTimeout);
    QVERIFY(CapabilityProbe::kEngineTimeout >= std::chrono::seconds(60));
}

void TestCapabilities::engineWithBrokenJson()
{
    Fixture fixture;
    const auto parts = makeProbe(fixture.roots(), 0, [](FakeRunner &runner) {
        podmanWithRuncAndCrun(runner);
        runner.answer(QStringLiteral("podman info --format json"), 0, kPodmanInfo.left(200));
    });
    const auto engine = parts.probe->detectEngine();
    QVERIFY(!engine.present);
    QVERIFY2(engine.reason.contains(QLatin1String("no JSON object")), qPrintable(engine.reason));
    QVERIFY(engine.runtimes.isEmpty());

    // An array, or fields of the wrong type, are tolerated or refused but never crash
    QVERIFY(!CapabilityProbe::parsePodmanInfo("[1,2]").ok());
    const auto odd
        = CapabilityProbe::parsePodmanInfo(R"({"version": 4, "host": {"ociRuntime": "runc"}})");
    QVERIFY(odd.ok());
    QCOMPARE(odd->version, QStringLiteral("unknown"));
    QVERIFY(odd->runtimes.isEmpty());
}

void TestCapabilities::engineMissing()
{
    Fixture fixture;
    fixture.write(QStringLiteral("/dev/net/tun"), {});
    const auto parts = makeProbe(fixture.roots(), 0, networkTools);

    const Caps caps = parts.probe->probe({});

    QVERIFY(!caps.engine.present);
    QCOMPARE(caps.engine.reason, QStringLiteral("podman not found in PATH"));
    QVERIFY(parts.runner->calls.filter(QStringLiteral("podman")).isEmpty());
    QCOMPARE(caps.l2Attach.yes, false);
    QCOMPARE(caps.l2Attach.reason, QStringLiteral("no container engine: podman not found in PATH"));
    QVERIFY2(
        caps.summary().contains(QLatin1String("no container engine (podman not found in PATH)")),
        qPrintable(caps.summary()));
}

void TestCapabilities::engineFailing()
{
    Fixture fixture;
    auto parts = makeProbe(fixture.roots(), 0, [](FakeRunner &runner) {
        podmanWithRuncAndCrun(runner);
        runner.answer(QStringLiteral("podman info --format json"), 125, {},
            "\nError: cannot set up namespace: Operation not permitted\nmore\n");
    });
    auto engine = parts.probe->detectEngine();
    QVERIFY(!engine.present);
    QCOMPARE(engine.reason,
        QStringLiteral("podman info --format json exited with 125: Error: "
                       "cannot set up namespace: Operation not permitted"));

    // A podman that hangs was killed by the runner: its error is the reason
    parts.runner->answers.insert_or_assign(QStringLiteral("podman info --format json"),
        Result<CommandOutput>(Error::make(QStringLiteral("command_failed"),
            QStringLiteral("podman did not finish within 10000 ms"))));
    engine = parts.probe->detectEngine();
    QVERIFY(!engine.present);
    QCOMPARE(engine.reason,
        QStringLiteral("podman info --format json: podman did not finish within 10000 ms"));
}

void TestCapabilities::runtimesFromContainersConf()
{
    // Given containers.conf files registering gVisor and Kata (and an entry
    // of a kind the hub does not know), with podman's default being runsc
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString first = dir.filePath(QStringLiteral("containers.conf"));
    const QString second = dir.filePath(QStringLiteral("override.conf"));
    {
        QFile file(first);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("[engine]\nruntime = \"runsc\"\n\n[engine.runtimes]\n"
                   "runsc = [\"/opt/gvisor/runsc\"]\n"
                   "kata = [\n  \"/missing/kata-runtime\", # not installed\n  "
                   "\"/opt/kata/bin/kata-runtime\",\n]\n"
                   "youki = [\"/opt/youki\"]\n");
        QFile other(second);
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write("[engine.runtimes]\nrunc = []\n");
    }
    Fixture fixture;
    fixture.write(QStringLiteral("/dev/net/tun"), {});
    QByteArray info = kPodmanInfo;
    info.replace(R"("name": "runc")", R"("name": "runsc")");
    info.replace(R"("path": "/usr/bin/runc")", R"("path": "/opt/gvisor/runsc")");
    const auto parts = makeProbe(fixture.roots(), 0,
        [&info](FakeRunner &runner) {
            networkTools(runner);
            runner.executables.insert(QStringLiteral("podman"), QStringLiteral("/usr/bin/podman"));
            runner.executables.insert(QStringLiteral("runc"), QStringLiteral("/usr/bin/runc"));
            runner.executables.insert(
                QStringLiteral("/opt/gvisor/runsc"), QStringLiteral("/opt/gvisor/runsc"));
            runner.executables.insert(QStringLiteral("/opt/kata/bin/kata-runtime"),
                QStringLiteral("/opt/kata/bin/kata-runtime"));
            runner.executables.insert(QStringLiteral("/opt/youki"), QStringLiteral("/opt/youki"));
            runner.answer(QStringLiteral("podman info --format json"), 0, info);
        },
        { first, second, dir.filePath(QStringLiteral("missing.conf")) });

    // When the engine is detected
    const Caps caps = parts.probe->probe({});

    // Then runsc (default, gVisor) and kata are listed; runc is not, since
    // the later file registered it with no paths; youki is left out
    const QList<Caps::OciRuntime> expected {
        { QStringLiteral("runsc"), QStringLiteral("/opt/gvisor/runsc"), Caps::RuntimeKind::Gvisor },
        { QStringLiteral("kata"), QStringLiteral("/opt/kata/bin/kata-runtime"),
            Caps::RuntimeKind::Kata }
    };
    QCOMPARE(caps.engine.runtimes, expected);
    // And such an agent cannot give a sandbox an L2 segment
    QVERIFY(!caps.l2Attach.yes);
    QCOMPARE(caps.l2Attach.reason,
        QStringLiteral("only gVisor/Kata runtimes, which cannot receive an interface"));
}

void TestCapabilities::parsesContainersConf()
{
    const QString text
        = QStringLiteral("# runtimes\n"
                         "[engine]\n"
                         "runc = [\"/not/in/the/table\"]\n"
                         "[engine.runtimes]\n"
                         "#crun = [\"/commented/out\"]\n"
                         "crun = [ \"/usr/bin/crun\", '/usr/local/bin/crun' ]   # two\n"
                         "\"kata-qemu\" = [\n"
                         "  \"/usr/bin/kata-qemu\",   # with a comment\n"
                         "  \"/path/with # hash\",\n"
                         "  \"/path/with ] bracket\",\n"
                         "]\n"
                         "broken = \n"
                         "runsc = [\"/unterminated\n"
                         "[engine.volume_plugins]\n"
                         "testplugin = \"/run/podman/plugins/test.sock\"\n");

    const auto runtimes = containersconf::parseRuntimes(text);

    QCOMPARE(runtimes.value(QStringLiteral("crun")),
        QStringList({ QStringLiteral("/usr/bin/crun"), QStringLiteral("/usr/local/bin/crun") }));
    QCOMPARE(runtimes.value(QStringLiteral("kata-qemu")),
        QStringList({ QStringLiteral("/usr/bin/kata-qemu"), QStringLiteral("/path/with # hash"),
            QStringLiteral("/path/with ] bracket") }));
    QVERIFY(!runtimes.contains(QStringLiteral("runc")));
    QVERIFY(!runtimes.contains(QStringLiteral("testplugin")));
    QVERIFY(runtimes.value(QStringLiteral("broken")).isEmpty());
    QVERIFY(containersconf::parseRuntimes(u"").isEmpty());

    // The files podman reads: CONTAINERS_CONF alone when set
    qputenv("CONTAINERS_CONF", "/x/containers.conf");
    QCOMPARE(
        containersconf::defaultFiles(false), QStringList { QStringLiteral("/x/containers.conf") });
    qunsetenv("CONTAINERS_CONF");
    QCOMPARE(containersconf::defaultFiles(false).first(),
        QStringLiteral("/usr/share/containers/containers.conf"));
}

void TestCapabilities::kvmOnFixtures()
{
    Fixture fixture;
    auto verdict = makeProbe(fixture.roots()).probe->detectKvm();
    QVERIFY(!verdict.yes);
    QCOMPARE(verdict.reason, QStringLiteral("no /dev/kvm on this host"));

    fixture.write(QStringLiteral("/dev/kvm"), {});
    verdict = makeProbe(fixture.roots()).probe->detectKvm();
    QVERIFY(!verdict.yes);
    QCOMPARE(verdict.reason, QStringLiteral("/dev/kvm is not a character device"));

    // A character device that is not KVM: /dev/null, with the real /dev
    if (QFileInfo::exists(QStringLiteral("/dev/null"))) {
        // Only /dev/kvm is asked for: a dev root holding a link to /dev/null.
        Fixture links;
        links.mkdir(QStringLiteral("/dev"));
        QVERIFY(
            QFile::link(QStringLiteral("/dev/null"), links.root() + QStringLiteral("/dev/kvm")));
        verdict
            = makeProbe(SysfsRoot(fixture.root(), links.root(), fixture.root())).probe->detectKvm();
        QVERIFY(!verdict.yes);
        QVERIFY2(
            verdict.reason.startsWith(QLatin1String("KVM_GET_API_VERSION on /dev/kvm failed: ")),
            qPrintable(verdict.reason));
    }
}

void TestCapabilities::packetFilter_data()
{
    QTest::addColumn<bool>("installed");
    QTest::addColumn<uint>("euid");
    QTest::addColumn<int>("listExit");
    QTest::addColumn<bool>("usable");
    QTest::addColumn<QString>("version");
    QTest::addColumn<QString>("reason");

    QTest::newRow("root, nft works")
        << true << 0u << 0 << true << QStringLiteral("1.0.6") << QString();
    QTest::newRow("not installed") << false << 0u << 0 << false << QString()
                                   << QStringLiteral("nft not found: install nftables");
    QTest::newRow("not root") << true << 1000u << 0 << false << QStringLiteral("1.0.6")
                              << QStringLiteral("not running as root");
    QTest::newRow("no CAP_NET_ADMIN")
        << true << 0u << 1 << false << QStringLiteral("1.0.6")
        << QStringLiteral("nft list tables exited with 1: Error: Could not process rule: Operation "
                          "not permitted");
}

void TestCapabilities::packetFilter()
{
    QFETCH(bool, installed);
    QFETCH(uint, euid);
    QFETCH(int, listExit);
    QFETCH(bool, usable);
    QFETCH(QString, version);
    QFETCH(QString, reason);

    Fixture fixture;
    const auto parts = makeProbe(fixture.roots(), euid, [&](FakeRunner &runner) {
        if (installed)
            runner.executables.insert(QStringLiteral("nft"), QStringLiteral("/usr/sbin/nft"));
        runner.answer(QStringLiteral("nft --version"), 0, "nftables v1.0.6 (Lester Gooch #5)\n");
        runner.answer(QStringLiteral("nft list tables"), listExit, "table inet filter\n",
            listExit ? "Error: Could not process rule: Operation not permitted\n" : "");
    });
    const auto filter = parts.probe->detectPacketFilter();
    QCOMPARE(filter.name, QStringLiteral("nft"));
    QCOMPARE(filter.usable, usable);
    QCOMPARE(filter.version, version);
    QCOMPARE(filter.reason, reason);
    if (euid != 0)
        QVERIFY(!parts.runner->calls.contains(QStringLiteral("nft list tables")));
}

void TestCapabilities::l2Attach_data()
{
    QTest::addColumn<uint>("euid");
    QTest::addColumn<bool>("tools");
    QTest::addColumn<bool>("tun");
    QTest::addColumn<bool>("hostMode");
    QTest::addColumn<bool>("possible");
    QTest::addColumn<QString>("reason");

    QTest::newRow("container mode, runc") << 0u << true << true << false << true << QString();
    QTest::newRow("host mode") << 0u << true << true << true << true << QString();
    QTest::newRow("not root") << 1000u << true << true << false << false
                              << QStringLiteral("not running as root");
    QTest::newRow("no ip") << 0u << false << true << false << false
                           << QStringLiteral("ip not found: install iproute2");
    QTest::newRow("no tun") << 0u << true << false << false << false
                            << QStringLiteral("/dev/net/tun missing: no TUN/TAP support");
}

void TestCapabilities::l2Attach()
{
    QFETCH(uint, euid);
    QFETCH(bool, tools);
    QFETCH(bool, tun);
    QFETCH(bool, hostMode);
    QFETCH(bool, possible);
    QFETCH(QString, reason);

    Fixture fixture;
    if (tun)
        fixture.write(QStringLiteral("/dev/net/tun"), {});
    const auto parts = makeProbe(fixture.roots(), euid, [tools](FakeRunner &runner) {
        podmanWithRuncAndCrun(runner);
        if (tools)
            networkTools(runner);
    });
    CapabilityProbe::Options options;
    options.mode = hostMode ? Caps::Mode::Host : Caps::Mode::Container;
    const Caps caps = parts.probe->probe(options);
    QCOMPARE(caps.l2Attach.yes, possible);
    QCOMPARE(caps.l2Attach.reason, reason);
}

void TestCapabilities::memoryFromMeminfo()
{
    Fixture fixture;
    fixture.write(QStringLiteral("/proc/meminfo"),
        "MemTotal:       24684084 kB\nMemFree:        20871120 kB\n");
    QCOMPARE(makeProbe(fixture.roots()).probe->memoryBytes(), qint64(24684084) * 1024);

    // Without a readable MemTotal the machine's own figure is used
    Fixture broken;
    broken.write(QStringLiteral("/proc/meminfo"), "MemTotal: lots\n");
    QVERIFY(makeProbe(broken.roots()).probe->memoryBytes() > 0);
}

void TestCapabilities::probeFillsEverything()
{
    // Given a machine with a USB device, vhci_hcd, podman with runc and crun,
    // nft and the network tools, probed as root
    Fixture fixture;
    fixture.usbTree();
    fixture.vhci(true);
    fixture.write(QStringLiteral("/dev/net/tun"), {});
    fixture.write(QStringLiteral("/proc/meminfo"), "MemTotal:        2097152 kB\n");
    const auto parts = makeProbe(fixture.roots(), 0, [](FakeRunner &runner) {
        podmanWithRuncAndCrun(runner);
        networkTools(runner);
        runner.executables.insert(QStringLiteral("nft"), QStringLiteral("/usr/sbin/nft"));
        runner.answer(QStringLiteral("nft --version"), 0, "nftables v1.0.6 (Lester Gooch #5)\n");
        runner.answer(QStringLiteral("nft list tables"), 0, {});
    });
    CapabilityProbe::Options options;
    options.labels = { { QStringLiteral("site"), QStringLiteral("lab-2") },
        { QStringLiteral("bad key!"), QStringLiteral("x") } };

    // When it is probed with the defaults
    const Caps caps = parts.probe->probe(options);

    // Then every part is filled in, and the result survives the wire
    QCOMPARE(caps.softwareVersion, QString::fromLatin1(buildinfo::kVersion));
    QCOMPARE(caps.protocolVersion, protocol::kVersion);
    QVERIFY(caps.cpus >= 1);
    QCOMPARE(caps.maxConcurrent, caps.cpus);
    QCOMPARE(caps.memoryBytes, qint64(2) * 1024 * 1024 * 1024);
    QCOMPARE(caps.labels,
        (QMap<QString, QString> { { QStringLiteral("site"), QStringLiteral("lab-2") } }));
    QCOMPARE(caps.mode, Caps::Mode::Container);
    QVERIFY(caps.engine.present);
    QCOMPARE(caps.engine.runtimes.size(), 2);
    QVERIFY(caps.packetFilter.usable);
    QCOMPARE(caps.usbInventory.size(), 1);
    QVERIFY(caps.usbAttach.yes);
    QVERIFY(caps.l2Attach.yes);
    QVERIFY(!caps.kvm.yes);
    const QString expected
        = QStringLiteral("%1/%2 %3 %4 2 GiB, podman 4.3.1 (runc, crun), usb: yes, "
                         "l2: yes, kvm: no (no /dev/kvm on this host), max %5")
              .arg(caps.os, caps.arch, QString::number(caps.cpus),
                  caps.cpus == 1 ? QStringLiteral("cpu") : QStringLiteral("cpus"),
                  QString::number(caps.cpus));
    QCOMPARE(caps.summary(), expected);
    const auto parsed = Caps::fromJson(QJsonDocument(caps.toJson()).toJson(QJsonDocument::Compact));
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QCOMPARE(*parsed, caps);

    // And a ceiling given explicitly is kept
    options.maxConcurrent = 7;
    QCOMPARE(parts.probe->probe(options).maxConcurrent, 7);
}

void TestCapabilities::summary_data()
{
    QTest::addColumn<Caps>("caps");
    QTest::addColumn<QString>("expected");

    Caps caps = sampleCapabilities();
    QTest::newRow("brief's example")
        << caps
        << QStringLiteral("linux/x86_64 2 cpus 23 GiB, podman 4.3.1 (runc, crun), "
                          "usb: no (vhci_hcd missing), l2: yes, kvm: yes, max 2");
    caps.mode = Caps::Mode::Host;
    caps.cpus = 1;
    caps.maxConcurrent = 1;
    caps.memoryBytes = 512 * 1024 * 1024;
    caps.kvm = { true, QStringLiteral("KVM is PVM: only PVM guest kernels boot") };
    QTest::newRow("host mode, small")
        << caps
        << QStringLiteral("linux/x86_64 1 cpu 512 MiB, host mode, usb: no "
                          "(vhci_hcd missing), l2: yes, kvm: yes (KVM is PVM: "
                          "only PVM guest kernels boot), max 1");
    caps = sampleCapabilities();
    caps.engine.runtimes.clear();
    QTest::newRow("no runtime") << caps
                                << QStringLiteral(
                                       "linux/x86_64 2 cpus 23 GiB, podman 4.3.1 (no runtime), "
                                       "usb: no (vhci_hcd missing), l2: yes, kvm: yes, max 2");
}

void TestCapabilities::summary()
{
    QFETCH(Caps, caps);
    QFETCH(QString, expected);
    QCOMPARE(caps.summary(), expected);
}

void TestCapabilities::summaryKeepsOneLine()
{
    // An agent's text with a newline, an escape and "%1" stays one plain line
    Caps caps = sampleCapabilities();
    caps.usbAttach.reason = QStringLiteral("bad\nline \x1b[31m%1 %2");
    caps.arch = QStringLiteral("%1");
    const QString line = caps.summary();
    QVERIFY(!line.contains(QLatin1Char('\n')));
    QVERIFY(!line.contains(QChar(0x1b)));
    QVERIFY2(line.startsWith(QLatin1String("linux/%1 2 cpus")), qPrintable(line));
    QVERIFY2(line.contains(QLatin1String("usb: no (bad line  [31m%1 %2)")), qPrintable(line));
}

void TestCapabilities::jsonRoundTrip()
{
    const Caps caps = sampleCapabilities();
    const QJsonObject json = caps.toJson();
    QCOMPARE(json.value(QLatin1String("software")).toString(), QStringLiteral("0.1.0"));
    QCOMPARE(json.value(QLatin1String("mode")).toString(), QStringLiteral("container"));
    QCOMPARE(json.value(QLatin1String("usb_attach"))
                 .toObject()
                 .value(QLatin1String("possible"))
                 .toBool(),
        false);
    QCOMPARE(
        json.value(QLatin1String("kvm")).toObject().value(QLatin1String("usable")).toBool(), true);
    const QJsonObject usb = json.value(QLatin1String("usb_inventory")).toArray().first().toObject();
    QCOMPARE(usb.value(QLatin1String("vid")).toString(), QStringLiteral("1050"));
    QCOMPARE(usb.value(QLatin1String("pid")).toString(), QStringLiteral("0407"));
    QCOMPARE(json.value(QLatin1String("engine"))
                 .toObject()
                 .value(QLatin1String("runtimes"))
                 .toArray()
                 .at(1)
                 .toObject()
                 .value(QLatin1String("kind"))
                 .toString(),
        QStringLiteral("crun"));

    const auto parsed = Caps::fromJson(json);
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QCOMPARE(*parsed, caps);

    // Through bytes, and for an agent without an engine in host mode
    Caps host = caps;
    host.mode = Caps::Mode::Host;
    host.engine = { false, QStringLiteral("podman"), {}, {}, {},
        QStringLiteral("podman not found in PATH") };
    host.engine.runtimes.clear();
    host.labels.clear();
    host.usbInventory.clear();
    const auto parsedHost = Caps::fromJson(QJsonDocument(host.toJson()).toJson());
    QVERIFY2(parsedHost.ok(), qPrintable(parsedHost.ok() ? QString() : parsedHost.error().message));
    QCOMPARE(*parsedHost, host);
}

void TestCapabilities::fromJsonToleratesOlderAndNewerAgents()
{
    QJsonObject json = sampleCapabilities().toJson();
    json.insert(QStringLiteral("gpu"), QJsonObject { { QStringLiteral("count"), 4 } });
    json.insert(QStringLiteral("futureFlag"), true);
    for (const char *section : { "engine", "kvm", "packet_filter", "usb_inventory", "usb_attach",
             "l2_attach", "labels", "kernel" })
        json.remove(QLatin1String(section));
    QJsonObject l2 { { QStringLiteral("possible"), false } };
    json.insert(QStringLiteral("l2_attach"), l2);

    const auto parsed = Caps::fromJson(json);
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QVERIFY(!parsed->engine.present);
    QCOMPARE(parsed->engine.reason, QStringLiteral("not reported by the agent"));
    QVERIFY(!parsed->kvm.yes);
    QCOMPARE(parsed->kvm.reason, QStringLiteral("not reported by the agent"));
    QCOMPARE(parsed->packetFilter.reason, QStringLiteral("not reported by the agent"));
    QCOMPARE(parsed->usbAttach.reason, QStringLiteral("not reported by the agent"));
    QCOMPARE(parsed->l2Attach.reason, QStringLiteral("no reason given by the agent"));
    QVERIFY(parsed->usbInventory.isEmpty());
    QVERIFY(parsed->labels.isEmpty());
}

void TestCapabilities::fromJsonRefuses_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::addColumn<QString>("problem");

    const QJsonObject good = sampleCapabilities().toJson();
    const auto with = [&good](const char *key, const QJsonValue &value) {
        QJsonObject json = good;
        json.insert(QLatin1String(key), value);
        return json;
    };
    const auto without = [&good](const char *key) {
        QJsonObject json = good;
        json.remove(QLatin1String(key));
        return json;
    };
    const auto withSection
        = [&good](const char *section, const char *key, const QJsonValue &value) {
              QJsonObject json = good;
              QJsonObject inner = json.value(QLatin1String(section)).toObject();
              inner.insert(QLatin1String(key), value);
              json.insert(QLatin1String(section), inner);
              return json;
          };
    const auto withUsb = [&good](const char *key, const QJsonValue &value) {
        QJsonObject json = good;
        QJsonArray devices = json.value(QLatin1String("usb_inventory")).toArray();
        QJsonObject device = devices.first().toObject();
        device.insert(QLatin1String(key), value);
        devices.replace(0, device);
        json.insert(QStringLiteral("usb_inventory"), devices);
        return json;
    };
    const auto withRuntime = [&good](const QJsonValue &runtime) {
        QJsonObject json = good;
        QJsonObject engine = json.value(QLatin1String("engine")).toObject();
        engine.insert(QStringLiteral("runtimes"), QJsonArray { runtime });
        json.insert(QStringLiteral("engine"), engine);
        return json;
    };
    const QString longText(300, QLatin1Char('x'));

    QTest::newRow("software missing")
        << without("software") << QStringLiteral("software is missing");
    QTest::newRow("software a number")
        << with("software", 1) << QStringLiteral("software must be a string");
    QTest::newRow("software too long")
        << with("software", longText) << QStringLiteral("software is longer than 256 characters");
    QTest::newRow("protocol a string")
        << with("protocol", QStringLiteral("22")) << QStringLiteral("protocol must be an integer");
    QTest::newRow("cpus zero") << with("cpus", 0)
                               << QStringLiteral("cpus must be between 1 and 65536");
    QTest::newRow("cpus fraction")
        << with("cpus", 1.5) << QStringLiteral("cpus must be an integer");
    QTest::newRow("memory negative")
        << with("memory_bytes", -1) << QStringLiteral("memory_bytes must be between");
    QTest::newRow("memory huge") << with("memory_bytes", 1e300)
                                 << QStringLiteral("memory_bytes must be between");
    QTest::newRow("max concurrent zero")
        << with("max_concurrent", 0) << QStringLiteral("max_concurrent must be between");
    QTest::newRow("mode unknown") << with("mode", QStringLiteral("vm"))
                                  << QStringLiteral("mode must be");
    QTest::newRow("mode missing") << without("mode") << QStringLiteral("mode is missing");
    QTest::newRow("labels an array")
        << with("labels", QJsonArray {}) << QStringLiteral("labels must be an object");
    QTest::newRow("label value a number")
        << withSection("labels", "rack", 3) << QStringLiteral("labels.rack must be a string");
    QTest::newRow("label key bad") << withSection("labels", "a b", QStringLiteral("x"))
                                   << QStringLiteral("label key \"a b\" must be");
    QJsonObject manyLabels;
    for (int i = 0; i < 40; ++i)
        manyLabels.insert(QStringLiteral("k%1").arg(i), QStringLiteral("v"));
    QTest::newRow("too many labels")
        << with("labels", manyLabels) << QStringLiteral("labels has more than 32");
    QTest::newRow("harnesses a list")
        << with("harnesses", QJsonArray {}) << QStringLiteral("harnesses must be an object");
    QTest::newRow("harness at a relative path") << with(
        "harnesses", QJsonObject { { QStringLiteral("claude"), QStringLiteral("bin/claude") } })
                                                << QStringLiteral("its absolute path");
    QTest::newRow("harness of a strange name") << with(
        "harnesses", QJsonObject { { QStringLiteral("Claude Code"), QStringLiteral("/bin/x") } })
                                               << QStringLiteral("a harness name");
    QTest::newRow("engine a string")
        << with("engine", QStringLiteral("podman")) << QStringLiteral("engine must be an object");
    QTest::newRow("engine present a string") << withSection("engine", "present",
        QStringLiteral("yes")) << QStringLiteral("engine.present must be true or false");
    QTest::newRow("runtimes an object") << withSection("engine", "runtimes", QJsonObject {})
                                        << QStringLiteral("engine.runtimes must be an array");
    QTest::newRow("runtime a string") << withRuntime(QStringLiteral("runc"))
                                      << QStringLiteral("engine.runtimes[0] must be an object");
    QTest::newRow("runtime kind alias")
        << withRuntime(QJsonObject { { QStringLiteral("name"), QStringLiteral("runsc") },
               { QStringLiteral("kind"), QStringLiteral("runsc") } })
        << QStringLiteral("engine.runtimes[0].kind is not runc, crun, gvisor or kata");
    QTest::newRow("runtime kind unknown")
        << withRuntime(QJsonObject { { QStringLiteral("name"), QStringLiteral("x") },
               { QStringLiteral("kind"), QStringLiteral("docker") } })
        << QStringLiteral("engine.runtimes[0].kind is not");
    QJsonArray manyRuntimes;
    for (int i = 0; i < 17; ++i)
        manyRuntimes.append(QJsonObject { { QStringLiteral("name"), QStringLiteral("runc") },
            { QStringLiteral("kind"), QStringLiteral("runc") } });
    QTest::newRow("too many runtimes") << withSection("engine", "runtimes",
        manyRuntimes) << QStringLiteral("engine.runtimes has more than 16 entries");
    QTest::newRow("kvm a bool") << with("kvm", true) << QStringLiteral("kvm must be an object");
    QTest::newRow("kvm reason too long") << withSection("kvm", "reason",
        QString(600, QLatin1Char('r'))) << QStringLiteral("kvm.reason is longer than 512");
    QTest::newRow("usbAttach possible a number") << withSection(
        "usb_attach", "possible", 1) << QStringLiteral("usb_attach.possible must be true or false");
    QTest::newRow("usb inventory an object") << with("usb_inventory", QJsonObject {})
                                             << QStringLiteral("usb_inventory must be an array");
    QTest::newRow("usb busid path") << withUsb("busid", QStringLiteral("../1-1"))
                                    << QStringLiteral("usb_inventory[0].busid is not a USB bus id");
    QTest::newRow("usb vid not hex")
        << withUsb("vid", QStringLiteral("XYZ1"))
        << QStringLiteral("usb_inventory[0] vid and pid must be four lower-case hex digits");
    QTest::newRow("usb pid a number")
        << withUsb("pid", 1031) << QStringLiteral("usb_inventory[0].pid must be a string");
    QTest::newRow("usb serial too long") << withUsb(
        "serial", longText) << QStringLiteral("usb_inventory[0].serial is longer than 256");
    QJsonArray manyDevices;
    for (int i = 0; i < 65; ++i)
        manyDevices.append(good.value(QLatin1String("usb_inventory")).toArray().first());
    QTest::newRow("too many usb devices") << with(
        "usb_inventory", manyDevices) << QStringLiteral("usb_inventory has more than 64 entries");
}

void TestCapabilities::fromJsonRefuses()
{
    QFETCH(QJsonObject, json);
    QFETCH(QString, problem);

    const auto parsed = Caps::fromJson(json);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, QStringLiteral("invalid_capabilities"));
    QVERIFY(parsed.error().permanent);
    QVERIFY2(parsed.error().message.contains(problem), qPrintable(parsed.error().message));
}

void TestCapabilities::fromJsonRefusesOversizedInput()
{
    QByteArray big = QJsonDocument(sampleCapabilities().toJson()).toJson(QJsonDocument::Compact);
    big.insert(1, "\"padding\":\"" + QByteArray(Caps::kMaxSerializedBytes, 'p') + "\",");
    auto parsed = Caps::fromJson(big);
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().message.contains(QLatin1String("more than the 32768 allowed")),
        qPrintable(parsed.error().message));

    parsed = Caps::fromJson(QByteArrayView("{\"software\":"));
    QVERIFY(!parsed.ok());
    QVERIFY(parsed.error().message.contains(QLatin1String("not a JSON object")));
    parsed = Caps::fromJson(QByteArrayView("[]"));
    QVERIFY(!parsed.ok());

    // The largest inventory and label set an agent may send still fits
    Caps full = sampleCapabilities();
    full.usbInventory.clear();
    for (int i = 0; i < Caps::kMaxUsbDevices; ++i)
        full.usbInventory.append({ QStringLiteral("%1-1.2.3").arg(i + 1), 0xabcd, 0x1234,
            QString(64, QLatin1Char('s')), QString(64, QLatin1Char('p')), QStringLiteral("480") });
    for (int i = full.labels.size(); i < Caps::kMaxLabels; ++i)
        full.labels.insert(QStringLiteral("label-%1").arg(i), QString(32, QLatin1Char('v')));
    const QByteArray bytes = QJsonDocument(full.toJson()).toJson(QJsonDocument::Compact);
    QVERIFY2(
        bytes.size() <= Caps::kMaxSerializedBytes, QByteArray::number(bytes.size()).constData());
    QVERIFY(Caps::fromJson(bytes).ok());
}

void TestCapabilities::validatesLabels()
{
    QVERIFY(Caps::validateLabel(QStringLiteral("site"), QStringLiteral("lab 2")).ok());
    QVERIFY(Caps::validateLabel(QStringLiteral("example.com/zone"), QString()).ok());
    QVERIFY(
        Caps::validateLabel(QString(63, QLatin1Char('k')), QString(128, QLatin1Char('v'))).ok());
    QVERIFY(!Caps::validateLabel(QString(64, QLatin1Char('k')), QStringLiteral("v")).ok());
    QVERIFY(!Caps::validateLabel(QString(), QStringLiteral("v")).ok());
    QVERIFY(!Caps::validateLabel(QStringLiteral("-x"), QStringLiteral("v")).ok());
    QVERIFY(!Caps::validateLabel(QStringLiteral("x"), QString(129, QLatin1Char('v'))).ok());
    QVERIFY(!Caps::validateLabel(QStringLiteral("x"), QStringLiteral("a\nb")).ok());
    QCOMPARE(Caps::runtimeKindOf(QStringLiteral("/usr/bin/kata-qemu")), Caps::RuntimeKind::Kata);
    QCOMPARE(Caps::runtimeKindOf(QStringLiteral("runsc")), Caps::RuntimeKind::Gvisor);
    QCOMPARE(Caps::runtimeKindOf(QStringLiteral("crun-wasm")), std::nullopt);
}

void TestCapabilities::processRunnerRunsAndTimesOut()
{
    ProcessCommandRunner runner;
    QVERIFY(!runner.findExecutable(QStringLiteral("sh")).isEmpty());
    QVERIFY(runner.findExecutable(QStringLiteral("/nonexistent/tool")).isEmpty());
    QVERIFY(runner.findExecutable(QStringLiteral("cloop-no-such-tool")).isEmpty());

    auto result = runner.run(QStringLiteral("sh"),
        { QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; exit 3") }, 5s);
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().message));
    QCOMPARE(result->exitCode, 3);
    QCOMPARE(result->standardOutput, QByteArray("out\n"));
    QCOMPARE(result->standardError, QByteArray("err\n"));

    QElapsedTimer timer;
    timer.start();
    result = runner.run(QStringLiteral("sleep"), { QStringLiteral("30") }, 300ms);
    QVERIFY(!result.ok());
    QVERIFY2(result.error().message.contains(QLatin1String("did not finish within 300 ms")),
        qPrintable(result.error().message));
    QVERIFY(timer.elapsed() < 5000);

    result = runner.run(QStringLiteral("cloop-no-such-tool"), {}, 1s);
    QVERIFY(!result.ok());
    QCOMPARE(result.error().message, QStringLiteral("cloop-no-such-tool not found"));
}

void TestCapabilities::realProbeInvariants()
{
    // Whatever this machine has: only what holds everywhere is checked.
    const CapabilityProbe probe { SysfsRoot() };
    const Caps caps = probe.probe({});
    qInfo().noquote() << "this machine:"
                      << QJsonDocument(caps.toJson()).toJson(QJsonDocument::Compact);
    QVERIFY(caps.cpus >= 1);
    QVERIFY(caps.memoryBytes > 0);
    QCOMPARE(caps.softwareVersion, QString::fromLatin1(buildinfo::kVersion));
    QCOMPARE(caps.protocolVersion, protocol::kVersion);
    QCOMPARE(caps.maxConcurrent, caps.cpus);
    QVERIFY(!caps.os.isEmpty());
    QVERIFY(caps.engine.present || !caps.engine.reason.isEmpty());
    for (const Caps::Verdict &verdict : { caps.kvm, caps.usbAttach, caps.l2Attach })
        QVERIFY(verdict.yes || !verdict.reason.isEmpty());
    QVERIFY(caps.packetFilter.usable || !caps.packetFilter.reason.isEmpty());
    const auto parsed = Caps::fromJson(QJsonDocument(caps.toJson()).toJson(QJsonDocument::Compact));
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
    QCOMPARE(*parsed, caps);
}

void TestCapabilities::harnessesAreFoundOnPath()
{
    Fixture fixture;
    const auto parts = makeProbe(fixture.roots(), 0, [](FakeRunner &runner) {
        runner.executables.insert(
            QStringLiteral("claude"), QStringLiteral("/home/run/.npm-global/bin/claude"));
        runner.executables.insert(QStringLiteral("aider"), QStringLiteral("/usr/local/bin/aider"));
    });
    const QMap<QString, QString> found = parts.probe->findHarnesses({ QStringLiteral("claude"),
        QStringLiteral("codex"), QStringLiteral("aider"), QStringLiteral("not a name") });
    QCOMPARE(found,
        (QMap<QString, QString> {
            { QStringLiteral("aider"), QStringLiteral("/usr/local/bin/aider") },
            { QStringLiteral("claude"), QStringLiteral("/home/run/.npm-global/bin/claude") } }));
    // Reported with the rest, and read back by the hub as sent.
    AgentCapabilities caps = sampleCapabilities();
    caps.harnesses = found;
    auto read = AgentCapabilities::fromJson(caps.toJson());
    QVERIFY(read.ok());
    QCOMPARE(read->harnesses, found);
    QVERIFY(caps.summary().endsWith(QStringLiteral("harnesses: aider claude")));
}

QTEST_GUILESS_MAIN(TestCapabilities)
#include "tst_capabilities.moc"
