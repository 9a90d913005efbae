#pragma once

#include "hub/domain/deviceplan.h"

#include <QDeadlineTimer>
#include <QObject>
#include <QPointer>

#include <functional>
#include <map>
#include <optional>

namespace cloop::tunnel {
class Channel;
class ChannelSplice;
} // namespace cloop::tunnel

namespace cloop::hub {

class AuditLog;
class DaemonGateway;
class EventBus;
class ForwarderReach;
class RelayLegDoor;
class RelayedStream;

// Step 4 of dispatch and every detach: for each device a run gets, a stream
// opened to the forwarder and a device channel opened on the agent's own
// tunnel, joined once both sides have accepted. Detached when the run ends,
// the binding ends, or either daemon goes away (its tunnel's channels close
// and the join passes that on); each detach is logged and published as
// device.detached with its cause. A device stays lent to its run until the
// run or the binding ends: when its forwarder comes back (restarted, or
// upgraded), when its agent's tunnel comes back, or when the agent finds
// this hub again after a restart, the stream is opened again, audited as a
// re-attach, and the agent joins it to the TAP it kept in the sandbox (an
// agent of protocol 31 on; before that, it made a new one). A device the run
// lets go of while its stream is away is released on the agent's tunnel
// (device.released).
//
// With a relay door and both daemons of protocol 32 on, the two channels
// are handles only: each daemon dials this hub again for the bytes (a leg,
// with a one-time ticket), and a relay thread splices the legs, so that no
// API request, SQL statement or session of the main thread is ever in
// front of a device's frames. A daemon that cannot dial its leg says so on
// its handle, and the stream goes on the tunnels, as with older daemons.
class DeviceStreams final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceStreams)

public:
    DeviceStreams(ForwarderReach &forwarders, DaemonGateway &executors, EventBus &events,
        AuditLog &audit, QObject *parent = nullptr);
    ~DeviceStreams() override;

    // Streams go on legs, relayed on threads of their own, where both
    // daemons can (none: always on the tunnels).
    void setRelayDoor(RelayLegDoor *door) { m_relayDoor = door; }

    // Opens both channels of every device; the agent's arrive on its tunnel
    // before the run's start, which the caller sends right after.
    Status open(const RunRecord &run, qint64 executorId, const QList<PlannedDevice> &devices);
    // A device a run of that executor holds by the records (lent_devices),
    // though this process never opened its stream: the hub restarted under
    // the run. Its stream is opened by resume().
    void adopt(qint64 runId, qint64 projectId, qint64 executorId, const PlannedDevice &device);
    // The executor is back: the devices its runs hold stream again where
    // their forwarder is reachable (the others when it comes back).
    void resume(qint64 executorId);
    bool lends(qint64 runId, qint64 bindingId) const { return m_lent.count({ runId, bindingId }); }
    void detachRun(qint64 runId, const QString &cause);
    void detachBinding(qint64 bindingId, const QString &cause);

    int streamCount() const { return static_cast<int>(m_streams.size()); }

    // Bytes relayed for each binding since the hub started, by its streams
    // that ended and those open now. A direct leg's bytes do not pass here:
    // the member holding the forwarder counts them.
    struct Relayed
    {
        qint64 forwarderId = 0; // a binding lends one forwarder's device
        quint64 toAgent = 0;
        quint64 toForwarder = 0;
    };
    std::map<qint64, Relayed> relayedByBinding() const;
    // Whether a run holds this forwarder's device now (streaming, or waiting
    // for the forwarder to come back).
    bool holdsForwarder(qint64 forwarderId) const;
    // What runs hold now: (run, binding) of every device lent.
    QList<std::pair<qint64, qint64>> lentKeys() const;

Q_SIGNALS:
    // A stream ended, whatever the cause: its device may be free again.
    void streamEnded(qint64 forwarderId);

private:
    struct Stream
    {
        qint64 runId = 0;
        qint64 projectId = 0;
        qint64 bindingId = 0;
        qint64 forwarderId = 0;
        qint64 executorId = 0;
        QString deviceName;
        QPointer<tunnel::Channel> forwarderSide;
        QPointer<tunnel::Channel> agentSide;
        QPointer<tunnel::ChannelSplice> splice;
        // The agent's side and the forwarder's are the handles of a direct
        // leg: the bytes go straight from the agent to the holder.
        bool direct = false;
        // Both sides are handles of legs relayed on a relay thread.
        QPointer<RelayedStream> relayed;
    };
    using Key = std::pair<qint64, qint64>; // run, binding
    // What a run was lent, for as long as it holds it.
    struct Lent
    {
        qint64 projectId = 0;
        qint64 executorId = 0;
        PlannedDevice device;
        // Why its last stream went, while it waits for the next: the join
        // that follows is a re-attach.
        std::optional<QString> lostBecause;
    };

    Status openStream(const Key &key, const Lent &lent);
    // Whether the agent may come to the member holding the forwarder for
    // the bytes itself: it speaks direct legs, the forwarder is held by
    // another member, and the agent did reach that member lately.
    bool mayGoDirect(qint64 executorId, qint64 forwarderId);
    // Whether both daemons may dial this hub for legs of their own.
    bool mayRelayOnLegs(qint64 executorId, qint64 forwarderId);
    bool legsFailedLately(qint64 executorId, qint64 forwarderId);
    // The agent could not dial the holder, or a daemon its leg: the stream
    // goes on the tunnels, through here.
    void fallBackToRelay(const Key &key, const QString &reason);
    // A stream whose both sides are open joined: published, or audited as a re-attach.
    void recordJoin(const Key &key);
    // A leg was lost while both daemons stay: the stream is opened again
    // after a short pause.
    void reopenSoon(const Key &key);
    void joinIfReady(const Key &key);
    // The stream goes; with `forGood` the run's hold on the device too.
    void finish(const Key &key, const QString &cause, bool forGood = false);
    // Closes the stream's sides (lost, unless `forGood`), logs and publishes it.
    void endStream(const Key &key, const QString &cause, bool forGood);
    void detachWhere(const std::function<bool(const Key &)> &matches, const QString &cause);
    // The forwarder is back: the segments its runs still hold stream again.
    void giveBack(qint64 forwarderId);
    // Streams again every device lent that matches and has no stream.
    void reopenWhere(const std::function<bool(const Lent &)> &matches, const QString &why);
    // The run let go of a device: its agent removes what it holds or kept
    // for it (an agent not connected now says what it keeps when it
    // returns, and is told then).
    void tellReleased(const Key &key, const Lent &lent, const QString &cause);
    // The same in the log and the event stream, for a device whose stream
    // was away (a stream's own end says so otherwise).
    void publishReleased(const Key &key, const Lent &lent, const QString &cause);
    // The re-joined stream, in the audit log and the event stream.
    void recordReattach(const Stream &stream, const QString &lostBecause);

    ForwarderReach &m_forwarders;
    DaemonGateway &m_executors;
    EventBus &m_events;
    AuditLog &m_audit;
    RelayLegDoor *m_relayDoor = nullptr;
    std::map<Key, Stream> m_streams;
    std::map<Key, Lent> m_lent;
    std::map<qint64, Relayed> m_relayedByEnded;
    // (executor, forwarder) whose direct legs or relay legs failed, until then.
    std::map<std::pair<qint64, qint64>, QDeadlineTimer> m_relayOnly;
    static constexpr std::chrono::minutes kRelayOnlyFor { 10 };
    static constexpr std::chrono::seconds kReopenPause { 1 };
};

} // namespace cloop::hub
