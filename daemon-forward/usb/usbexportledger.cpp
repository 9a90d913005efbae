#include "daemon-forward/usb/usbexportledger.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/device/usb/usbsysfs.h"
#include "common/util/atomicfile.h"
#include "daemon-forward/usb/usbipexport.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace cloop::forward {

namespace {
constexpr qint64 kMaxFileBytes = 64 * 1024;
} // namespace

UsbExportLedger::UsbExportLedger(QString directory)
    : m_directory(std::move(directory))
{
    QFile file(filePath());
    if (!file.exists())
        return;
    if (!file.open(QIODevice::ReadOnly) || file.size() > kMaxFileBytes) {
        m_readProblem = QStringLiteral("%1 cannot be read").arg(filePath());
        return;
    }
    const QJsonArray list = QJsonDocument::fromJson(file.readAll())
                                .object()
                                .value(QLatin1String("bus_ids"))
                                .toArray();
    for (const QJsonValue &value : list) {
        // Only what can be a bus id ever reaches a sysfs path.
        const QString busId = value.toString();
        if (device::usb::usbip::isValidBusId(busId.toLatin1()))
            m_busIds.insert(busId);
    }
}

QString UsbExportLedger::filePath() const
{
    return m_directory + QLatin1Char('/') + fileName();
}

QStringList UsbExportLedger::busIds() const
{
    QStringList out(m_busIds.cbegin(), m_busIds.cend());
    std::sort(out.begin(), out.end());
    return out;
}

Status UsbExportLedger::record(const QString &busId)
{
    if (!device::usb::usbip::isValidBusId(busId.toLatin1()))
        return Error::make(QStringLiteral("invalid_busid"),
            QStringLiteral("\"%1\" is not a USB bus id").arg(busId.left(32)));
    m_busIds.insert(busId);
    return write();
}

Status UsbExportLedger::forget(const QString &busId)
{
    if (!m_busIds.remove(busId))
        return {};
    return write();
}

Status UsbExportLedger::write() const
{
    QJsonArray list;
    for (const QString &busId : busIds())
        list.append(busId);
    return util::writeFileAtomically(
        filePath(), QJsonDocument(QJsonObject { { QStringLiteral("bus_ids"), list } }).toJson());
}

UsbExportLedger::Recovery UsbExportLedger::giveBackLeftovers(const device::SysfsRoot &roots)
{
    Recovery recovery;
    if (!m_readProblem.isEmpty())
        recovery.leftAlone.append(m_readProblem);
    for (const QString &busId : busIds()) {
        const QString dir = device::usb::kUsbDevicesDir + QLatin1Char('/') + busId;
        const auto driver = roots.resolve(dir + QLatin1String("/driver"));
        if (!driver || QFileInfo(*driver).fileName() != QLatin1String("usbip-host")) {
            m_busIds.remove(busId); // unplugged since, or already back
            continue;
        }
        const auto status = roots.readAttribute(dir + QLatin1String("/usbip_status"));
        if (status != QLatin1String("1")) {
            recovery.leftAlone.append(
                QStringLiteral("%1: a USB/IP connection holds it (usbip_status %2)")
                    .arg(busId, status.value_or(QStringLiteral("unknown"))));
            continue;
        }
        if (Status back = UsbipExport::giveBack(roots, busId); !back) {
            recovery.leftAlone.append(QStringLiteral("%1: %2").arg(busId, back.error().message));
            continue;
        }
        m_busIds.remove(busId);
        recovery.givenBack.append(busId);
    }
    if (Status written = write(); !written)
        recovery.leftAlone.append(
            QStringLiteral("%1 cannot be rewritten: %2").arg(filePath(), written.error().message));
    return recovery;
}

} // namespace cloop::forward
