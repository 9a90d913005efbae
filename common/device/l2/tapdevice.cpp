#include "common/device/l2/tapdevice.h"

#include "common/logging.h"
#include "common/util/processcommandrunner.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <utility>

#include <QElapsedTimer>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace cloop::device::l2 {

namespace {

using namespace std::chrono_literals;

// ip and nsenter answer in milliseconds; a tool that takes longer is stuck
// (a wedged rtnl lock, a hung namespace) and waiting longer helps nobody.
constexpr auto kToolTimeout = 5000ms;
// Enough of a tool's complaint to act on, without flooding a log line.
constexpr qsizetype kMaxQuotedOutput = 400;
constexpr qsizetype kMaxInterfaceName = IFNAMSIZ - 1;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

Error systemError(const QString &code, const QString &step, int error)
{
    return Error::make(code, QStringLiteral("%1: %2").arg(step, errnoText(error)));
}

// The kernel deletes a TAP whose namespace is destroyed; its descriptor
// then answers EBADFD to everything.
Error goneError(const QString &name)
{
    return Error::make(ErrorCode::DeviceGone,
        QStringLiteral("TAP %1 no longer exists (was the namespace it was moved "
                       "into destroyed?)")
            .arg(name),
        true);
}

Error refusal(const QString &code, const QString &message)
{
    return Error::make(code, message, true);
}

bool isNameCharacter(QChar c)
{
    return (c >= QLatin1Char('a') && c <= QLatin1Char('z'))
        || (c >= QLatin1Char('A') && c <= QLatin1Char('Z'))
        || (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char('_')
        || c == QLatin1Char('.') || c == QLatin1Char('-');
}

struct InterfaceAddress
{
    QHostAddress address;
    int prefixLength = 0;

    // What ip(8) is given: the address as parsed, never the caller's text.
    QString toString() const
    {
        return QStringLiteral("%1/%2").arg(address.toString()).arg(prefixLength);
    }
};

Result<InterfaceAddress> parseInterfaceAddress(const QString &cidr)
{
    const auto invalid = [&cidr](const QString &why) {
        return refusal(QStringLiteral("invalid_address"),
            QStringLiteral("interface address \"%1\" refused: %2").arg(cidr, why));
    };
    const qsizetype slash = cidr.indexOf(QLatin1Char('/'));
    if (slash < 0)
        return invalid(QStringLiteral("expected ADDRESS/PREFIX, e.g. 192.0.2.1/24"));
    const QString addressText = cidr.left(slash);
    const QString prefixText = cidr.mid(slash + 1);
    if (addressText.contains(QLatin1Char('%')))
        return invalid(QStringLiteral("a scope is not part of an interface address"));

    InterfaceAddress parsed;
    if (!parsed.address.setAddress(addressText))
        return invalid(QStringLiteral("not an IPv4 or IPv6 address"));
    const bool v4 = parsed.address.protocol() == QHostAddress::IPv4Protocol;
    // Qt also takes shorthand forms ("10.1", octal-looking parts) that read
    // differently to a person; only the plain form says what it means.
    if (v4 && parsed.address.toString() != addressText)
        return invalid(QStringLiteral("write the IPv4 address as four decimal numbers"));

    bool digits = !prefixText.isEmpty() && prefixText.size() <= 3;
    for (const QChar c : prefixText)
        digits = digits && c >= QLatin1Char('0') && c <= QLatin1Char('9');
    if (!digits)
        return invalid(QStringLiteral("the prefix length must be a decimal number"));
    parsed.prefixLength = prefixText.toInt();
    const int maxPrefix = v4 ? 32 : 128;
    // A /0 would make every destination on-link: always a mistake here.
    if (parsed.prefixLength < 1 || parsed.prefixLength > maxPrefix)
        return invalid(QStringLiteral("the prefix length must be 1-%1").arg(maxPrefix));
    if (QHostAddress::parseSubnet(cidr).second < 0)
        return invalid(QStringLiteral("not a subnet Qt understands"));

    if (parsed.address.isNull() || parsed.address == QHostAddress::AnyIPv4
        || parsed.address == QHostAddress::AnyIPv6)
        return invalid(QStringLiteral("the unspecified address is not a host address"));
    if (parsed.address.isLoopback())
        return invalid(QStringLiteral("a loopback address belongs on lo"));
    if (parsed.address.isMulticast())
        return invalid(QStringLiteral("a multicast address is not a host address"));
    if (parsed.address.isBroadcast())
        return invalid(QStringLiteral("the broadcast address is not a host address"));
    if (!v4) {
        bool mapped = false;
        parsed.address.toIPv4Address(&mapped);
        if (mapped)
            return invalid(QStringLiteral("use the plain IPv4 form, not an IPv4-mapped one"));
    }
    return parsed;
}

Status validateNameTemplate(const QString &nameTemplate)
{
    const auto invalid = [&nameTemplate](const QString &why) {
        return refusal(QStringLiteral("invalid_options"),
            QStringLiteral("TAP name template \"%1\" refused: %2").arg(nameTemplate, why));
    };
    if (nameTemplate.size() > kMaxInterfaceName)
        return invalid(QStringLiteral("longer than %1 characters").arg(kMaxInterfaceName));
    const qsizetype percent = nameTemplate.indexOf(QLatin1Char('%'));
    if (percent >= 0
        && (nameTemplate.mid(percent, 2) != QLatin1String("%d")
            || nameTemplate.indexOf(QLatin1Char('%'), percent + 1) >= 0))
        return invalid(QStringLiteral("the only placeholder is one \"%d\""));
    QString sample = nameTemplate;
    sample.replace(QLatin1String("%d"), QLatin1String("0"));
    if (Status valid = validateInterfaceName(sample); !valid)
        return invalid(valid.error().message);
    return {};
}

// The agent's capability probe finds tools the same way (sbin folders too,
// which a root daemon started from a minimal environment may lack in PATH),
// so the probe and this class agree on whether a tool is there.
QString findTool(const QString &name)
{
    return util::ProcessCommandRunner().findExecutable(name);
}

QString quoted(const QByteArray &output)
{
    QString text = QString::fromLocal8Bit(output).trimmed();
    if (text.size() > kMaxQuotedOutput)
        text = text.left(kMaxQuotedOutput) + QStringLiteral("...");
    return text.isEmpty() ? QStringLiteral("(no output)") : text;
}

QString commandLine(const QString &program, const QStringList &arguments)
{
    return QFileInfo(program).fileName() + QLatin1Char(' ') + arguments.join(QLatin1Char(' '));
}

// Runs a tool to completion; a non-zero exit is the caller's to judge.
Result<util::CommandOutput> runTool(
    const QString &code, const QString &program, const QStringList &arguments)
{
    util::ProcessCommandRunner runner;
    Result<util::CommandOutput> output = runner.run(program, arguments, kToolTimeout);
    if (!output)
        return Error::make(code,
            QStringLiteral("`%1`: %2")
                .arg(commandLine(program, arguments), output.error().message));
    return output;
}

// A tool that must succeed: its stderr becomes the error text.
Status runStep(
    const QString &code, const QString &step, const QString &program, const QStringList &arguments)
{
    Result<util::CommandOutput> output = runTool(code, program, arguments);
    if (!output)
        return Error::make(code, QStringLiteral("%1: %2").arg(step, output.error().message));
    if (output->exitCode != 0) {
        return Error::make(code,
            QStringLiteral("%1: `%2` exited with %3: %4")
                .arg(step, commandLine(program, arguments))
                .arg(output->exitCode)
                .arg(quoted(output->standardError)));
    }
    return {};
}

// Names and alternative names alike: the kernel refuses a rename onto
// either.
Result<QSet<QString>> interfaceNames(const QByteArray &json)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isArray()) {
        return Error::make(QStringLiteral("namespace_unreachable"),
            QStringLiteral("cannot read the interface list of `ip -j link show`: %1")
                .arg(parseError.errorString()));
    }
    QSet<QString> names;
    for (const QJsonValue link : document.array()) {
        const QJsonObject object = link.toObject();
        names.insert(object.value(QLatin1String("ifname")).toString());
        for (const QJsonValue alternative : object.value(QLatin1String("altnames")).toArray())
            names.insert(alternative.toString());
    }
    return names;
}

} // namespace

