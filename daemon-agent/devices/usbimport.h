#pragma once

#include "common/device/sysfsroot.h"
#include "daemon-agent/devices/vhcicontroller.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace cloop::tunnel {
class Channel;
class ChannelSocketPump;
} // namespace cloop::tunnel

namespace cloop::agent {

// The agent's half of a forwarded USB device: the client side of the
// USB/IP handshake over the device channel (OP_REQ_IMPORT of the bus id the
// hub named, the reply checked), then one end of a socketpair handed to
// vhci_hcd on a free port of the device's speed, and the bytes copied
// between it and the channel. Ready once the kernel has enumerated the
// device and its node exists under /dev/bus/usb. Ends (once) when the
// forwarder refuses, the stream ends, the kernel drops the port, or
// stop() is called; the port is freed on the way out.
class UsbImport final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UsbImport)

public:
    enum class State
    {
        Requesting,
        Enumerating,
        Ready,
        Ended
    };

    // How long the forwarder's answer and the kernel's enumeration may take.
    static constexpr int kEnumerationTimeoutMs = 15'000;
    // How long a device whose node exists may take to be configured.
    static constexpr int kConfigurationWaitMs = 3'000;

    UsbImport(tunnel::Channel *channel, QString busId, device::SysfsRoot roots,
        QObject *parent = nullptr);
    ~UsbImport() override;

    // Sends the import request.
    void start();
    void stop(const QString &reason);

    State state() const { return m_state; }
    bool hasEnded() const { return m_state == State::Ended; }
    int vhciPort() const { return m_port; }
    quint32 deviceId() const { return m_deviceId; }
    // Once ready: the device's bus id on this machine ("3-1") and its node
    // ("/dev/bus/usb/003/002", a kernel path; SysfsRoot maps it).
    QString localBusId() const { return m_localBusId; }
    QString nodePath() const { return m_nodePath; }

Q_SIGNALS:
    void ready();
    // Once; the port is free again by then.
    void ended(const QString &reason);

private:
    void onReadable();
    void attach(quint32 deviceId, quint32 speed);
    void checkEnumerated();
    // A configuration chosen, and every interface of it made. Takes the
    // device's lock in the kernel: never on the thread that pumps.
    static bool isConfigured(const device::SysfsRoot &roots, const QString &localBusId);
    // The look from another thread is back: settled, the device is ready.
    void probed(
        const QString &localBusId, const QString &node, bool settled, const QString &problem);
    void fail(const QString &reason);

    QPointer<tunnel::Channel> m_channel;
    QString m_busId;
    device::SysfsRoot m_roots;
    VhciController m_vhci;
    State m_state = State::Requesting;
    QByteArray m_reply;
    QString m_refusal; // the status of a refused import, until the close says why
    tunnel::ChannelSocketPump *m_pump = nullptr;
    int m_port = -1;
    quint32 m_deviceId = 0;
    QString m_localBusId;
    QString m_nodePath;
    QTimer m_poll;
    QElapsedTimer m_enumerating;
    QElapsedTimer m_nodeSeen;
    bool m_probing = false; // a look at the configuration is under way
};

} // namespace cloop::agent
