#include "daemon-agent/devices/attachmentledger.h"

#include "common/device/l2/tapdevice.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/util/atomicfile.h"
#include "common/util/fd.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/devices/vhcicontroller.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

namespace cloop::agent {

namespace {

// The file lists a handful of attachments; anything this big is not ours.
constexpr qint64 kMaxFileBytes = 1024 * 1024;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// Copies a name already checked by validateInterfaceName(), which bounds it
// below IFNAMSIZ.
void setName(ifreq &request, const QString &name)
{
    const QByteArray bytes = name.toLatin1();
    std::memcpy(request.ifr_name, bytes.constData(),
        std::size_t(qMin<qsizetype>(bytes.size(), IFNAMSIZ - 1)));
}

// The interface's index under `name`, 0 when there is none, -errno else.
int indexOf(int socketFd, const QString &name)
{
    ifreq request {};
    setName(request, name);
    if (::ioctl(socketFd, SIOCGIFINDEX, &request) != 0)
        return errno == ENODEV ? 0 : -errno;
    return request.ifr_ifindex;
}

QString ethtoolText(const char *field, std::size_t size)
{
    return QString::fromLatin1(field, qsizetype(::strnlen(field, size)));
}

QString describe(const Attachment &attachment)
{
    return QStringLiteral("%1 (run %2, binding %3)")
        .arg(attachment.hostName)
        .arg(attachment.runId)
        .arg(attachment.bindingId);
}

QJsonObject toJson(const Attachment &attachment)
{
    return QJsonObject { { QStringLiteral("run_id"), attachment.runId },
        { QStringLiteral("binding_id"), attachment.bindingId },
        { QStringLiteral("kind"), attachment.kind },
        { QStringLiteral("host_name"), attachment.hostName },
        { QStringLiteral("sandbox_name"), attachment.sandboxName },
        { QStringLiteral("sandbox_pid"), attachment.sandboxPid },
        { QStringLiteral("vhci_port"), attachment.vhciPort },
        { QStringLiteral("usb_devid"), qint64(attachment.usbDeviceId) } };
}

Status validate(const Attachment &attachment)
{
    const auto invalid = [](const QString &why) {
        return Error::make(QStringLiteral("invalid_attachment"),
            QStringLiteral("attachment refused: %1").arg(why), true);
    };
    if (attachment.runId <= 0 || attachment.bindingId <= 0)
        return invalid(QStringLiteral("run and binding ids must be positive"));
    if (attachment.kind.isEmpty())
        return invalid(QStringLiteral("no kind"));
    if (attachment.kind == QLatin1String("usb")) {
        if (attachment.vhciPort < 0 || attachment.vhciPort > 65535)
            return invalid(QStringLiteral("a USB attachment needs its vhci port"));
        if (!device::usb::usbip::isValidBusId(attachment.hostName.toLatin1()))
            return invalid(
                QStringLiteral("\"%1\" is not a USB bus id").arg(attachment.hostName.left(32)));
        return {};
    }
    if (Status name = device::l2::validateInterfaceName(attachment.hostName); !name)
        return invalid(name.error().message);
    if (!attachment.sandboxName.isEmpty()) {
        if (Status name = device::l2::validateInterfaceName(attachment.sandboxName); !name)
            return invalid(name.error().message);
    }
    if (attachment.sandboxPid < 0)
        return invalid(QStringLiteral("a negative process id"));
    return {};
}

// A whole number in the file, or -1: JSON numbers are doubles, and a
// fraction or an out-of-range value is not an id.
qint64 wholeNumber(const QJsonValue &value)
{
    if (!value.isDouble())
        return -1;
    const double number = value.toDouble();
    if (number < 0 || number > 9007199254740992.0 || number != double(qint64(number)))
        return -1;
    return qint64(number);
}

Result<Attachment> fromJson(const QJsonValue &value)
{
    if (!value.isObject())
        return Error::make(QStringLiteral("invalid_attachment"), QStringLiteral("not an object"));
    const QJsonObject object = value.toObject();
    Attachment attachment;
    attachment.runId = wholeNumber(object.value(QLatin1String("run_id")));
    attachment.bindingId = wholeNumber(object.value(QLatin1String("binding_id")));
    attachment.kind = object.value(QLatin1String("kind")).toString();
    attachment.hostName = object.value(QLatin1String("host_name")).toString();
    attachment.sandboxName = object.value(QLatin1String("sandbox_name")).toString();
    attachment.sandboxPid = wholeNumber(object.value(QLatin1String("sandbox_pid")));
    if (object.contains(QLatin1String("vhci_port")))
        attachment.vhciPort
            = int(std::min<qint64>(wholeNumber(object.value(QLatin1String("vhci_port"))), 65536));
    const qint64 devid = wholeNumber(object.value(QLatin1String("usb_devid")));
    attachment.usbDeviceId = devid >= 0 && devid <= 0xffffffffLL ? quint32(devid) : 0;
    if (Status valid = validate(attachment); !valid)
        return valid.error();
    return attachment;
}

} // namespace

Result<HostInterface> AttachmentLedger::probeHostInterface(const QString &name)
{
    if (Status valid = device::l2::validateInterfaceName(name); !valid)
        return valid.error();
    util::Fd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!control.valid())
        return Error::make(
            QStringLiteral("probe_failed"), QStringLiteral("socket: %1").arg(errnoText(errno)));
    HostInterface found;
    const int index = indexOf(control.get(), name);
    if (index < 0) {
        return Error::make(QStringLiteral("probe_failed"),
            QStringLiteral("cannot look up interface %1: %2").arg(name, errnoText(-index)));
    }
    if (index == 0)
        return found;
    found.exists = true;