Status validateInterfaceName(const QString &name)
{
    const auto invalid = [&name](const QString &why) {
        return refusal(QStringLiteral("invalid_interface_name"),
            QStringLiteral("interface name \"%1\" refused: %2").arg(name, why));
    };
    if (name.isEmpty())
        return invalid(QStringLiteral("empty"));
    if (name.size() > kMaxInterfaceName)
        return invalid(QStringLiteral("longer than %1 characters").arg(kMaxInterfaceName));
    for (const QChar c : name) {
        if (!isNameCharacter(c))
            return invalid(QStringLiteral("only letters, digits, '_', '.' and '-' are allowed"));
    }
    static const QStringList reserved { QStringLiteral("."), QStringLiteral(".."),
        QStringLiteral("lo"), QStringLiteral("all"), QStringLiteral("default") };
    if (reserved.contains(name))
        return invalid(QStringLiteral("reserved name"));
    return {};
}

Status validateInterfaceAddress(const QString &cidr)
{
    Result<InterfaceAddress> parsed = parseInterfaceAddress(cidr);
    if (!parsed)
        return parsed.error();
    return {};
}

TapDevice::TapDevice(
    util::Fd fd, QString name, QString nameTemplate, bool vnetHeader, NamespaceId home)
    : m_fd(std::move(fd))
    , m_name(std::move(name))
    , m_nameTemplate(std::move(nameTemplate))
    , m_vnetHeader(vnetHeader)
    , m_home(home)
    , m_readBuffer((vnetHeader ? kVnetHeaderBytes : 0) + kMaxFrameBytes, Qt::Uninitialized)
{ }

