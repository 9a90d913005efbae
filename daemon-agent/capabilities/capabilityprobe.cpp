#include "daemon-agent/capabilities/capabilityprobe.h"

#include "common/device/usb/usbsysfs.h"

#include "cloop/buildinfo.h"
#include "common/protocol/protocolversion.h"
#include "common/util/processcommandrunner.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/capabilities/containersconf.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSysInfo>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cloop::agent {

using util::ProcessCommandRunner;

namespace {

using Caps = AgentCapabilities;

const QString kVhci = QStringLiteral("/sys/devices/platform/vhci_hcd.0");
constexpr quint16 kLinuxFoundationVendor = 0x1d6b; // root hubs
constexpr int kKvmApiVersion = 12;
constexpr qsizetype kMaxErrorLine = 200;

QString bounded(const QString &text, qsizetype maxLength = Caps::kMaxTextLength)
{
    return text.left(maxLength);
}

// The first non-empty line of a tool's message, short enough for a reason.
QString firstLine(const QByteArray &output)
{
    for (const QByteArray &line : output.split('\n')) {
        const QString text = QString::fromUtf8(line).trimmed();
        if (!text.isEmpty())
            return bounded(text, kMaxErrorLine);
    }
    return QStringLiteral("no message");
}

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// The built-in [engine.runtimes] entries podman knows without any
// containers.conf, as executable names looked up like podman does (in the
// usual bin and sbin folders).
QMap<QString, QStringList> builtInRuntimes()
{
    return { { QStringLiteral("runc"), { QStringLiteral("runc") } },
        { QStringLiteral("crun"), { QStringLiteral("crun") } },
        { QStringLiteral("runsc"), { QStringLiteral("runsc") } },
        { QStringLiteral("kata"),
            { QStringLiteral("kata-runtime"), QStringLiteral("kata-qemu"),
                QStringLiteral("kata-fc") } } };
}

// Runs a tool whose failure is a reason: its standard output when it exits
// 0, else "<what>: <error>" or "<what> exited with N: <first error line>".
Result<QByteArray> runTool(CommandRunner &runner, const QString &program,
    const QStringList &arguments,
    std::chrono::milliseconds timeout = CapabilityProbe::kCommandTimeout)
{
    const QString what
        = QFileInfo(program).fileName() + QLatin1Char(' ') + arguments.join(QLatin1Char(' '));
    const auto output = runner.run(program, arguments, timeout);
    if (!output.ok())
        return Error::make(output.error().code,
            bounded(what + QStringLiteral(": ") + output.error().message, Caps::kMaxReasonLength));
    if (output->exitCode != 0)
        return Error::make(QStringLiteral("command_failed"),
            QStringLiteral("%1 exited with %2: %3")
                .arg(what, QString::number(output->exitCode), firstLine(output->standardError)));
    return output->standardOutput;
}

} // namespace

CapabilityProbe::CapabilityProbe(SysfsRoot roots)
    : CapabilityProbe(
        std::move(roots), std::make_unique<ProcessCommandRunner>(),
        [] { return static_cast<unsigned int>(::geteuid()); },
        containersconf::defaultFiles(::geteuid() != 0))
{ }

CapabilityProbe::CapabilityProbe(SysfsRoot roots, std::unique_ptr<CommandRunner> runner,
    EffectiveUid euid, QStringList containersConfFiles)
    : m_roots(std::move(roots))
    , m_runner(std::move(runner))
    , m_euid(std::move(euid))
    , m_containersConfFiles(std::move(containersConfFiles))
{
    Q_ASSERT(m_runner);
    Q_ASSERT(m_euid);
}

CapabilityProbe::~CapabilityProbe() = default;

