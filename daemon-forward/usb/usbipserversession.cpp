#include "daemon-forward/usb/usbipserversession.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/device/usb/usbsysfs.h"
#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsocketpump.h"
#include "daemon-forward/usb/usbdevicewatch.h"
#include "daemon-forward/usb/usbipexport.h"

namespace cloop::forward {

namespace usbip = device::usb::usbip;

UsbipServerSession::UsbipServerSession(tunnel::Channel *channel, UsbDeviceWatch &device,
    Purpose purpose, UsbExportLedger *exports, QObject *parent)
    : QObject(parent)
    , m_channel(channel)
    , m_device(device)
    , m_purpose(purpose)
    , m_exports(exports)
{
    connect(channel, &tunnel::Channel::readyRead, this, &UsbipServerSession::onReadable);
    connect(channel, &tunnel::Channel::closed, this,
        [this](protocol::CloseCode code, const QString &reason) {
            if (!m_pump)
                finish(tunnel::describeClose(code, reason));
        });
    connect(&device, &UsbDeviceWatch::presenceChanged, this, [this](const QString &busId) {
        if (m_export && busId != m_export->busId())
            stop(QStringLiteral("the USB device was unplugged"));
    });
    if (channel->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &UsbipServerSession::onReadable, Qt::QueuedConnection);
}

UsbipServerSession::~UsbipServerSession()
{
    // The pump closes the kernel's connection before the device goes back
    // (m_export, after this body). Its last word is not for this session.
    if (m_pump) {
        m_pump->disconnect(this);
        delete m_pump;
        m_pump = nullptr;
    }
}

void UsbipServerSession::onReadable()
{
    if (m_ended || m_answered || !m_channel)
        return;
    // One request per connection; nothing else may come before the answer.
    m_request += m_channel->read(usbip::kImportRequestSize + 1 - m_request.size());
    auto decoded = usbip::decodeOpeningRequest(m_request);
    if (!decoded) {
        m_answered = true;
        m_channel->close(protocol::CloseCode::Refused, decoded.error().message);
        finish(decoded.error().message);
        return;
    }
    if (!*decoded)
        return;
    const usbip::OpeningRequest request = (*decoded)->message;
    if ((*decoded)->consumed != m_request.size()) {
        m_answered = true;
        const QString reason
            = QStringLiteral("bytes followed the opening request before its answer");
        m_channel->close(protocol::CloseCode::Refused, reason);
        finish(reason);
        return;
    }
    m_answered = true;
    if (request.kind == usbip::OpeningRequest::Kind::Devlist) {
        QList<usbip::DeviceRecord> devices;
        if (!m_device.busId().isEmpty()) {
            auto record = device::usb::readDeviceRecord(m_device.roots(), m_device.busId());
            if (record)
                devices.append(*record);
            else
                qCWarning(lcForward).noquote()
                    << "cannot list" << m_device.busId() << ":" << record.error().message;
        }
        m_channel->write(usbip::encodeDevlistReply(devices));
        m_channel->close(protocol::CloseCode::Normal, {});
        finish(QStringLiteral("listed %1 device(s)").arg(devices.size()));
        return;
    }
    const QString asked = QString::fromLatin1(request.busId);
    const QString carried = m_device.busId();
    if (m_purpose == Purpose::Test)
        return refuseImport(quint32(usbip::OpStatus::NotAvailable),
            QStringLiteral("a test only reads the device list; it imports nothing"));
    if (carried.isEmpty())
        return refuseImport(quint32(usbip::OpStatus::NoDevice),
            QStringLiteral("the USB device %1 is unplugged").arg(m_device.spec().describe()));
    if (asked != carried)
        return refuseImport(quint32(usbip::OpStatus::NoDevice),
            QStringLiteral("bus id %1 is not the device this forwarder carries (it carries %2)")
                .arg(asked, carried));
    startImport();
}

void UsbipServerSession::startImport()
{
    const QString busId = m_device.busId();
    auto exported = UsbipExport::begin(m_device.roots(), busId, m_exports);
    if (!exported) {
        const bool busy = exported.error().is(ErrorCode::UsbBusy);
        return refuseImport(
            quint32(busy ? usbip::OpStatus::DeviceBusy : usbip::OpStatus::DeviceError),
            exported.error().message);
    }
    m_export = std::move(*exported);
    auto socket = m_export->connect();
    if (!socket)
        return refuseImport(quint32(usbip::OpStatus::DeviceError), socket.error().message);
    // As usbipd: the kernel has its end before the reply goes, and both
    // share one byte stream from here on.
    m_channel->write(usbip::encodeImportReply(usbip::OpStatus::Ok, m_export->record()));
    m_pump = new tunnel::ChannelSocketPump(std::move(*socket), m_channel, this);
    // The socket is the device's kernel, the channel the run's.
    m_pump->setTaps({ [this](QByteArrayView bytes) { m_urbs.fromDevice(bytes); },
        [this](QByteArrayView bytes) { m_urbs.fromRun(bytes); } });
    connect(m_pump, &tunnel::ChannelSocketPump::ended, this, [this](const QString &reason) {
        // The kernel drops the connection first when the device goes; the
        // uevent may come later, so look now to name the right cause.
        m_device.rescan();
        finish(m_device.busId() != m_export->busId()
                ? QStringLiteral("the USB device was unplugged")
                : reason);
    });
    qCInfo(lcForward).noquote() << "USB device" << busId << "imported; devid"
                                << QString::number(m_export->record().deviceId(), 16);
}

void UsbipServerSession::refuseImport(quint32 status, const QString &reason)
{
    qCInfo(lcForward).noquote() << "refused an import:" << reason;
    // A normal close, so the status reaches the consumer before the reason.
    m_channel->write(usbip::encodeImportReply(usbip::OpStatus(status)));
    m_channel->close(protocol::CloseCode::Normal, reason);
    finish(reason);
}

void UsbipServerSession::stop(const QString &reason)
{
    tunnel::Channel *channel = m_channel.data();
    if (m_pump && !m_pump->hasEnded())
        m_pump->stop(reason);
    else if (channel && channel->state() != tunnel::Channel::State::Closed)
        channel->close(protocol::CloseCode::Normal, reason);
    finish(reason);
}

void UsbipServerSession::finish(const QString &reason)
{
    if (m_ended)
        return;
    m_ended = true;
    if (m_channel)
        m_channel->disconnect(this);
    m_device.disconnect(this);
    if (m_pump && !m_pump->hasEnded())
        m_pump->stop(reason);
    // The kernel's connection is closed; now the device goes back.
    m_export.reset();
    Q_EMIT ended(reason);
}

} // namespace cloop::forward