TapDevice::~TapDevice()
{
    if (m_fd.valid())
        qCDebug(lcDevice) << "closing TAP" << m_name << "(it disappears with the descriptor)";
}

Result<std::unique_ptr<TapDevice>> TapDevice::create(const Options &options)
{
    if (Status valid = validateNameTemplate(options.nameTemplate); !valid)
        return valid.error();
    if (options.offloads && !options.vnetHeader) {
        return refusal(QStringLiteral("invalid_options"),
            QStringLiteral("TAP offloads need the vnet header: without it a frame "
                           "cannot say that it still needs a checksum or "
                           "segmentation"));
    }
    if (options.mtu < kMinMtu || options.mtu > kMaxMtu) {
        return refusal(QStringLiteral("invalid_mtu"),
            QStringLiteral("TAP MTU %1 refused: must be %2-%3")
                .arg(options.mtu)
                .arg(kMinMtu)
                .arg(kMaxMtu));
    }

    util::Fd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid())
        return systemError(
            QStringLiteral("tap_open"), QStringLiteral("cannot open /dev/net/tun"), errno);

    ifreq request {};
    const QByteArray templateBytes = options.nameTemplate.toLatin1();
    std::memcpy(request.ifr_name, templateBytes.constData(), std::size_t(templateBytes.size()));
    request.ifr_flags = IFF_TAP | IFF_NO_PI;
    if (options.vnetHeader)
        request.ifr_flags |= IFF_VNET_HDR;
    if (::ioctl(fd.get(), TUNSETIFF, &request) != 0) {
        return systemError(QStringLiteral("tap_create"),
            QStringLiteral("cannot create a TAP named after \"%1\" (TUNSETIFF)")
                .arg(options.nameTemplate),
            errno);
    }
    const QString name
        = QString::fromLatin1(request.ifr_name, qsizetype(::strnlen(request.ifr_name, IFNAMSIZ)));

    if (options.vnetHeader) {
        // 10 is the kernel's default, but the frame format is a contract
        // with the other end of the tunnel, so it is set rather than assumed.
        int headerSize = int(kVnetHeaderBytes);
        if (::ioctl(fd.get(), TUNSETVNETHDRSZ, &headerSize) != 0) {
            return systemError(QStringLiteral("tap_vnet_header"),
                QStringLiteral("cannot set the vnet header size of %1").arg(name), errno);
        }
    }
    if (options.offloads) {
        const unsigned long offloads = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
        if (::ioctl(fd.get(), TUNSETOFFLOAD, offloads) != 0) {
            return systemError(QStringLiteral("tap_offload"),
                QStringLiteral("cannot enable offloads on %1 (TUNSETOFFLOAD)").arg(name), errno);
        }
    }

    // The namespace /dev/net/tun was opened in, which is where the TAP was
    // created: later the yardstick for "still on the host".
    util::Fd homeNamespace(::ioctl(fd.get(), SIOCGSKNS));
    if (!homeNamespace.valid()) {
        return systemError(QStringLiteral("tap_namespace"),
            QStringLiteral("cannot identify the network namespace of %1 (SIOCGSKNS)").arg(name),
            errno);
    }
    Result<NamespaceId> home = namespaceIdOf(homeNamespace.get());
    if (!home)
        return home.error();

    util::Fd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!control.valid()) {
        return systemError(QStringLiteral("tap_mtu"),
            QStringLiteral("cannot open a socket to set the MTU of %1").arg(name), errno);
    }
    ifreq mtuRequest {};
    std::memcpy(mtuRequest.ifr_name, request.ifr_name, IFNAMSIZ);
    mtuRequest.ifr_mtu = options.mtu;
    if (::ioctl(control.get(), SIOCSIFMTU, &mtuRequest) != 0) {
        return systemError(QStringLiteral("tap_mtu"),
            QStringLiteral("cannot set the MTU of %1 to %2 (SIOCSIFMTU)")
                .arg(name)
                .arg(options.mtu),
            errno);
    }

    qCDebug(lcDevice).noquote().nospace()
        << "created TAP " << name << " (mtu " << options.mtu << ", vnet header "
        << options.vnetHeader << ", offloads " << options.offloads << ")";
    return std::unique_ptr<TapDevice>(
        new TapDevice(std::move(fd), name, options.nameTemplate, options.vnetHeader, *home));
}