    ethtool_drvinfo info {};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq request {};
    setName(request, name);
    request.ifr_data = reinterpret_cast<char *>(&info);
    if (::ioctl(control.get(), SIOCETHTOOL, &request) != 0) {
        const int error = errno;
        if (error == ENODEV)
            return HostInterface {};
        // No driver information (lo, some virtual kinds): not a TAP, whose
        // driver always answers.
        if (error == EOPNOTSUPP) {
            found.driver = QStringLiteral("unknown");
            return found;
        }
        return Error::make(QStringLiteral("probe_failed"),
            QStringLiteral("cannot ask the driver of %1: %2").arg(name, errnoText(error)));
    }
    found.driver = ethtoolText(info.driver, sizeof info.driver);
    // The tun driver says in bus_info which of its two kinds a device is.
    found.tap = found.driver == QLatin1String("tun")
        && ethtoolText(info.bus_info, sizeof info.bus_info) == QLatin1String("tap");
    return found;
}

Status AttachmentLedger::removeIdleTap(const QString &name)
{
    if (Status valid = device::l2::validateInterfaceName(name); !valid)
        return valid.error();
    const auto failure = [&name](const auto code, const QString &why) {
        return Error::make(code, QStringLiteral("TAP %1 not removed: %2").arg(name, why));
    };
    util::Fd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!control.valid())
        return failure(
            QStringLiteral("tap_remove"), QStringLiteral("socket: %1").arg(errnoText(errno)));
    const int before = indexOf(control.get(), name);
    if (before == 0)
        return failure(ErrorCode::InterfaceGone, QStringLiteral("it no longer exists"));
    if (before < 0)
        return failure(QStringLiteral("tap_remove"), errnoText(-before));

    util::Fd tun(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (!tun.valid())
        return failure(
            QStringLiteral("tap_remove"), QStringLiteral("/dev/net/tun: %1").arg(errnoText(errno)));
    ifreq request {};
    setName(request, name);
    // Exactly what create() asks for (single queue): the kernel attaches to
    // an existing interface of that name only when it is such a TAP and
    // nothing holds it, checked under its own lock.
    request.ifr_flags = IFF_TAP | IFF_NO_PI;
    if (::ioctl(tun.get(), TUNSETIFF, &request) != 0) {
        const int error = errno;
        if (error == EINVAL)
            return failure(
                QStringLiteral("not_a_tap"), QStringLiteral("it is not a (single-queue) TAP"));
        if (error == EBUSY)
            return failure(
                QStringLiteral("tap_in_use"), QStringLiteral("a running process holds it"));
        return failure(
            QStringLiteral("tap_remove"), QStringLiteral("TUNSETIFF: %1").arg(errnoText(error)));
    }
    // TUNSETIFF creates what it does not find: had the TAP vanished in the
    // meantime, this one is new, and closing it (it is not persistent)
    // takes it away again.
    if (indexOf(control.get(), name) != before)
        return failure(ErrorCode::InterfaceGone, QStringLiteral("it vanished while being removed"));
    if (::ioctl(tun.get(), TUNSETPERSIST, 0) != 0) {
        return failure(QStringLiteral("tap_remove"),
            QStringLiteral("TUNSETPERSIST: %1").arg(errnoText(errno)));
    }
    // The last holder of a TAP that is not persistent lets go: the kernel
    // unregisters it before close() returns.
    tun.reset();
    ifreq byIndex {};
    byIndex.ifr_ifindex = before;
    if (::ioctl(control.get(), SIOCGIFNAME, &byIndex) == 0)
        return failure(
            QStringLiteral("tap_remove"), QStringLiteral("it is still there after letting go"));
    return {};
}