AgentCapabilities CapabilityProbe::probe(const Options &options) const
{
    Caps caps;
    caps.softwareVersion = QString::fromLatin1(buildinfo::kVersion);
    caps.protocolVersion = protocol::kVersion;
    caps.os = bounded(QSysInfo::kernelType());
    caps.arch = bounded(QSysInfo::currentCpuArchitecture());
    caps.kernel = bounded(QSysInfo::kernelVersion());
    caps.cpus = std::clamp(QThread::idealThreadCount(), 1, Caps::kMaxCpus);
    caps.memoryBytes = memoryBytes();
    for (auto it = options.labels.cbegin(); it != options.labels.cend(); ++it) {
        const Status valid = Caps::validateLabel(it.key(), it.value());
        if (!valid.ok() || caps.labels.size() >= Caps::kMaxLabels) {
            qCWarning(lcAgentProbe)
                << "label left out:"
                << (valid.ok() ? QStringLiteral("too many labels") : valid.error().message);
            continue;
        }
        caps.labels.insert(it.key(), it.value());
    }
    caps.maxConcurrent = options.maxConcurrent > 0
        ? std::min(options.maxConcurrent, Caps::kMaxConcurrentCeiling)
        : std::min(caps.cpus, Caps::kMaxConcurrentCeiling);
    caps.mode = options.mode;
    caps.engine = detectEngine();
    caps.kvm = detectKvm();
    caps.packetFilter = detectPacketFilter();
    caps.usbInventory = readUsbInventory();
    caps.usbAttach = detectUsbAttach();
    caps.l2Attach = detectL2Attach(caps.mode, caps.engine);
    caps.harnesses = findHarnesses(options.harnessNames);
    caps.harnessInstallers = options.harnessNames.mid(0, Caps::kMaxHarnesses);
    qCInfo(lcAgentProbe).noquote() << "capabilities:" << caps.summary();
    return caps;
}

QMap<QString, QString> CapabilityProbe::findHarnesses(const QStringList &names) const
{
    QMap<QString, QString> found;
    for (const QString &name : names) {
        if (!Caps::isHarnessName(name) || found.size() >= Caps::kMaxHarnesses)
            continue;
        const QString path = m_runner->findExecutable(name);
        if (!path.isEmpty() && path.size() <= Caps::kMaxTextLength)
            found.insert(name, path);
    }
    return found;
}

qint64 CapabilityProbe::memoryBytes() const
{
    static const QRegularExpression memTotal(
        QStringLiteral("^MemTotal:\\s+(\\d+)\\s*kB$"), QRegularExpression::MultilineOption);
    if (const auto meminfo = m_roots.readAttribute(u"/proc/meminfo")) {
        const auto match = memTotal.match(*meminfo);
        bool ok = false;
        const qint64 kib = match.hasMatch() ? match.captured(1).toLongLong(&ok) : 0;
        if (ok && kib > 0 && kib < (qint64(1) << 43))
            return kib * 1024;
    }
    qCDebug(lcAgentProbe) << "no MemTotal in" << m_roots.path(u"/proc/meminfo")
                          << "- asking sysconf";
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? qint64(pages) * pageSize : 0;
}

Result<Caps::ContainerEngine> CapabilityProbe::parsePodmanInfo(const QByteArray &json)
{
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return Error::make(QStringLiteral("engine_unreadable"),
            QStringLiteral("podman info printed no JSON object (%1)")
                .arg(parseError.errorString()));
    const QJsonObject info = document.object();

    Caps::ContainerEngine engine;
    engine.present = true;
    engine.name = QStringLiteral("podman");
    const QJsonValue version = info.value(QLatin1String("version"));
    engine.version
        = bounded(version.isObject() ? version.toObject().value(QLatin1String("Version")).toString()
                                     : version.toString());
    if (engine.version.isEmpty())
        engine.version = QStringLiteral("unknown");

    const QJsonObject runtime = info.value(QLatin1String("host"))
                                    .toObject()
                                    .value(QLatin1String("ociRuntime"))
                                    .toObject();
    engine.defaultRuntime = bounded(runtime.value(QLatin1String("name")).toString());
    const QString path
        = bounded(runtime.value(QLatin1String("path")).toString(), Caps::kMaxReasonLength);
    auto kind = Caps::runtimeKindOf(engine.defaultRuntime);
    if (!kind)
        kind = Caps::runtimeKindOf(path);
    if (kind && !engine.defaultRuntime.isEmpty())
        engine.runtimes.append({ engine.defaultRuntime, path, *kind });
    return engine;
}

