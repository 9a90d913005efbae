#include "hub/server/devicetester.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "hub/server/forwarderreach.h"
#include "hub/storage/forwarderstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

#include <chrono>

namespace cloop::hub {

namespace {

// A segment's forwarder reports in JSON; a USB one answers a device list.
Result<QJsonObject> segmentReport(const QByteArray &report)
{
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(report, &parseError);
    if (!document.isObject())
        return Error::make(QStringLiteral("bad_test_report"),
            QStringLiteral("the forwarder's test report is not a JSON object: %1")
                .arg(parseError.errorString()));
    return document.object();
}

} // namespace

DeviceTester::DeviceTester(
    ForwarderReach &forwarders, std::chrono::milliseconds timeout, QObject *parent)
    : QObject(parent)
    , m_forwarders(forwarders)
    , m_timeout(timeout)
{ }

ApiResponse DeviceTester::test(const ForwarderRecord &forwarder, const QJsonObject &forwarderJson)
{
    if (forwarder.isRevoked())
        return ApiResponse::fromError(Error::make(QStringLiteral("forwarder_revoked"),
            QStringLiteral("forwarder %1 (%2) was revoked").arg(forwarder.id).arg(forwarder.name)));
    if (!m_forwarders.isReachable(forwarder.id))
        return ApiResponse::fromError(Error::make(QStringLiteral("forwarder_offline"),
            QStringLiteral("forwarder %1 (%2) is not connected; its device "
                           "cannot be tested")
                .arg(forwarder.id)
                .arg(forwarder.name)));
    const bool usb = forwarder.device.kind == protocol::DeviceSpec::Kind::Usb;
    const protocol::ChannelOpen opening = usb
        ? protocol::ChannelOpen { protocol::UsbOpen {
            protocol::UsbOpen::Purpose::Test, 0, 0, {}, std::nullopt } }
        : protocol::ChannelOpen { protocol::DeviceTestOpen {} };
    auto opened = m_forwarders.openChannel(forwarder.id, opening);
    if (!opened)
        return ApiResponse::fromError(opened.error().code == QLatin1String("forwarder_offline")
                ? opened.error()
                : Error::make(QStringLiteral("forwarder_busy"), opened.error().message));
    QPointer<tunnel::Channel> channel(*opened);
    // The forwarder takes the channel as soon as its message arrives: the
    // time to its answer is one round trip over the tunnel.
    auto roundTrip = std::make_shared<std::optional<qint64>>();
    connect(*opened, &tunnel::Channel::opened, *opened,
        [roundTrip, asked = std::chrono::steady_clock::now()] {
            *roundTrip = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - asked)
                             .count();
        });
    if (usb) {
        connect(*opened, &tunnel::Channel::opened, *opened,
            [channel] { channel->write(device::usb::usbip::encodeDevlistRequest()); });
    }

