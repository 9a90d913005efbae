// Steps 1 to 3 of dispatch without sockets: which bindings a run gets, and
// every refusal, each with its own words.

#include "common/device/l2/tapdevice.h"
#include "common/protocol/protocolversion.h"
#include "hub/domain/deviceplan.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using protocol::AgentCapabilities;

namespace {

AgentCapabilities containerAgent()
{
    AgentCapabilities capabilities;
    capabilities.softwareVersion = QStringLiteral("0.1.0");
    capabilities.protocolVersion = protocol::kVersion;
    capabilities.os = QStringLiteral("linux");
    capabilities.arch = QStringLiteral("x86_64");
    capabilities.cpus = 2;
    capabilities.memoryBytes = qint64(4) << 30;
    capabilities.maxConcurrent = 2;
    capabilities.mode = AgentCapabilities::Mode::Container;
    capabilities.engine.present = true;
    capabilities.engine.name = QStringLiteral("podman");
    capabilities.engine.version = QStringLiteral("4.3.1");
    capabilities.engine.defaultRuntime = QStringLiteral("runc");
    capabilities.engine.runtimes = { { QStringLiteral("runc"), QStringLiteral("/usr/bin/runc"),
                                         AgentCapabilities::RuntimeKind::Runc },
        { QStringLiteral("runsc"), QStringLiteral("/usr/bin/runsc"),
            AgentCapabilities::RuntimeKind::Gvisor },
        { QStringLiteral("kata"), QStringLiteral("/usr/bin/kata-runtime"),
            AgentCapabilities::RuntimeKind::Kata } };
    capabilities.l2Attach = { true, QString() };
    capabilities.usbAttach
        = { false, QStringLiteral("vhci_hcd missing: no USB support in this kernel") };
    return capabilities;
}

ExecutorRecord executorWith(
    const AgentCapabilities &capabilities, int protocol = protocol::kVersion)
{
    ExecutorRecord executor;
    executor.id = 4;
    executor.name = QStringLiteral("bench");
    executor.software = QStringLiteral("0.1.0");
    executor.protocol = protocol;
    executor.capabilities = capabilities.toJson();
    return executor;
}

ForwarderRecord segmentForwarder(qint64 id, const QString &name)
{
    ForwarderRecord forwarder;
    forwarder.id = id;
    forwarder.name = name;
    forwarder.device = *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1"));
    return forwarder;
}

ForwarderRecord usbForwarder(qint64 id, const QString &name)
{
    ForwarderRecord forwarder;
    forwarder.id = id;
    forwarder.name = name;
    forwarder.device = *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407"));
    return forwarder;
}

AgentCapabilities usbCapableAgent()
{
    AgentCapabilities capabilities = containerAgent();
    capabilities.usbAttach = { true, QString() };
    return capabilities;
}

BindingRecord bindingOf(qint64 id, const ForwarderRecord &forwarder, const QString &target = {},
    const QString &virtualExecutor = {})
{
    BindingRecord binding;
    binding.id = id;
    binding.forwarderId = forwarder.id;
    binding.forwarderName = forwarder.name;
    binding.projectId = 1;
    binding.projectPath = QStringLiteral("/srv/projects/lab");
    binding.terms.targetInterface = target;
    binding.terms.virtualExecutor = virtualExecutor;
    return binding;
}

} // namespace

class TestDevicePlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();

    void anUnboundProjectGetsNothing();
    void aBoundSegmentBecomesADeviceOfTheRun();
    void aNarrowedBindingAppliesOnlyToItsVirtualExecutor();
    void anAbsentForwarderRefusesTheRunNamingIt();
    void executorsThatCannotTakeTheDeviceAreRefused_data();
    void executorsThatCannotTakeTheDeviceAreRefused();
    void twoSegmentsCannotShareAName();
    void theSandboxGetsTheSegmentsMtu();
    void aBoundUsbDeviceIsImportedByItsBusId();
    void anUnpluggedOrUnreportedUsbDeviceRefusesTheRun();
    void executorsThatCannotTakeAUsbDeviceAreRefused();
    void aUsbDeviceServesOneRunAtATime();