qsizetype TapDevice::minWriteBytes() const
{
    return (m_vnetHeader ? kVnetHeaderBytes : 0) + kMinFrameBytes;
}

qsizetype TapDevice::maxWriteBytes() const
{
    return (m_vnetHeader ? kVnetHeaderBytes : 0) + kMaxFrameBytes;
}

Result<std::optional<QByteArray>> TapDevice::readFrame()
{
    ssize_t got = 0;
    do {
        got = ::read(m_fd.get(), m_readBuffer.data(), std::size_t(m_readBuffer.size()));
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        const int error = errno;
        if (error == EAGAIN)
            return std::optional<QByteArray>();
        if (error == EBADFD) {
            return goneError(m_name);
        }
        return systemError(
            QStringLiteral("tap_read"), QStringLiteral("read from TAP %1").arg(m_name), error);
    }
    // A copy of the frame's size: the buffer itself is 64 KiB, too much to
    // hand out per frame.
    return std::optional<QByteArray>(QByteArray(m_readBuffer.constData(), qsizetype(got)));
}

Status TapDevice::writeFrame(QByteArrayView frame)
{
    return writeFrame(QByteArrayView(), frame);
}

Status TapDevice::writeFrame(QByteArrayView head, QByteArrayView rest)
{
    const qsizetype total = head.size() + rest.size();
    if (total < minWriteBytes() || total > maxWriteBytes()) {
        return Error::make(QStringLiteral("frame_size"),
            QStringLiteral("a frame for TAP %1 must be %2-%3 bytes%4, not %5")
                .arg(m_name)
                .arg(minWriteBytes())
                .arg(maxWriteBytes())
                .arg(m_vnetHeader ? QStringLiteral(" with its vnet header") : QString())
                .arg(total));
    }
    // One write of both parts: the TAP takes exactly one frame per call,
    // and joining them first would copy every frame once more.
    iovec parts[2] = { { const_cast<char *>(head.data()), std::size_t(head.size()) },
        { const_cast<char *>(rest.data()), std::size_t(rest.size()) } };
    ssize_t written = 0;
    do {
        written = ::writev(m_fd.get(), parts, 2);
    } while (written < 0 && errno == EINTR);
    if (written < 0) {
        const int error = errno;
        if (error == EAGAIN) {
            return Error::make(ErrorCode::WouldBlock,
                QStringLiteral("TAP %1 cannot take a frame now").arg(m_name));
        }
        if (error == EIO) {
            return Error::make(ErrorCode::LinkDown,
                QStringLiteral("TAP %1 is down; frames are accepted once it is up").arg(m_name));
        }
        if (error == EBADFD) {
            return goneError(m_name);
        }
        return systemError(
            QStringLiteral("tap_write"), QStringLiteral("write to TAP %1").arg(m_name), error);
    }
    // The TAP takes a frame whole or not at all; anything else is a bug
    // worth hearing about rather than a partial frame on the segment.
    if (written != total) {
        return Error::make(QStringLiteral("tap_write"),
            QStringLiteral("TAP %1 took %2 of %3 bytes").arg(m_name).arg(written).arg(total));
    }
    return {};
}

