#pragma once

#include "common/net/huburls.h"
#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <variant>

namespace cloop::protocol {

// MTUs: what a forwarder may report of its interface (loopback has 65536),
// and the largest a sandbox's TAP takes (65535 minus the Ethernet header),
// to which a larger segment's is lowered.
inline constexpr int kMinMtu = 68;
inline constexpr int kMaxReportedMtu = 65536;
inline constexpr int kMaxSandboxMtu = 65521;

// Control messages are JSON objects in WebSocket text frames, each with a
// "type". This file is the one place that parses and validates them; code
// above it only sees the typed values below.

namespace messagetype {
inline constexpr QLatin1StringView kHello { "hello" };
inline constexpr QLatin1StringView kRedeem { "redeem" };
inline constexpr QLatin1StringView kEnrolled { "enrolled" };
inline constexpr QLatin1StringView kWelcome { "welcome" };
inline constexpr QLatin1StringView kError { "error" };
inline constexpr QLatin1StringView kRunStart { "run.start" };
inline constexpr QLatin1StringView kRunCancel { "run.cancel" };
inline constexpr QLatin1StringView kRunAck { "run.ack" };
inline constexpr QLatin1StringView kRunStarted { "run.started" };
inline constexpr QLatin1StringView kRunFinished { "run.finished" };
inline constexpr QLatin1StringView kRunsHeld { "runs.held" };
inline constexpr QLatin1StringView kDeviceReleased { "device.released" };
inline constexpr QLatin1StringView kDeviceState { "device.state" };
inline constexpr QLatin1StringView kDeviceCounters { "device.counters" };
inline constexpr QLatin1StringView kHubPins { "hub.pins" };
inline constexpr QLatin1StringView kHubMembers { "hub.members" };
inline constexpr QLatin1StringView kUpgradeRequest { "upgrade.request" };
inline constexpr QLatin1StringView kUpgradeStatus { "upgrade.status" };
inline constexpr QLatin1StringView kCapabilities { "capabilities" };
} // namespace messagetype

// Which endpoint a daemon speaks to; a credential of one role never
// authenticates as the other.
enum class PeerRole
{
    Forwarder,
    Executor
};
QString roleName(PeerRole role);

// Daemon -> hub, first message of an enrolled daemon.
struct Hello
{
    int protocol = 0;
    QString software;
    PeerRole role = PeerRole::Forwarder;
    QString credential;
    // What an executor agent can do (its detected capabilities); empty for
    // forwarders. Validated by the hub, not here: it is the agent's report.
    QJsonObject capabilities;
    // The update channel the device follows ("stable" or "edge"), from its
    // own configuration; empty from daemons before protocol 27.
    QString channel;
    // A daemon that comes for one device's stream, not for its session (a
    // DirectLeg: an agent's from protocol 30 on, a forwarder's from 32 on):
    // the one-time ticket.
    QString streamTicket;

    friend bool operator==(const Hello &, const Hello &) = default;
};

// Daemon -> hub, first message of a daemon holding a one-time token.
struct Redeem
{
    int protocol = 0;
    QString software;
    PeerRole role = PeerRole::Forwarder;
    QString token;
    QJsonObject capabilities;
    QString channel;

    friend bool operator==(const Redeem &, const Redeem &) = default;
};

// Hub -> daemon, answer to Redeem: the long-lived credential, sent once.
struct Enrolled
{
    qint64 id = 0;
    QString name;
    QString credential;

    friend bool operator==(const Enrolled &, const Enrolled &) = default;
};

// Hub -> daemon: authenticated; what the daemon is for.
struct Welcome
{
    int protocol = 0;
    QString software;
    qint64 id = 0;
    QString name;
    std::optional<DeviceSpec> device; // forwarders only
    // The pins of the keys the hub serves and has staged ("sha256:…"): what
    // the daemon pins from now on. Empty from a hub before protocol 26.
    QStringList pins;
    // The daemon URLs of the live members of the hub's cluster, in the order
    // to try them: what the daemon dials from its next attempt on. Empty from
    // a hub before protocol 29.
    QList<QUrl> hubs {};

    friend bool operator==(const Welcome &, const Welcome &) = default;
};

// Hub -> daemon, any time in a session: the hub staged or activated a key;
// the daemon pins exactly these keys from now on. In a cluster, the union
// of every member's keys.
struct HubPins
{
    QStringList pins;