private:
    DevicePlanInput m_input;
    ForwarderRecord m_lab;
};

void TestDevicePlan::init()
{
    m_lab = segmentForwarder(7, QStringLiteral("lab"));
    m_input = DevicePlanInput {};
    m_input.run.id = 12;
    m_input.run.projectId = 1;
    m_input.run.projectPath = QStringLiteral("/srv/projects/lab");
    m_input.executor = executorWith(containerAgent());
    m_input.forwarders.insert(m_lab.id, m_lab);
    m_input.forwarderConnected = [](qint64) { return true; };
}

void TestDevicePlan::anUnboundProjectGetsNothing()
{
    auto plan = planDevices(m_input);
    QVERIFY(plan);
    QVERIFY(plan->isEmpty());
    // Not even a host-process run is refused: there is nothing to give it.
    m_input.run.hostProcess = true;
    QVERIFY(planDevices(m_input));
}

void TestDevicePlan::aBoundSegmentBecomesADeviceOfTheRun()
{
    BindingRecord binding = bindingOf(3, m_lab);
    binding.terms.targetAddress = QStringLiteral("192.0.2.10/24");
    m_input.bindings = { binding };
    auto plan = planDevices(m_input);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QCOMPARE(plan->size(), 1);
    const protocol::ForwardedDevice &device = plan->first().device;
    QCOMPARE(device.bindingId, 3);
    QCOMPARE(device.name, QStringLiteral("fwd-lab"));
    QCOMPARE(device.kind, protocol::DeviceSpec::Kind::Segment);
    QCOMPARE(device.target, QStringLiteral("fwd0"));
    QCOMPARE(device.address, QStringLiteral("192.0.2.10/24"));
    // Another project's binding is not this run's.
    BindingRecord elsewhere = bindingOf(4, m_lab);
    elsewhere.projectId = 2;
    m_input.bindings = { elsewhere };
    QVERIFY(planDevices(m_input)->isEmpty());
}

void TestDevicePlan::aNarrowedBindingAppliesOnlyToItsVirtualExecutor()
{
    m_input.bindings = { bindingOf(3, m_lab, QString(), QStringLiteral("lab-runner")) };
    QVERIFY(planDevices(m_input)->isEmpty());
    m_input.run.virtualExecutor = QStringLiteral("other");
    QVERIFY(planDevices(m_input)->isEmpty());
    m_input.run.virtualExecutor = QStringLiteral("lab-runner");
    QCOMPARE(planDevices(m_input)->size(), 1);
}

void TestDevicePlan::anAbsentForwarderRefusesTheRunNamingIt()
{
    m_input.bindings = { bindingOf(3, m_lab) };
    m_input.forwarderConnected = [](qint64) { return false; };
    auto plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("forwarder_offline"));
    QVERIFY2(plan.error().message.contains(QLatin1String("forwarder 7 (lab")),
        qPrintable(plan.error().message));
    QVERIFY2(plan.error().message.contains(QLatin1String("cloop forward unbind 3")),
        qPrintable(plan.error().message));
    // Whatever the executor: a host-process run hears about the forwarder first.
    m_input.run.hostProcess = true;
    QCOMPARE(planDevices(m_input).error().code, QStringLiteral("forwarder_offline"));
}

void TestDevicePlan::executorsThatCannotTakeTheDeviceAreRefused_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("host-process run")
        << QStringLiteral("host-process") << QStringLiteral("host-process run");
    QTest::newRow("agent in host mode")
        << QStringLiteral("host-mode") << QStringLiteral("host mode");
    QTest::newRow("gVisor by virtual executor")
        << QStringLiteral("runsc") << QStringLiteral("runsc (gvisor)");
    QTest::newRow("Kata by virtual executor")
        << QStringLiteral("kata") << QStringLiteral("kata (kata)");
    QTest::newRow("gVisor as the engine's default")
        << QStringLiteral("default-runsc") << QStringLiteral("runsc");
    QTest::newRow("an agent before protocol 22")
        << QStringLiteral("old") << QStringLiteral("upgrade cloop");
    QTest::newRow("an agent that cannot attach a segment")
        << QStringLiteral("no-l2") << QStringLiteral("nsenter is missing");
    QTest::newRow("unreadable capabilities")
        << QStringLiteral("garbage") << QStringLiteral("unreadable");
}