Result<TapDevice::NamespaceId> TapDevice::namespaceIdOf(int nsFd)
{
    struct stat info
    {
    };
    if (::fstat(nsFd, &info) != 0) {
        return systemError(QStringLiteral("tap_namespace"),
            QStringLiteral("cannot identify a network namespace"), errno);
    }
    return NamespaceId { info.st_dev, info.st_ino };
}

Result<TapDevice::NamespaceId> TapDevice::deviceNamespace() const
{
    util::Fd current(::ioctl(m_fd.get(), TUNGETDEVNETNS));
    if (!current.valid()) {
        const int error = errno;
        if (error == EBADFD) {
            return goneError(m_name);
        }
        return systemError(QStringLiteral("tap_namespace"),
            QStringLiteral("cannot find the namespace of TAP %1 (TUNGETDEVNETNS)").arg(m_name),
            error);
    }
    return namespaceIdOf(current.get());
}

Result<QString> TapDevice::kernelName() const
{
    ifreq request {};
    if (::ioctl(m_fd.get(), TUNGETIFF, &request) != 0) {
        return systemError(QStringLiteral("tap_name"),
            QStringLiteral("cannot ask the kernel for the name of TAP %1 (TUNGETIFF)").arg(m_name),
            errno);
    }
    return QString::fromLatin1(request.ifr_name, qsizetype(::strnlen(request.ifr_name, IFNAMSIZ)));
}

Result<bool> TapDevice::inHomeNamespace() const
{
    Result<NamespaceId> current = deviceNamespace();
    if (!current)
        return current.error();
    return *current == m_home;
}

namespace {

// What may be asked of a move at all, before anything is looked at.
Result<std::optional<InterfaceAddress>> checkMoveArguments(
    qint64 pid, const QString &interfaceName, const std::optional<QString> &address, int mtu)
{
    if (Status valid = validateInterfaceName(interfaceName); !valid)
        return valid.error();
    std::optional<InterfaceAddress> parsedAddress;
    if (address) {
        Result<InterfaceAddress> parsed = parseInterfaceAddress(*address);
        if (!parsed)
            return parsed.error();
        parsedAddress = *parsed;
    }
    if (mtu < TapDevice::kMinMtu || mtu > TapDevice::kMaxMtu) {
        return refusal(QStringLiteral("invalid_mtu"),
            QStringLiteral("MTU %1 refused: must be %2-%3")
                .arg(mtu)
                .arg(TapDevice::kMinMtu)
                .arg(TapDevice::kMaxMtu));
    }
    if (parsedAddress && parsedAddress->address.protocol() == QHostAddress::IPv6Protocol
        && mtu < TapDevice::kMinIpv6Mtu) {
        return refusal(QStringLiteral("invalid_mtu"),
            QStringLiteral("MTU %1 refused: IPv6 needs at least %2, and the kernel "
                           "disables it below that")
                .arg(mtu)
                .arg(TapDevice::kMinIpv6Mtu));
    }
    if (pid <= 0 || pid > INT_MAX) {
        return refusal(
            QStringLiteral("no_such_process"), QStringLiteral("%1 is not a process id").arg(pid));
    }
    return parsedAddress;
}

struct MoveTools
{
    QString ip;
    QString nsenter;
};

Result<MoveTools> findMoveTools()
{
    MoveTools tools { findTool(QStringLiteral("ip")), findTool(QStringLiteral("nsenter")) };
    if (tools.ip.isEmpty()) {
        return Error::make(
            QStringLiteral("tool_missing"), QStringLiteral("ip not found: install iproute2"), true);
    }
    if (tools.nsenter.isEmpty()) {
        return Error::make(QStringLiteral("tool_missing"),
            QStringLiteral("nsenter not found: install util-linux"), true);
    }
    return tools;
}

// The kernel applies the move before the rename in one request and keeps
// the move when the rename fails, so a taken name is caught here, where
// refusing still changes nothing.
Status refuseTakenName(const QString &nsenter, const QStringList &enter, const QString &pidText,
    const QString &interfaceName)
{
    Result<util::CommandOutput> listing = runTool(QStringLiteral("namespace_unreachable"), nsenter,
        enter
            + QStringList { QStringLiteral("-j"), QStringLiteral("link"), QStringLiteral("show") });
    if (!listing)
        return listing.error();
    if (listing->exitCode != 0) {
        return Error::make(QStringLiteral("namespace_unreachable"),
            QStringLiteral("cannot list the interfaces of process %1's namespace: %2")
                .arg(pidText, quoted(listing->standardError)));
    }
    Result<QSet<QString>> existing = interfaceNames(listing->standardOutput);
    if (!existing)
        return existing.error();
    if (existing->contains(interfaceName)) {
        return Error::make(QStringLiteral("interface_exists"),
            QStringLiteral("the namespace of process %1 already has an interface "
                           "named %2")
                .arg(pidText, interfaceName));
    }
    return {};
}

} // namespace

