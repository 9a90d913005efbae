#pragma once

#include "common/daemon/streamlegdial.h"
#include "common/device/l2/tapdevice.h"
#include "common/device/sysfsroot.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "daemon-agent/sandbox/runspec.h"

#include <QDeadlineTimer>
#include <QMap>
#include <QObject>
#include <QPointer>

#include <map>
#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::agent {

class AttachmentLedger;
class TapPort;
class UsbImport;

// A run's forwarded devices on this machine. The hub opens a device channel
// per device just before the run's start, and each is attached BEFORE the
// start. A segment becomes a TAP fed by its stream at once; when the
// sandbox runs, the TAP moves into its network namespace under the
// binding's name, with the binding's address, and comes up. A USB device is
// imported over its stream and attached to vhci_hcd; once the kernel has
// enumerated it, its node under /dev/bus/usb is the one device node the
// sandbox is given. When a segment's stream is lost while the sandbox runs
// (a tunnel on its way dropped, its forwarder restarted, the hub restarted:
// the channel closes with ConnectionLost), the TAP stays in the sandbox,
// paused, and the stream that follows is joined to it: the sandbox sees
// lost frames and nothing else. A USB device whose stream ends is detached
// (vhci cannot hold a device without its connection) and imported again
// when the stream returns, under the node the kernel then gives it. Every
// attachment is recorded in the work root (AttachmentLedger), and ends with
// the run or when the hub says the run let go of it (device.released);
// from a hub before protocol 31, with its stream, as any stream end did.
class DeviceAttacher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceAttacher)

public:
    DeviceAttacher(QString workRoot, device::SysfsRoot roots, QObject *parent = nullptr);
    ~DeviceAttacher() override;

    // Removes what a previous process of this agent recorded and left.
    void recoverLeftovers();
    // How a device channel with a direct leg is dialled; without one, such
    // a channel is refused and the hub carries the stream itself.
    void setDirectLegDialer(daemon::StreamLegDial::Dialer dialer) { m_dialer = std::move(dialer); }
    // How long a start waits for the stream of a direct leg that failed,
    // which the hub sends again on the agent's tunnel.
    static constexpr std::chrono::milliseconds kRelayAwaited { 10'000 };

    // Whether the hub resumes streams (protocol 31 on): only then is a
    // segment whose stream was lost kept for the stream that follows.
    void setStreamsResume(bool resume) { m_streamsResume = resume; }
    // A channel of kind "device" the hub opened: a TAP for it now, or the
    // one its paused stream left.
    void acceptChannel(tunnel::Channel *channel, const protocol::AgentDeviceOpen &open);
    // Whether a device of the start is still being attached (a USB device
    // the kernel is enumerating, a direct leg being dialled, or the stream
    // the hub sends again in place of a leg that failed); devicesSettled()
    // follows.
    bool isPending(const protocol::RunStart &run) const;
    // Every device of the start has its stream and TAP or node, or why not.
    Status checkReady(const protocol::RunStart &run) const;
    // "fwd-lab=l2:fwd0,fwd-key=usb:/dev/bus/usb/003/002" for
    // CLOOP_FORWARDED_DEVICES; empty without devices.
    QString environmentValue(const protocol::RunStart &run) const;
    // The USB device nodes the run's sandbox is given, handed to the
    // workload's user ("uid:gid"; empty: left as they are).
    Result<QList<RunSpec::DeviceNode>> deviceNodes(
        const protocol::RunStart &run, const QString &user) const;
    // The sandbox runs as `pid`, its workload as `user` ("uid:gid"; empty:
    // the image's): the TAPs go into its network namespace. A USB device
    // whose stream comes back later gets a node there again.
    void sandboxStarted(const protocol::RunStart &run, qint64 pid, const QString &user);
    // The run is over: its TAPs and streams go.
    void runEnded(qint64 runId);
    // The run no longer holds that device (device.released): what was kept
    // for it goes.
    void release(qint64 runId, qint64 bindingId, const QString &reason);

    int attachedCount() const { return static_cast<int>(m_ports.size()); }
    // The (run, binding) of the segments kept in their sandbox while their
    // stream is away, for the hub to say which it no longer lends.
    QList<std::pair<qint64, qint64>> pausedKeys() const;

Q_SIGNALS:
    // One device of a run is gone, and why (for the run's log).
    void detached(qint64 runId, const QString &deviceName, const QString &reason);
    // A device of the run finished attaching, or failed to.
    void devicesSettled(qint64 runId);

private:
    using Key = std::pair<qint64, qint64>; // run, binding
    struct Attached
    {
        QString name;
        TapPort *port = nullptr; // a segment
        UsbImport *usb = nullptr; // a USB device
    };

    void acceptUsbChannel(
        tunnel::Channel *channel, const Key &key, const QString &name, const QString &busId);
    void dialDirectLeg(
        tunnel::Channel *handle, const Key &key, const protocol::AgentDeviceOpen &open);
    // The segment's TAP into the sandbox of `pid` under the run's name for
    // it; dropped, saying why, when it cannot go.
    void moveIntoSandbox(const Key &key, const protocol::ForwardedDevice &device, qint64 pid);
    // A USB device imported again for a running sandbox: its new node there.
    void giveNodeToSandbox(const Key &key);
    void drop(const Key &key, const QString &reason);
    // Dropped or paused when its stream ends.
    void watchPort(const Key &key, TapPort *port);
    // The stream of a segment that went into its running sandbox was lost
    // on the way, and the hub resumes streams.
    bool mayPause(const Key &key, const TapPort &port) const;
    // Keeps its TAP, in the sandbox, for the stream that follows.
    void pause(const Key &key, const QString &reason);
    // Its TAP is joined to a stream that came back.
    void resume(tunnel::Channel *channel, const Key &key, const QString &name);
    void forgetAttachment(const Key &key);
    // An attachment that ended: recorded, logged and signalled.
    void reportLost(const Key &key, const QString &name, const QString &reason);

    // The runs whose sandbox is running, and the devices their start named:
    // a stream that comes back (its forwarder restarted) goes straight in.
    struct Sandbox
    {
        qint64 pid = 0;
        QList<protocol::ForwardedDevice> devices;
        QString user;
        // The USB nodes each binding has in the sandbox now.
        QMap<qint64, QStringList> nodes;
        // The node each binding's device had when the sandbox started: a
        // device imported again is also given there.
        QMap<qint64, QString> firstNodes;
    };
    std::map<qint64, Sandbox> m_sandboxes;

    device::SysfsRoot m_roots;
    std::unique_ptr<AttachmentLedger> m_ledger;
    std::map<Key, Attached> m_ports;
    struct Paused
    {
        QString name;
        std::unique_ptr<device::l2::TapDevice> tap;
    };
    std::map<Key, Paused> m_paused;
    bool m_streamsResume = false;
    // Why an attachment ended, for the start that finds it missing.
    std::map<Key, QString> m_endings;
    daemon::StreamLegDial::Dialer m_dialer;
    // Direct legs being dialled; and those that failed, whose stream the
    // hub sends again on the agent's tunnel, until it came or kRelayAwaited.
    std::map<Key, QPointer<daemon::StreamLegDial>> m_dialling;
    std::map<Key, QDeadlineTimer> m_relayAwaited;
};

} // namespace cloop::agent