void TestDevicePlan::executorsThatCannotTakeTheDeviceAreRefused()
{
    QFETCH(QString, setup);
    QFETCH(QString, mentions);
    m_input.bindings = { bindingOf(3, m_lab) };
    AgentCapabilities capabilities = containerAgent();
    int protocol = protocol::kVersion;
    if (setup == QLatin1String("host-process"))
        m_input.run.hostProcess = true;
    else if (setup == QLatin1String("host-mode"))
        capabilities.mode = AgentCapabilities::Mode::Host;
    else if (setup == QLatin1String("runsc") || setup == QLatin1String("kata"))
        m_input.run.runtime = setup;
    else if (setup == QLatin1String("default-runsc"))
        capabilities.engine.defaultRuntime = QStringLiteral("runsc");
    else if (setup == QLatin1String("old"))
        protocol = protocol::kMinimumForDevices - 1;
    else if (setup == QLatin1String("no-l2"))
        capabilities.l2Attach
            = { false, QStringLiteral("nsenter is missing (install util-linux)") };
    m_input.executor = executorWith(capabilities, protocol);
    if (setup == QLatin1String("garbage"))
        m_input.executor.capabilities
            = QJsonObject { { QStringLiteral("cpus"), QStringLiteral("many") } };
    auto plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("executor_cannot_attach"));
    QVERIFY2(plan.error().message.contains(mentions), qPrintable(plan.error().message));
    // Every refusal names the executor and the forwarder.
    QVERIFY2(plan.error().message.contains(QLatin1String("executor 4 (bench)")),
        qPrintable(plan.error().message));
    QVERIFY2(plan.error().message.contains(QLatin1String("forwarder 7 (lab)")),
        qPrintable(plan.error().message));
}

void TestDevicePlan::twoSegmentsCannotShareAName()
{
    const ForwarderRecord second = segmentForwarder(8, QStringLiteral("lab2"));
    m_input.forwarders.insert(second.id, second);
    m_input.bindings = { bindingOf(3, m_lab), bindingOf(5, second) };
    auto clash = planDevices(m_input);
    QVERIFY(!clash);
    QCOMPARE(clash.error().code, QStringLiteral("device_clash"));
    QVERIFY2(
        clash.error().message.contains(QLatin1String("fwd0")), qPrintable(clash.error().message));
    m_input.bindings = { bindingOf(3, m_lab), bindingOf(5, second, QStringLiteral("fwd1")) };
    auto both = planDevices(m_input);
    QVERIFY(both);
    QCOMPARE(both->size(), 2);
    QCOMPARE(both->at(1).device.name, QStringLiteral("fwd-lab2"));
}

void TestDevicePlan::theSandboxGetsTheSegmentsMtu()
{
    m_input.bindings = { bindingOf(3, m_lab) };
    // A forwarder that never said: Ethernet's 1500.
    QCOMPARE(planDevices(m_input)->first().device.mtu, 1500);
    m_input.segmentMtu = [](qint64) { return std::optional<int>(); };
    QCOMPARE(planDevices(m_input)->first().device.mtu, 1500);
    m_input.segmentMtu
        = [](qint64 id) { return id == 7 ? std::optional<int>(9000) : std::nullopt; };
    QCOMPARE(planDevices(m_input)->first().device.mtu, 9000);
    // Loopback's 65536 is more than a TAP takes: the largest it does.
    m_input.segmentMtu
        = [](qint64 id) { return id == 7 ? std::optional<int>(65536) : std::nullopt; };
    QCOMPARE(planDevices(m_input)->first().device.mtu, protocol::kMaxSandboxMtu);
    QCOMPARE(protocol::kMaxSandboxMtu, device::l2::TapDevice::kMaxMtu);
}

