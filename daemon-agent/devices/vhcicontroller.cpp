#include "daemon-agent/devices/vhcicontroller.h"

#include "common/device/usb/usbsysfs.h"

#include <QRegularExpression>

namespace cloop::agent {

namespace {

// "hs  0003 004 000 00000000 000000 0-0": split on whitespace, since a
// controller that is not ready prints a wider sockfd column.
std::optional<VhciController::Port> parseLine(QStringView line)
{
    const auto fields = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (fields.size() < 7 || (fields[0] != u"hs" && fields[0] != u"ss"))
        return std::nullopt;
    bool ok[5] = {};
    VhciController::Port port;
    port.superSpeedHub = fields[0] == u"ss";
    port.number = fields[1].toInt(&ok[0], 10);
    port.state = fields[2].toInt(&ok[1], 10);
    port.speed = fields[3].toInt(&ok[2], 10);
    port.deviceId = fields[4].toUInt(&ok[3], 16);
    (void)fields[5].toULongLong(&ok[4], 10);
    port.localBusId = fields[6].toString();
    for (bool each : ok) {
        if (!each)
            return std::nullopt;
    }
    return port;
}

} // namespace

bool VhciController::isLoaded() const
{
    return m_roots.exists(kDirectory.toString() + QLatin1String("/attach"));
}

Result<QList<VhciController::Port>> VhciController::ports() const
{
    if (!isLoaded())
        return Error::make(QStringLiteral("vhci_missing"),
            QStringLiteral("the kernel's vhci-hcd driver is not loaded (modprobe vhci-hcd)"));
    QList<Port> out;
    const QString dir = kDirectory.toString();
    for (const QString &name : m_roots.list(dir)) {
        if (name != QLatin1String("status") && !name.startsWith(QLatin1String("status.")))
            continue;
        const auto text = m_roots.readAttribute(dir + QLatin1Char('/') + name, 256 * 1024);
        if (!text)
            return Error::make(QStringLiteral("vhci_unreadable"),
                QStringLiteral("cannot read %1/%2").arg(dir, name));
        for (const QStringView line : QStringView(*text).split(QLatin1Char('\n'))) {
            if (auto port = parseLine(line))
                out.append(*port);
        }
    }
    return out;
}

std::optional<VhciController::Port> VhciController::port(int number) const
{
    auto all = ports();
    if (!all)
        return std::nullopt;
    for (const Port &port : std::as_const(*all)) {
        if (port.number == number)
            return port;
    }
    return std::nullopt;
}

Result<int> VhciController::attach(int socketFd, quint32 deviceId, quint32 speed) const
{
    if (speed < 1 || speed > 6)
        return Error::make(QStringLiteral("usb_speed_unsupported"),
            QStringLiteral("the device reports speed %1, which vhci_hcd cannot attach").arg(speed));
    auto all = ports();
    if (!all)
        return all.error();
    // The kernel puts the device on the ss hub for speed 5 and up, whatever
    // half the port number is in; detach and status go by the number, so
    // the number must come from the matching hub.
    const bool superSpeed = speed >= 5;
    Error last = Error::make(QStringLiteral("vhci_no_free_port"),
        QStringLiteral("every %1 port of vhci_hcd is in use")
            .arg(superSpeed ? QStringLiteral("SuperSpeed") : QStringLiteral("high-speed")));
    for (const Port &port : std::as_const(*all)) {
        if (port.superSpeedHub != superSpeed || !port.isFree())
            continue;
        const QByteArray line = QStringLiteral("%1 %2 %3 %4")
                                    .arg(port.number)
                                    .arg(socketFd)
                                    .arg(deviceId)
                                    .arg(speed)
                                    .toLatin1();
        Status attached
            = m_roots.writeAttribute(kDirectory.toString() + QLatin1String("/attach"), line);
        if (attached)
            return port.number;
        last = attached.error();
        // Taken between the read and the write (EBUSY): the next one.
        if (!last.message.contains(QLatin1String("busy"), Qt::CaseInsensitive))
            return last;
    }
    return last;
}

Status VhciController::keepHostDriversOff() const
{
    static const QRegularExpression rootHub(QStringLiteral("\\Ausb[0-9]+\\z"));
    // Every controller: vhci_hcd.0, vhci_hcd.1, …
    const QString platform = QStringLiteral("/sys/devices/platform");
    for (const QString &controller : m_roots.list(platform)) {
        if (!controller.startsWith(QLatin1String("vhci_hcd.")))
            continue;
        for (const QString &hub : m_roots.list(platform + QLatin1Char('/') + controller)) {
            const QString setting = QStringLiteral("%1/%2/%3/interface_authorized_default")
                                        .arg(platform, controller, hub);
            if (!rootHub.match(hub).hasMatch() || !m_roots.exists(setting))
                continue;
            if (m_roots.readAttribute(setting) == QLatin1String("0"))
                continue;
            if (Status kept = m_roots.writeAttribute(setting, "0"); !kept)
                return kept;
        }
    }
    return {};
}

Status VhciController::authorizeInterfaces(const QString &busId) const
{
    for (const QString &name : device::usb::listInterfaces(m_roots, busId)) {
        const QString authorized
            = device::usb::kUsbDevicesDir + QLatin1Char('/') + name + QLatin1String("/authorized");
        if (!m_roots.exists(authorized) || m_roots.readAttribute(authorized) == QLatin1String("1"))
            continue;
        if (Status done = m_roots.writeAttribute(authorized, "1"); !done)
            return done;
    }
    return {};
}

Status VhciController::detach(int port) const
{
    return m_roots.writeAttribute(
        kDirectory.toString() + QLatin1String("/detach"), QByteArray::number(port));
}

} // namespace cloop::agent
