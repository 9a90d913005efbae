#pragma once

namespace cloop::protocol {

// Bumped whenever a message or frame changes meaning. 22 is the first
// version that carries device channels, so the count starts there.
inline constexpr int kVersion = 34;
// The oldest peer a hub still talks to at all.
inline constexpr int kMinimumSupported = 22;
// Device channels need at least this version on the executor side.
inline constexpr int kMinimumForDevices = 22;

} // namespace cloop::protocol

namespace cloop::protocol {
// Hubs from this version on take runs.held from an agent.
inline constexpr int kMinimumForRunsHeld = 23;
// Hubs from this version on take device.state from a forwarder.
inline constexpr int kMinimumForDeviceState = 24;
// Daemons store the pins the hub announces (hub.pins, Welcome's pins) from
// this version on: the hub's key can be rotated without re-enrolling them.
inline constexpr int kMinimumForHubPins = 26;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a forwarder reports its USB device's bus id in
// device.state, and hubs lend USB devices to runs.
inline constexpr int kMinimumForUsb = 25;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a daemon reports its update channel in its hello and
// answers upgrade.request; older daemons are upgraded by their operator.
inline constexpr int kMinimumForUpgrade = 27;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a hub may ask an agent to install a harness
// (run.start's "harness") and takes the agent's capabilities message.
inline constexpr int kMinimumForHarnessInstall = 28;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a daemon takes the hub URLs of its hub's cluster
// (hub.members, Welcome's hubs) and reads up to kMaxHubPins pins; an older
// one reads at most kMaxHubPinsBeforeHubMembers and is told no more.
inline constexpr int kMinimumForHubMembers = 29;
inline constexpr int kMaxHubPinsBeforeHubMembers = 4;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on an agent takes a device channel with a direct leg
// (AgentDeviceOpen's "direct") and comes to the member holding the
// forwarder for the device's bytes itself; an older one gets them through
// the member it is connected to.
inline constexpr int kMinimumForDirectStreams = 30;
// From this version on a device stream may pause and resume: the hub closes
// an agent's device channel with ConnectionLost while the run still holds
// the device (its forwarder or either tunnel went away, the hub restarted),
// opens it again when both ends are back, and says device.released when the
// run lets go of a device. Such an agent keeps a paused segment's TAP in the
// sandbox and joins the new stream to it.
inline constexpr int kMinimumForResumableStreams = 31;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a device's bytes may ride legs of their own to the
// hub the tunnels reach (DirectLeg without a URL): a forwarder takes a
// segment or USB opening with a "leg" and dials kForwarderLegPath, an agent
// takes a direct leg without a URL and dials its own hub. The hub relays
// between the two legs on a relay thread; with an older daemon on either
// end it carries the stream on the tunnels as before.
inline constexpr int kMinimumForRelayLegs = 32;
} // namespace cloop::protocol

namespace cloop::protocol {
// From this version on a hub takes device.counters from a forwarder: a
// segment stream's frames and drops, for the dashboard's traffic graphs.
inline constexpr int kMinimumForDeviceCounters = 33;
} // namespace cloop::protocol
namespace cloop::protocol {
// From this version on a daemon honours an error's "retry_within_ms": the
// stopping hub's close comes with the window over which its daemons spread
// their return, instead of all of them dialling again at once.
inline constexpr int kMinimumForReturnSpread = 34;
} // namespace cloop::protocol