void TestDevicePlan::aBoundUsbDeviceIsImportedByItsBusId()
{
    const ForwarderRecord key = usbForwarder(9, QStringLiteral("hsm"));
    m_input.forwarders.insert(key.id, key);
    m_input.executor = executorWith(usbCapableAgent());
    m_input.usbBusId = [](qint64 id) {
        return id == 9 ? std::optional<QString>(QStringLiteral("1-1.4")) : std::nullopt;
    };
    // A segment beside it keeps its fwd0: USB devices have no interface name to clash.
    m_input.bindings = { bindingOf(3, m_lab), bindingOf(6, key) };
    auto plan = planDevices(m_input);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QCOMPARE(plan->size(), 2);
    const protocol::ForwardedDevice &device = plan->at(1).device;
    QCOMPARE(device.kind, protocol::DeviceSpec::Kind::Usb);
    QCOMPARE(device.name, QStringLiteral("fwd-hsm"));
    QCOMPARE(device.busId, QStringLiteral("1-1.4"));
    QCOMPARE(device.bindingId, 6);
    QVERIFY(device.target.isEmpty());
}

void TestDevicePlan::anUnpluggedOrUnreportedUsbDeviceRefusesTheRun()
{
    const ForwarderRecord key = usbForwarder(9, QStringLiteral("hsm"));
    m_input.forwarders.insert(key.id, key);
    m_input.executor = executorWith(usbCapableAgent());
    m_input.bindings = { bindingOf(6, key) };
    // Never said where its device is: an old forwarder.
    auto plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("forwarder_outdated"));
    QVERIFY2(plan.error().message.contains(QLatin1String("forwarder 9 (hsm)")),
        qPrintable(plan.error().message));
    // Said it is unplugged: refused on every executor, saying so.
    m_input.usbBusId = [](qint64) { return std::optional<QString>(QString()); };
    plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("device_unplugged"));
    QVERIFY2(plan.error().message.contains(QLatin1String("usb 1050:0407 is unplugged")),
        qPrintable(plan.error().message));
    m_input.run.hostProcess = true;
    QCOMPARE(planDevices(m_input).error().code, QStringLiteral("device_unplugged"));
}

void TestDevicePlan::executorsThatCannotTakeAUsbDeviceAreRefused()
{
    const ForwarderRecord key = usbForwarder(9, QStringLiteral("hsm"));
    m_input.forwarders.insert(key.id, key);
    m_input.bindings = { bindingOf(6, key) };
    m_input.usbBusId = [](qint64) { return std::optional<QString>(QStringLiteral("1-1")); };
    // The agent said it has no vhci_hcd.
    auto plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("executor_cannot_attach"));
    QVERIFY2(plan.error().message.contains(QLatin1String("vhci_hcd missing")),
        qPrintable(plan.error().message));
    // An agent from before USB devices.
    m_input.executor = executorWith(usbCapableAgent(), protocol::kMinimumForUsb - 1);
    plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("executor_cannot_attach"));
    QVERIFY2(plan.error().message.contains(
                 QStringLiteral("USB devices need %1").arg(protocol::kMinimumForUsb)),
        qPrintable(plan.error().message));
    m_input.executor = executorWith(usbCapableAgent());
    QVERIFY(planDevices(m_input));
}

void TestDevicePlan::aUsbDeviceServesOneRunAtATime()
{
    const ForwarderRecord key = usbForwarder(9, QStringLiteral("hsm"));
    m_input.forwarders.insert(key.id, key);
    m_input.executor = executorWith(usbCapableAgent());
    m_input.usbBusId = [](qint64) { return std::optional<QString>(QStringLiteral("1-1")); };
    m_input.bindings = { bindingOf(3, m_lab), bindingOf(6, key) };
    // Another run holds both devices: the segment is shared, the USB device waits.
    m_input.deviceInUse = [](qint64) { return true; };
    auto plan = planDevices(m_input);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, QStringLiteral("device_busy"));
    QVERIFY2(plan.error().message.contains(QLatin1String("forwarder 9 (hsm)")),
        qPrintable(plan.error().message));
    m_input.bindings = { bindingOf(3, m_lab) };
    QVERIFY(planDevices(m_input));
}

QTEST_GUILESS_MAIN(TestDevicePlan)
#include "tst_deviceplan.moc"
