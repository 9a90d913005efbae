#pragma once

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "hub/storage/bindingstore.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/runstore.h"

#include <QHash>
#include <QList>

#include <functional>

namespace cloop::hub {

// One device a run gets: the binding that lends it and what the agent is told.
struct PlannedDevice
{
    BindingRecord binding;
    ForwarderRecord forwarder;
    protocol::ForwardedDevice device;
};

// Everything the choice depends on, read by the caller; the plan itself
// touches nothing.
struct DevicePlanInput
{
    RunRecord run;
    ExecutorRecord executor;
    // The project's bindings active at dispatch time.
    QList<BindingRecord> bindings;
    QHash<qint64, ForwarderRecord> forwarders; // by id, for every binding
    std::function<bool(qint64 forwarderId)> forwarderConnected;
    // The segment's MTU as its forwarder reported it; none: 1500.
    std::function<std::optional<int>(qint64 forwarderId)> segmentMtu;
    // Where a USB forwarder's device is now, as it reported: nullopt when it
    // never said, empty while unplugged.
    std::function<std::optional<QString>(qint64 forwarderId)> usbBusId;
    // Whether another run holds the forwarder's device now: a USB device
    // serves one run at a time (a segment serves many).
    std::function<bool(qint64 forwarderId)> deviceInUse;
};

// Steps 1 to 3 of dispatch as RunDispatcher numbers them
// (hub/server/rundispatcher.h; README, "Forwarded segments in runs"): the
// bindings that apply to this run (a binding narrowed to a virtual executor
// applies only to runs on that virtual executor), each forwarder's live
// session, and whether this executor can give each device to a sandbox. Every refusal names the
// forwarder and says what to do:
// - "forwarder_offline": a bound forwarder has no live session; the run is
//   refused whichever executor it would go to.
// - "device_unplugged", "forwarder_outdated": the same for a USB device
//   that is unplugged, or whose forwarder never said where it is.
// - "device_busy": another run holds the USB device; the run waits.
// - "executor_cannot_attach": this executor cannot take the device
//   (host-process run, host mode, gVisor or Kata, a protocol before devices,
//   or what the agent reported); another executor may.
Result<QList<PlannedDevice>> planDevices(const DevicePlanInput &input);

// "fwd-" + the forwarder's name: the key in CLOOP_FORWARDED_DEVICES.
QString deviceNameFor(const ForwarderRecord &forwarder);

} // namespace cloop::hub