AttachmentLedger::AttachmentLedger(QString workRoot, const device::SysfsRoot &kernel)
    : AttachmentLedger(std::move(workRoot), &AttachmentLedger::probeHostInterface,
        &AttachmentLedger::removeIdleTap,
        [kernel](int port, quint32 deviceId) { return releaseUsbPort(kernel, port, deviceId); })
{ }

AttachmentLedger::AttachmentLedger(
    QString workRoot, InterfaceProbe probe, TapRemover remover, UsbPortReleaser releaser)
    : m_workRoot(std::move(workRoot))
    , m_probe(std::move(probe))
    , m_remover(std::move(remover))
    , m_releaser(releaser ? std::move(releaser) : [](int port, quint32 deviceId) {
        return releaseUsbPort(device::SysfsRoot(), port, deviceId);
    })
{
    readPrevious();
}

Result<bool> AttachmentLedger::releaseUsbPort(
    const device::SysfsRoot &kernel, int port, quint32 deviceId)
{
    const VhciController vhci(kernel);
    if (!vhci.isLoaded())
        return false;
    const auto state = vhci.port(port);
    if (!state || state->isFree())
        return false;
    if (state->deviceId != deviceId)
        return Error::make(QStringLiteral("port_reused"),
            QStringLiteral("vhci port %1 holds another device now (devid %2)")
                .arg(port)
                .arg(state->deviceId, 8, 16, QLatin1Char('0')));
    if (Status detached = vhci.detach(port); !detached)
        return detached.error();
    return true;
}

QString AttachmentLedger::filePath() const
{
    return m_workRoot + QLatin1Char('/') + fileName();
}