QList<Caps::OciRuntime> CapabilityProbe::registeredRuntimes(
    const QString &defaultName, const QString &defaultPath) const
{
    QMap<QString, QStringList> table = builtInRuntimes();
    const auto configured = containersconf::readRuntimes(m_containersConfFiles);
    for (auto it = configured.cbegin(); it != configured.cend(); ++it)
        table.insert(it.key(), it.value());

    QList<Caps::OciRuntime> runtimes;
    for (auto it = table.cbegin(); it != table.cend() && runtimes.size() < Caps::kMaxRuntimes;
         ++it) {
        if (it.key() == defaultName && !defaultPath.isEmpty())
            continue; // podman info already said where it is
        auto kind = Caps::runtimeKindOf(it.key());
        for (qsizetype i = 0; !kind && i < it.value().size(); ++i)
            kind = Caps::runtimeKindOf(it.value().at(i));
        if (!kind) {
            qCDebug(lcAgentProbe) << "runtime" << it.key()
                                  << "is of no kind the hub knows; left out";
            continue;
        }
        for (const QString &candidate : it.value()) {
            const QString path = m_runner->findExecutable(candidate);
            if (!path.isEmpty()) {
                runtimes.append(
                    { bounded(it.key()), bounded(path, Caps::kMaxReasonLength), *kind });
                break;
            }
        }
    }
    return runtimes;
}

Caps::ContainerEngine CapabilityProbe::detectEngine() const
{
    Caps::ContainerEngine absent;
    absent.name = QStringLiteral("podman");
    const QString podman = m_runner->findExecutable(QStringLiteral("podman"));
    if (podman.isEmpty()) {
        absent.reason = QStringLiteral("podman not found in PATH");
        return absent;
    }
    const auto output = runTool(*m_runner, podman,
        { QStringLiteral("info"), QStringLiteral("--format"), QStringLiteral("json") },
        kEngineTimeout);
    if (!output.ok()) {
        absent.reason = output.error().message;
        return absent;
    }
    auto engine = parsePodmanInfo(*output);
    if (!engine.ok()) {
        absent.reason = bounded(engine.error().message, Caps::kMaxReasonLength);
        return absent;
    }
    const QString defaultPath
        = engine->runtimes.isEmpty() ? QString() : engine->runtimes.first().path;
    for (const auto &runtime : registeredRuntimes(engine->defaultRuntime, defaultPath)) {
        if (engine->runtimes.size() < Caps::kMaxRuntimes)
            engine->runtimes.append(runtime);
    }
    return std::move(engine).value();
}