Result<TapDevice::NamespaceId> TapDevice::moveTarget(qint64 pid, util::Fd &held) const
{
    // Held open until the end, so the namespace compared against below
    // cannot be freed and its identity reused meanwhile.
    const QString pidText = QString::number(pid);
    const QByteArray nsPath = QStringLiteral("/proc/%1/ns/net").arg(pidText).toLocal8Bit();
    held = util::Fd(::open(nsPath.constData(), O_RDONLY | O_CLOEXEC));
    if (!held.valid()) {
        const int error = errno;
        if (error == ENOENT || error == ESRCH) {
            return Error::make(QStringLiteral("no_such_process"),
                QStringLiteral("cannot move TAP %1 into the namespace of process "
                               "%2: no such process")
                    .arg(m_name, pidText));
        }
        return systemError(QStringLiteral("namespace_unreachable"),
            QStringLiteral("cannot open the network namespace of process %1").arg(pidText), error);
    }
    Result<NamespaceId> targetId = namespaceIdOf(held.get());
    if (!targetId)
        return targetId.error();
    // ip would "move" it nowhere and then rename it on the host.
    if (*targetId == m_home) {
        return refusal(QStringLiteral("same_namespace"),
            QStringLiteral("process %1 shares this process's network namespace; a "
                           "sandbox without its own network namespace cannot get "
                           "a forwarded interface")
                .arg(pidText));
    }
    Result<bool> home = inHomeNamespace();
    if (!home)
        return home.error();
    if (!*home) {
        return Error::make(QStringLiteral("tap_not_home"),
            QStringLiteral("TAP %1 is no longer in the namespace it was created in").arg(m_name));
    }
    return *targetId;
}

Status TapDevice::configureMoved(const QString &nsenter, const QStringList &enter, int mtu,
    const std::optional<QString> &address) const
{
    const auto configure = [&](const QString &step, const QStringList &arguments) {
        return runStep(QStringLiteral("tap_configure"), step, nsenter, enter + arguments);
    };
    Status configured
        = configure(QStringLiteral("setting the MTU of %1 to %2").arg(m_name).arg(mtu),
            { QStringLiteral("link"), QStringLiteral("set"), QStringLiteral("dev"), m_name,
                QStringLiteral("mtu"), QString::number(mtu) });
    if (configured && address) {
        configured = configure(QStringLiteral("adding %1 to %2").arg(*address, m_name),
            { QStringLiteral("address"), QStringLiteral("add"), *address, QStringLiteral("dev"),
                m_name });
    }
    if (configured) {
        configured = configure(QStringLiteral("bringing %1 up").arg(m_name),
            { QStringLiteral("link"), QStringLiteral("set"), QStringLiteral("dev"), m_name,
                QStringLiteral("up") });
    }
    return configured;
}