void AttachmentLedger::readPrevious()
{
    QFile file(filePath());
    if (!file.exists())
        return;
    const auto problem = [this](const QString &why) {
        m_readProblems.append(
            QStringLiteral("%1: %2; nothing it lists was touched").arg(fileName(), why));
    };
    if (!file.open(QIODevice::ReadOnly))
        return problem(QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    const QByteArray contents = file.read(kMaxFileBytes + 1);
    if (contents.size() > kMaxFileBytes)
        return problem(QStringLiteral("larger than %1 bytes").arg(kMaxFileBytes));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(contents, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return problem(QStringLiteral("not JSON (%1 at byte %2)")
                           .arg(parseError.errorString())
                           .arg(parseError.offset));
    const QJsonValue list = document.object().value(QLatin1String("attachments"));
    if (!document.isObject() || !list.isArray())
        return problem(QStringLiteral("no list of attachments in it"));
    const QJsonArray entries = list.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        Result<Attachment> entry = fromJson(entries.at(i));
        if (entry) {
            m_inherited.append(*entry);
        } else {
            m_readProblems.append(
                QStringLiteral("%1: entry %2 is unreadable and was left alone: %3")
                    .arg(fileName())
                    .arg(i + 1)
                    .arg(entry.error().message));
        }
    }
}

Status AttachmentLedger::write() const
{
    QJsonArray entries;
    // The previous process's stay listed until dealt with, so a crash
    // before recoverLeftovers() does not lose them.
    for (const Attachment &attachment : m_inherited)
        entries.append(toJson(attachment));
    for (const Attachment &attachment : m_attachments)
        entries.append(toJson(attachment));
    return util::writeFileAtomically(filePath(),
        QJsonDocument(QJsonObject { { QStringLiteral("attachments"), entries } }).toJson(), 0600);
}

Status AttachmentLedger::record(const Attachment &attachment)
{
    if (Status valid = validate(attachment); !valid)
        return valid;
    const QList<Attachment> before = m_attachments;
    const auto same = [&attachment](const Attachment &other) {
        return other.runId == attachment.runId && other.bindingId == attachment.bindingId;
    };
    m_attachments.removeIf(same);
    m_attachments.append(attachment);
    if (Status written = write(); !written) {
        m_attachments = before;
        return Error::make(written.error().code,
            QStringLiteral("cannot record attachment %1: %2")
                .arg(describe(attachment), written.error().message));
    }
    return {};
}

Status AttachmentLedger::forget(qint64 runId, qint64 bindingId)
{
    const qsizetype removed = m_attachments.removeIf([&](const Attachment &attachment) {
        return attachment.runId == runId && attachment.bindingId == bindingId;
    });
    if (removed == 0)
        return {};
    if (Status written = write(); !written) {
        return Error::make(written.error().code,
            QStringLiteral("the attachment file still lists run %1, binding %2: %3")
                .arg(runId)
                .arg(bindingId)
                .arg(written.error().message));
    }
    return {};
}

AttachmentLedger::Recovery AttachmentLedger::recoverLeftovers()
{
    Recovery recovery;
    recovery.skipped = std::exchange(m_readProblems, {});
    QSet<QString> current;
    for (const Attachment &attachment : std::as_const(m_attachments))
        current.insert(attachment.hostName);

    for (const Attachment &leftover : std::as_const(m_inherited)) {
        const auto skip = [&](const QString &why) {
            recovery.skipped.append(QStringLiteral("%1: %2").arg(describe(leftover), why));
        };
        if (leftover.kind == QLatin1String("usb")) {
            // Usually the port went with the previous process's end of the
            // connection; only a port still holding that device is freed.
            Result<bool> released = m_releaser(leftover.vhciPort, leftover.usbDeviceId);
            if (!released)
                skip(released.error().message);
            else if (*released)
                recovery.removed.append(
                    describe(leftover) + QStringLiteral(" on vhci port %1").arg(leftover.vhciPort));
            continue;
        }
        if (leftover.kind != QLatin1String("l2")) {
            skip(QStringLiteral("kind \"%1\" leaves nothing on the host to remove")
                     .arg(leftover.kind));
            continue;
        }
        // The kernel hands out the lowest free number, so this process may
        // well have been given the same name.
        if (current.contains(leftover.hostName)) {
            skip(QStringLiteral("the name is this agent's again, for an attachment it made since"));
            continue;
        }
        Result<HostInterface> found = m_probe(leftover.hostName);
        if (!found) {
            skip(QStringLiteral("cannot tell what it is: %1").arg(found.error().message));
            continue;
        }
        // The usual case: a TAP that is never made persistent went with the
        // process that held it. Nothing was left, so nothing is reported.
        if (!found->exists) {
            qCDebug(lcAgent).noquote()
                << "TAP" << describe(leftover) << "went with the previous agent process";
            continue;
        }
        if (!found->tap) {
            skip(QStringLiteral("the name now belongs to another kind of interface (%1)")
                     .arg(found->driver));
            continue;
        }
        if (Status removed = m_remover(leftover.hostName); !removed) {
            if (!removed.error().is(ErrorCode::InterfaceGone))
                skip(removed.error().message);
            continue;
        }
        recovery.removed.append(describe(leftover));
    }
    m_inherited.clear();
    if (Status written = write(); !written)
        recovery.skipped.append(
            QStringLiteral("%1: cannot be rewritten: %2").arg(fileName(), written.error().message));

    for (const QString &removed : std::as_const(recovery.removed))
        qCInfo(lcAgent).noquote() << "removed" << removed << "left by a previous agent process";
    for (const QString &skipped : std::as_const(recovery.skipped))
        qCWarning(lcAgent).noquote() << "left alone after a restart:" << skipped;
    return recovery;
}

} // namespace cloop::agent