    // The deferred answer and what gathers it live until the channel ends
    // or the time is up, whichever comes first.
    auto deferred = std::make_shared<DeferredResponse>();
    auto report = std::make_shared<QByteArray>();
    auto *timer = new QTimer(this);
    timer->setSingleShot(true);
    const qint64 id = forwarder.id;
    const auto finish = [deferred, timer, channel](ApiResponse response) {
        deferred->finish(std::move(response));
        timer->deleteLater();
        if (channel)
            channel->disconnect(timer);
    };
    connect(timer, &QTimer::timeout, this, [finish, channel, id, timeout = m_timeout] {
        if (channel)
            channel->close(protocol::CloseCode::Refused, QStringLiteral("the test took too long"));
        finish(ApiResponse::error(504, QStringLiteral("test_timeout"),
            QStringLiteral("forwarder %1 did not report within %2 s")
                .arg(id)
                .arg(timeout.count() / 1000.0)));
    });
    connect(*opened, &tunnel::Channel::readyRead, timer, [channel, report, finish] {
        if (!channel)
            return;
        *report += channel->readAll();
        if (report->size() > kMaxReportBytes) {
            channel->close(
                protocol::CloseCode::Overflow, QStringLiteral("the test report is too large"));
            finish(ApiResponse::error(502, QStringLiteral("bad_test_report"),
                QStringLiteral("the forwarder's test report exceeds %1 bytes")
                    .arg(kMaxReportBytes)));
        }
    });
    connect(*opened, &tunnel::Channel::closed, timer,
        [report, finish, forwarderJson, usb, roundTrip](
            protocol::CloseCode code, const QString &reason) {
            if (code != protocol::CloseCode::Normal) {
                finish(ApiResponse::error(502, QStringLiteral("test_failed"),
                    reason.isEmpty() ? QStringLiteral("the forwarder ended the test") : reason));
                return;
            }
            auto decoded = usb ? usbReport(*report) : segmentReport(*report);
            if (!decoded) {
                finish(ApiResponse::error(
                    502, QStringLiteral("bad_test_report"), decoded.error().message));
                return;
            }
            QJsonObject answer { { QStringLiteral("forwarder"), forwarderJson },
                { QStringLiteral("report"), *decoded } };
            if (*roundTrip)
                answer.insert(QStringLiteral("round_trip_us"), **roundTrip);
            finish(ApiResponse::ok(answer));
        });
    timer->start(m_timeout);
    qCInfo(lcHub).noquote() << "testing the device of forwarder" << forwarder.id << forwarder.name;
    ApiResponse pending;
    pending.deferred = deferred;
    return pending;
}

Result<QJsonObject> DeviceTester::usbReport(const QByteArray &devlistReply)
{
    namespace usbip = device::usb::usbip;
    auto decoded = usbip::decodeDevlistReply(devlistReply);
    if (!decoded)
        return Error::make(QStringLiteral("bad_test_report"),
            QStringLiteral("the forwarder's device list is malformed: %1")
                .arg(decoded.error().message));
    if (!*decoded)
        return Error::make(QStringLiteral("bad_test_report"),
            QStringLiteral("the forwarder's device list ended after %1 bytes")
                .arg(devlistReply.size()));
    if ((*decoded)->consumed != devlistReply.size())
        return Error::make(QStringLiteral("bad_test_report"),
            QStringLiteral("the forwarder sent %1 bytes after its device list")
                .arg(devlistReply.size() - (*decoded)->consumed));
    const auto hex = [](uint value, int digits) {
        return QStringLiteral("%1").arg(value, digits, 16, QLatin1Char('0'));
    };
    QJsonArray devices;
    for (const usbip::DeviceRecord &record : (*decoded)->message) {
        QJsonArray interfaces;
        for (const usbip::InterfaceRecord &interface : record.interfaces)
            interfaces.append(
                QJsonObject { { QStringLiteral("class"), hex(interface.interfaceClass, 2) },
                    { QStringLiteral("subclass"), hex(interface.interfaceSubClass, 2) },
                    { QStringLiteral("protocol"), hex(interface.interfaceProtocol, 2) } });
        devices.append(QJsonObject { { QStringLiteral("busid"), QString::fromLatin1(record.busId) },
            { QStringLiteral("path"), QString::fromUtf8(record.path) },
            { QStringLiteral("vendor_id"), hex(record.vendorId, 4) },
            { QStringLiteral("product_id"), hex(record.productId, 4) },
            { QStringLiteral("bcd_device"), hex(record.bcdDevice, 4) },
            { QStringLiteral("speed"), usbip::describeSpeed(record.speed) },
            { QStringLiteral("class"), hex(record.deviceClass, 2) },
            { QStringLiteral("configuration"), int(record.configurationValue) },
            { QStringLiteral("interfaces"), interfaces } });
    }
    QJsonObject report { { QStringLiteral("kind"), QStringLiteral("usb") },
        { QStringLiteral("ok"), !devices.isEmpty() }, { QStringLiteral("devices"), devices } };
    if (devices.isEmpty())
        report.insert(QStringLiteral("problem"),
            QStringLiteral("the forwarder exports no device: its USB device is unplugged"));
    return report;
}

} // namespace cloop::hub