    friend bool operator==(const HubPins &, const HubPins &) = default;
};
inline constexpr int kMaxHubPins = 16;

// Hub -> daemon of protocol 29 or later, any time in a session: the daemon
// URLs of the live members of the hub's cluster changed. Like Welcome's
// `hubs`: wss:// (ws:// only to loopback), 1 to kMaxHubMembers, none twice.
struct HubMembers
{
    QList<QUrl> hubs;

    friend bool operator==(const HubMembers &, const HubMembers &) = default;
};
inline constexpr int kMaxHubMembers = net::kMaxHubUrls;
// The longest return spread a hub may ask for (a daemon's backoff caps it
// again at its own ceiling).
inline constexpr qint64 kMaxRetryWithinMs = 10 * 60 * 1000;

// Either direction. A permanent error means "do not retry": the daemon
// stops its reconnect loop and says why. A hub that is stopping says over
// how long its daemons should spread their return (retryWithinMs), so
// that thousands of them do not come back to the next hub at one instant.
struct ErrorMessage
{
    QString code;
    QString message;
    bool permanent = false;
    qint64 retryWithinMs = 0; // 0: the daemon's own backoff

    friend bool operator==(const ErrorMessage &, const ErrorMessage &) = default;
};

// Hub -> agent: run this workload. The agent checks everything again
// before acting on it: the hub is not trusted with the agent's files.
// A device the hub lends to a run. Its stream arrives on a channel the hub
// opens just before the start (an AgentDeviceOpen, channelopen.h); the agent
// attaches it before the workload starts.
struct ForwardedDevice
{
    qint64 bindingId = 0;
    QString name; // "fwd-lab": the key in CLOOP_FORWARDED_DEVICES
    DeviceSpec::Kind kind = DeviceSpec::Kind::Segment;
    QString target; // l2: the interface's name in the sandbox
    QString address; // l2: CIDR, or empty
    int mtu = 1500; // l2, at most kMaxSandboxMtu
    QString busId; // usb: the forwarder's bus id, which the agent imports

    friend bool operator==(const ForwardedDevice &, const ForwardedDevice &) = default;
};

// "fwd-lab": lower case letters, digits, '.', '_' and '-', at most 64.
bool isValidForwardedDeviceName(const QString &name);

struct RunStart
{
    qint64 runId = 0;
    QString image; // empty: the agent's default image
    QStringList argv;
    QMap<QString, QString> env;
    QString workdir; // relative to the agent's work root
    QString runtime; // empty: the agent's default OCI runtime
    bool hostProcess = false;
    // Where the hub's stored log ends: output before it was received already.
    qint64 resumeOffset = 0;
    QList<ForwardedDevice> devices; // at most kMaxDevices
    // Set: the run installs this harness with the installer the agent's own
    // table names (argv is empty then); nothing of the command is the hub's.
    QString harness;

    friend bool operator==(const RunStart &, const RunStart &) = default;
};

// Hub -> agent: stop that workload.
struct RunCancel
{
    qint64 runId = 0;
    QString reason;

    friend bool operator==(const RunCancel &, const RunCancel &) = default;
};

// Hub -> agent: the run's log is stored up to `offset`; the agent may
// forget what comes before it.
struct RunAck
{
    qint64 runId = 0;
    qint64 offset = 0;

    friend bool operator==(const RunAck &, const RunAck &) = default;
};

// Agent -> hub: the workload is running (its sandbox started).
struct RunStarted
{
    qint64 runId = 0;

    friend bool operator==(const RunStarted &, const RunStarted &) = default;
};

// Agent -> hub: the workload ended; `error` is set when it never ran or
// the sandbox failed (the engine's own message), exitCode when it ran.
struct RunFinished
{
    qint64 runId = 0;
    std::optional<int> exitCode;
    QString error;
    qint64 endOffset = 0; // the run's whole output is [0, endOffset)

    friend bool operator==(const RunFinished &, const RunFinished &) = default;
};

// Agent -> hub, right after every welcome and after any reports it kept
// while away: every run this agent process still has (running, or with
// output the hub lacks). A run the hub gave it earlier that is not listed
// never reached it, so the hub stops waiting for it. To a hub of protocol
// 31 or newer it also names the segments it keeps in a sandbox while their
// stream is away (run, binding): any the hub no longer lends, it releases.
struct RunsHeld
{
    QList<qint64> runIds;
    QList<std::pair<qint64, qint64>> keptDevices;

    friend bool operator==(const RunsHeld &, const RunsHeld &) = default;
};

// Hub -> agent (of protocol 31 or newer): the run no longer holds that
// device (its binding ended, its forwarder was revoked, the run ended), so
// nothing will resume its stream. The agent removes what it holds or kept
// for it, though its stream may be away or never pass this hub (a direct leg).
struct DeviceReleased
{
    qint64 runId = 0;
    qint64 bindingId = 0;
    QString reason;