Caps::Verdict CapabilityProbe::detectKvm() const
{
    constexpr auto kKvm = u"/dev/kvm";
    if (!m_roots.exists(kKvm))
        return { false, QStringLiteral("no /dev/kvm on this host") };
    if (!m_roots.isCharacterDevice(kKvm))
        return { false, QStringLiteral("/dev/kvm is not a character device") };

    const int fd = ::open(QFile::encodeName(m_roots.path(kKvm)).constData(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        QString reason = QStringLiteral("cannot open /dev/kvm: %1").arg(errnoText(error));
        if (error == EACCES)
            reason += QStringLiteral("; add the agent's user to group kvm");
        return { false, reason };
    }
    const int version = ::ioctl(fd, KVM_GET_API_VERSION, 0);
    const int error = errno;
    ::close(fd);
    if (version < 0)
        return { false,
            QStringLiteral("KVM_GET_API_VERSION on /dev/kvm failed: %1").arg(errnoText(error)) };
    if (version != kKvmApiVersion)
        return { false,
            QStringLiteral("/dev/kvm speaks KVM API %1, not %2")
                .arg(QString::number(version), QString::number(kKvmApiVersion)) };
    // PVM (a pagetable-based KVM for nested clouds) opens and answers like
    // KVM, but boots only guest kernels built for it.
    if (m_roots.exists(u"/sys/module/kvm_pvm"))
        return { true, QStringLiteral("KVM is PVM: only PVM guest kernels boot") };
    return { true, {} };
}

Caps::PacketFilter CapabilityProbe::detectPacketFilter() const
{
    Caps::PacketFilter filter;
    filter.name = QStringLiteral("nft");
    const QString nft = m_runner->findExecutable(filter.name);
    if (nft.isEmpty()) {
        filter.reason = QStringLiteral("nft not found: install nftables");
        return filter;
    }
    if (const auto version = runTool(*m_runner, nft, { QStringLiteral("--version") })) {
        static const QRegularExpression number(QStringLiteral("v(\\d+(?:\\.\\d+)*)"));
        const QString line = firstLine(*version);
        const auto match = number.match(line);
        filter.version = bounded(match.hasMatch() ? match.captured(1) : line);
    }
    if (!isRoot()) {
        filter.reason = QStringLiteral("not running as root");
        return filter;
    }
    const auto tables
        = runTool(*m_runner, nft, { QStringLiteral("list"), QStringLiteral("tables") });
    if (!tables.ok()) {
        filter.reason = tables.error().message;
        return filter;
    }
    filter.usable = true;
    return filter;
}

QList<Caps::UsbDevice> CapabilityProbe::readUsbInventory() const
{
    QList<Caps::UsbDevice> devices;
    for (const QString &name : device::usb::listDeviceBusIds(m_roots)) {
        const QString base = device::usb::kUsbDevicesDir + QLatin1Char('/') + name;
        const auto vendor = device::usb::readId(m_roots, name, u"idVendor");
        const auto product = device::usb::readId(m_roots, name, u"idProduct");
        if (!vendor || !product || *vendor == kLinuxFoundationVendor)
            continue;
        // A device imported over USB/IP hangs off a vhci root hub: it is a
        // forwarded device this agent attached, not one of this machine's.
        if (device::usb::isImportedDevice(m_roots, name))
            continue;
        if (devices.size() >= Caps::kMaxUsbDevices) {
            qCWarning(lcAgentProbe) << "more than" << Caps::kMaxUsbDevices
                                    << "USB devices; the inventory lists the first ones";
            break;
        }
        Caps::UsbDevice device;
        device.busId = name;
        device.vendorId = *vendor;
        device.productId = *product;
        device.serial
            = bounded(m_roots.readAttribute(base + QStringLiteral("/serial")).value_or(QString()));
        device.product
            = bounded(m_roots.readAttribute(base + QStringLiteral("/product")).value_or(QString()));
        device.speed
            = bounded(m_roots.readAttribute(base + QStringLiteral("/speed")).value_or(QString()));
        devices.append(device);
    }
    return devices;
}

Caps::Verdict CapabilityProbe::detectUsbAttach() const
{
    if (!m_roots.exists(kVhci)) {
        return { false,
            m_roots.exists(u"/sys/bus/usb")
                ? QStringLiteral("vhci_hcd missing: modprobe vhci-hcd")
                : QStringLiteral("vhci_hcd missing: no USB support in this kernel") };
    }
    if (!isRoot())
        return { false, QStringLiteral("not running as root") };
    const QString attach = kVhci + QStringLiteral("/attach");
    if (!m_roots.exists(attach))
        return { false, QStringLiteral("vhci_hcd.0 has no attach file") };
    if (!m_roots.isWritable(attach))
        return { false, QStringLiteral("vhci_hcd.0/attach is not writable: read-only /sys?") };
    return { true, {} };
}

Caps::Verdict CapabilityProbe::detectL2Attach(
    Caps::Mode mode, const Caps::ContainerEngine &engine) const
{
    if (!isRoot())
        return { false, QStringLiteral("not running as root") };
    if (m_runner->findExecutable(QStringLiteral("ip")).isEmpty())
        return { false, QStringLiteral("ip not found: install iproute2") };
    if (m_runner->findExecutable(QStringLiteral("nsenter")).isEmpty())
        return { false, QStringLiteral("nsenter not found: install util-linux") };
    if (!m_roots.exists(u"/dev/net/tun"))
        return { false, QStringLiteral("/dev/net/tun missing: no TUN/TAP support") };
    if (mode == Caps::Mode::Host)
        return { true, {} };
    if (!engine.present)
        return { false, QStringLiteral("no container engine: %1").arg(engine.reason) };
    for (const auto &runtime : engine.runtimes) {
        if (runtime.kind == Caps::RuntimeKind::Runc || runtime.kind == Caps::RuntimeKind::Crun)
            return { true, {} };
    }
    if (engine.runtimes.isEmpty())
        return { false, QStringLiteral("no OCI runtime found") };
    return { false,
        QStringLiteral("only gVisor/Kata runtimes, which cannot receive an interface") };
}

bool CapabilityProbe::isRoot() const
{
    return m_euid() == 0;
}

} // namespace cloop::agent