Status TapDevice::moveInto(
    qint64 pid, const QString &interfaceName, const std::optional<QString> &address, int mtu)
{
    if (m_moved) {
        return refusal(QStringLiteral("already_moved"),
            QStringLiteral("TAP %1 was already moved into a sandbox").arg(m_name));
    }
    auto parsedAddress = checkMoveArguments(pid, interfaceName, address, mtu);
    if (!parsedAddress)
        return parsedAddress.error();
    util::Fd target;
    Result<NamespaceId> targetId = moveTarget(pid, target);
    if (!targetId)
        return targetId.error();
    auto tools = findMoveTools();
    if (!tools)
        return tools.error();
    const QString pidText = QString::number(pid);
    const QStringList enter { QStringLiteral("-t"), pidText, QStringLiteral("-n"),
        QStringLiteral("--"), tools->ip };

    QElapsedTimer timer;
    timer.start();
    if (Status free = refuseTakenName(tools->nsenter, enter, pidText, interfaceName); !free)
        return free.error();

    const QString hostName = m_name;
    Status moved = runStep(QStringLiteral("tap_move"),
        QStringLiteral("moving TAP %1 into the namespace of process %2 as %3")
            .arg(hostName, pidText, interfaceName),
        tools->ip,
        { QStringLiteral("link"), QStringLiteral("set"), QStringLiteral("dev"), hostName,
            QStringLiteral("netns"), pidText, QStringLiteral("name"), interfaceName });
    if (!moved)
        return rollBack(moved.error(), pid, tools->nsenter, tools->ip);
    // PID reuse between the checks and the move would land it elsewhere.
    Result<NamespaceId> landed = deviceNamespace();
    if (!landed)
        return rollBack(landed.error(), pid, tools->nsenter, tools->ip);
    if (!(*landed == *targetId)) {
        return rollBack(Error::make(QStringLiteral("tap_move"),
                            QStringLiteral("TAP %1 did not arrive in the namespace of "
                                           "process %2")
                                .arg(hostName, pidText)),
            pid, tools->nsenter, tools->ip);
    }
    m_name = interfaceName;
    const std::optional<QString> addressText
        = *parsedAddress ? std::optional<QString>((*parsedAddress)->toString()) : std::nullopt;
    if (Status configured = configureMoved(tools->nsenter, enter, mtu, addressText); !configured)
        return rollBack(configured.error(), pid, tools->nsenter, tools->ip);

    m_moved = true;
    qCInfo(lcDevice).noquote().nospace()
        << "TAP " << hostName << " moved into the namespace of process " << pid << " as " << m_name
        << " (mtu " << mtu << ", address " << addressText.value_or(QStringLiteral("none"))
        << ") in " << timer.elapsed() << " ms";
    return {};
}

Error TapDevice::rollBack(const Error &cause, qint64 pid, const QString &nsenter, const QString &ip)
{
    const auto withOutcome = [&cause](const QString &outcome) {
        return Error::make(
            cause.code, QStringLiteral("%1; %2").arg(cause.message, outcome), cause.permanent);
    };
    const auto refreshName = [this] {
        if (Result<QString> current = kernelName())
            m_name = *current;
    };

    Result<bool> home = inHomeNamespace();
    if (!home)
        return withOutcome(
            QStringLiteral("where the TAP is now is unknown: %1").arg(home.error().message));
    refreshName();
    if (*home)
        return withOutcome(QStringLiteral("TAP %1 stayed in this namespace").arg(m_name));

    // Back under the template, not the old name: another TAP may have been
    // given that name since this one left.
    const QString stranded = m_name;
    Status back = runStep(QStringLiteral("tap_move"),
        QStringLiteral("moving TAP %1 back").arg(stranded), nsenter,
        { QStringLiteral("-t"), QString::number(pid), QStringLiteral("-n"), QStringLiteral("--"),
            ip, QStringLiteral("link"), QStringLiteral("set"), QStringLiteral("dev"), stranded,
            QStringLiteral("netns"), QString::number(::getpid()), QStringLiteral("name"),
            m_nameTemplate });
    home = inHomeNamespace();
    refreshName();
    if (home && *home) {
        qCWarning(lcDevice).noquote().nospace()
            << "moving TAP into the namespace of process " << pid << " failed; moved it back as "
            << m_name << ": " << cause.message;
        return withOutcome(QStringLiteral("TAP moved back to this namespace as %1").arg(m_name));
    }
    const QString why = !back ? back.error().message
                              : (home ? QStringLiteral("it did not arrive") : home.error().message);
    qCWarning(lcDevice).noquote().nospace()
        << "TAP " << stranded << " left in the namespace of process " << pid << ": " << why;
    return withOutcome(QStringLiteral("moving it back failed (%1); TAP %2 is left in the namespace "
                                      "of process %3 and disappears when this device is closed")
                           .arg(why, stranded, QString::number(pid)));
}

} // namespace cloop::device::l2