    friend bool operator==(const DeviceReleased &, const DeviceReleased &) = default;
};

// Forwarder -> hub (to hubs of protocol 33 or newer), every few seconds
// while a run's stream moves: what passed since the stream opened, as the
// forwarder's end counts it. Bytes the hub counts itself; frames, URBs and
// drops only an end can see. A segment counts frames and drops; a USB
// device URBs (submitted by the run, answered by the device), never dropped.
struct DeviceCounters
{
    enum class Unit
    {
        Frames,
        Urbs,
    };
    qint64 runId = 0;
    qint64 bindingId = 0;
    qint64 framesToRun = 0; // off the wire, up the stream; URBs: answers
    qint64 framesFromRun = 0; // down the stream, onto the wire; URBs: submissions
    qint64 droppedToRun = 0; // the stream or the socket's buffer was full
    qint64 droppedFromRun = 0; // the interface could not take them
    Unit unit = Unit::Frames;

    friend bool operator==(const DeviceCounters &, const DeviceCounters &) = default;
};

// Forwarder -> hub, after the welcome (to hubs of protocol 24 or newer):
// the state of the segment it carries, as its machine sees it. The hub lends
// the segment to sandboxes with this MTU.
struct DeviceState
{
    // A segment's interface: up to kMaxReportedMtu (loopback's 65536).
    int mtu = 1500;
    bool up = false;
    bool carrier = false;
    // A USB device: the bus id it has now, empty while it is unplugged.
    // Consumers import by this bus id; anything else is refused.
    bool usb = false;
    QString usbBusId;

    friend bool operator==(const DeviceState &, const DeviceState &) = default;
};

// Hub -> daemon: an administrator asks the device to upgrade. It carries
// the target alone: the channel and any permission to downgrade are the
// device's own configuration, and fields that try to say otherwise are
// named in `ignoredFields` (the daemon logs them) and never read.
struct UpgradeRequest
{
    QString target; // release::UpgradeTarget's text, checked by the device
    QStringList ignoredFields;

    friend bool operator==(const UpgradeRequest &, const UpgradeRequest &) = default;
};

// Daemon -> hub: where an upgrade stands on the device, from its answer to
// an UpgradeRequest to the outcome its root helper reports.
struct UpgradeStatus
{
    enum class State
    {
        Refused, // the device does not install this target; message says why
        Draining, // accepted; waiting for `draining` runs to finish
        Requested, // the request is filed for the device's root helper
        Upgraded, // the helper installed `to` and the daemon came back on it
        RolledBack, // `to` did not come back; `from` is installed again
        Failed, // nothing was installed; message says why
    };
    State state = State::Refused;
    QString target;
    QString from; // versions, for the outcomes
    QString to;
    QString message;
    int draining = 0;

    bool isOutcome() const
    {
        return state == State::Upgraded || state == State::RolledBack || state == State::Failed;
    }
    friend bool operator==(const UpgradeStatus &, const UpgradeStatus &) = default;
};
QString upgradeStateName(UpgradeStatus::State state);
QLatin1StringView counterUnitName(DeviceCounters::Unit unit); // "frames", "urbs"

// Agent -> hub (protocol 28 on): what the agent can do changed while it was
// connected (a harness was installed); the same object a hello carries.
struct CapabilitiesReport
{
    QJsonObject capabilities;

    friend bool operator==(const CapabilitiesReport &, const CapabilitiesReport &) = default;
};

using ControlMessage = std::variant<Hello, Redeem, Enrolled, Welcome, ErrorMessage, RunStart,
    RunCancel, RunAck, RunStarted, RunFinished, RunsHeld, DeviceState, HubPins, HubMembers,
    UpgradeRequest, UpgradeStatus, CapabilitiesReport, DeviceReleased, DeviceCounters>;

// Limits a RunStart is checked against.
inline constexpr int kMaxArgv = 256;
inline constexpr qsizetype kMaxArgLength = 8192;
inline constexpr int kMaxEnv = 128;
inline constexpr int kMaxDevices = 8;
// Limit of RunsHeld, far above any agent's concurrency ceiling.
inline constexpr int kMaxRunsHeld = 2048;

inline constexpr qsizetype kMaxControlMessageSize = 64 * 1024;

Result<ControlMessage> parseControlMessage(QByteArrayView utf8);
QByteArray serializeControlMessage(const ControlMessage &message);
QString controlMessageType(const ControlMessage &message);

} // namespace cloop::protocol
