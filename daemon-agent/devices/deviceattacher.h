#pragma once

#include "common/protocol/controlmessage.h"
#include "common/result.h"

#include <QObject>

#include <map>
#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::agent {

class AttachmentLedger;
class TapPort;

// A run's forwarded devices on this machine. The hub opens a device channel
// per device just before the run's start; each becomes a TAP fed by its
// stream at once (attached BEFORE the start). When the sandbox runs, each
// TAP moves into its network namespace under the binding's name, with the
// binding's address, and comes up. Every attachment is recorded in the
// work root (AttachmentLedger), and ends with the run, with its stream (the
// binding ended, the forwarder went away), or with the hub's tunnel.
class DeviceAttacher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceAttacher)

public:
    explicit DeviceAttacher(QString workRoot, QObject *parent = nullptr);
    ~DeviceAttacher() override;

    // Removes what a previous process of this agent recorded and left.
    void recoverLeftovers();

    // A channel of kind "device" the hub opened: a TAP for it now.
    void acceptChannel(tunnel::Channel *channel);
    // Every device of the start has its stream and TAP, or why not.
    Status checkReady(const protocol::RunStart &run) const;
    // "fwd-lab=l2:fwd0,…" for CLOOP_FORWARDED_DEVICES; empty without devices.
    static QString environmentValue(const protocol::RunStart &run);
    // The sandbox runs as `pid`: the TAPs go into its network namespace.
    void sandboxStarted(const protocol::RunStart &run, qint64 pid);
    // The run is over: its TAPs and streams go.
    void runEnded(qint64 runId);

    int attachedCount() const { return static_cast<int>(m_ports.size()); }

Q_SIGNALS:
    // One device of a run is gone, and why (for the run's log).
    void detached(qint64 runId, const QString &deviceName, const QString &reason);

private:
    using Key = std::pair<qint64, qint64>; // run, binding
    struct Attached
    {
        QString name;
        TapPort *port = nullptr;
    };

    void drop(const Key &key, const QString &reason);

    std::unique_ptr<AttachmentLedger> m_ledger;
    std::map<Key, Attached> m_ports;
};

} // namespace cloop::agent
