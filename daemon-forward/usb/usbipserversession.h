#pragma once

#include "common/device/usb/usbipurbcounter.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace cloop::tunnel {
class Channel;
class ChannelSocketPump;
} // namespace cloop::tunnel

namespace cloop::forward {

class UsbDeviceWatch;
class UsbExportLedger;
class UsbipExport;

// The forwarder's USB/IP server for one channel, with no usbipd and no
// port: it answers the consumer's opening request itself. OP_REQ_DEVLIST
// gets the one carried device (none while it is unplugged).
// OP_REQ_IMPORT of the carried bus id lends the device to usbip-host, hands
// the kernel one end of a socketpair and answers; from then on bytes are
// only copied until either side ends, and the device goes back to its
// driver. An import of any other bus id, of an unplugged or busy device, or
// on a test channel, is refused on the wire with a USB/IP status, and the
// channel closes with the reason.
class UsbipServerSession final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UsbipServerSession)

public:
    enum class Purpose
    {
        Run, // a run's stream: may import
        Test, // the Test button: reads the device list, hands the device to nothing
    };

    // `exports` (may be null) records what is lent to usbip-host.
    UsbipServerSession(tunnel::Channel *channel, UsbDeviceWatch &device, Purpose purpose,
        UsbExportLedger *exports = nullptr, QObject *parent = nullptr);
    ~UsbipServerSession() override;

    bool isImporting() const { return m_pump != nullptr; }
    // The URBs of the import so far, each way.
    const device::usb::usbip::UrbCounter &urbs() const { return m_urbs; }
    // Ends the session (and an import) with this reason.
    void stop(const QString &reason);

Q_SIGNALS:
    void ended(const QString &reason);

private:
    void onReadable();
    void refuseImport(quint32 status, const QString &reason);
    void startImport();
    void finish(const QString &reason);

    QPointer<tunnel::Channel> m_channel;
    UsbDeviceWatch &m_device;
    Purpose m_purpose;
    device::usb::usbip::UrbCounter m_urbs;
    UsbExportLedger *m_exports;
    QByteArray m_request;
    std::unique_ptr<UsbipExport> m_export;
    tunnel::ChannelSocketPump *m_pump = nullptr;
    bool m_answered = false;
    bool m_ended = false;
};

} // namespace cloop::forward
