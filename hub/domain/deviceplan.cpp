#include "hub/domain/deviceplan.h"

#include "common/protocol/protocolversion.h"
#include "hub/domain/bindingterms.h"

#include <algorithm>

namespace cloop::hub {

using protocol::AgentCapabilities;

namespace {

Error cannotAttach(
    const ExecutorRecord &executor, const ForwarderRecord &forwarder, const QString &why)
{
    return Error::make(ErrorCode::ExecutorCannotAttach,
        QStringLiteral("executor %1 (%2) cannot take forwarder %3 (%4)'s %5: %6")
            .arg(executor.id)
            .arg(executor.name)
            .arg(forwarder.id)
            .arg(forwarder.name, forwarder.device.describe(), why));
}

// The runtime the run's sandbox will use: the virtual executor's, else the
// engine's default.
QString runtimeOf(const RunRecord &run, const AgentCapabilities &capabilities)
{
    return run.runtime.isEmpty() ? capabilities.engine.defaultRuntime : run.runtime;
}

// Step 1: the bindings that lend this run a device, each with its forwarder.
QList<PlannedDevice> applyingBindings(const DevicePlanInput &input)
{
    QList<PlannedDevice> planned;
    for (const BindingRecord &binding : input.bindings) {
        if (binding.projectId != input.run.projectId)
            continue;
        if (!binding.terms.virtualExecutor.isEmpty()
            && binding.terms.virtualExecutor != input.run.virtualExecutor)
            continue;
        const auto found = input.forwarders.constFind(binding.forwarderId);
        if (found == input.forwarders.constEnd() || found->isRevoked())
            continue; // a revoked forwarder's bindings are ended in the same step
        PlannedDevice device { binding, *found, {} };
        planned.append(device);
    }
    return planned;
}

// Step 2: the forwarder is there and, for USB, its device is plugged in and
// free; records where the USB device is.
Status checkPresent(const DevicePlanInput &input, PlannedDevice &device)
{
    if (!input.forwarderConnected || !input.forwarderConnected(device.forwarder.id))
        return Error::make(QStringLiteral("forwarder_offline"),
            QStringLiteral("project %1 is bound to forwarder %2 (%3, %4), which has no live "
                           "session anywhere in the hub cluster: start it (cloop forward) or "
                           "unbind it (cloop forward unbind %5)")
                .arg(input.run.projectPath)
                .arg(device.forwarder.id)
                .arg(device.forwarder.name, device.forwarder.device.describe())
                .arg(device.binding.id));
    if (device.forwarder.device.kind != protocol::DeviceSpec::Kind::Usb)
        return {};
    // A USB device can be unplugged while its forwarder stays connected.
    const std::optional<QString> busId
        = input.usbBusId ? input.usbBusId(device.forwarder.id) : std::nullopt;
    if (!busId)
        return Error::make(QStringLiteral("forwarder_outdated"),
            QStringLiteral("forwarder %1 (%2) has not said where its USB device is; it runs a "
                           "version before protocol %3: upgrade cloop on its machine")
                .arg(device.forwarder.id)
                .arg(device.forwarder.name)
                .arg(protocol::kMinimumForUsb));
    if (busId->isEmpty())
        return Error::make(QStringLiteral("device_unplugged"),
            QStringLiteral("forwarder %1 (%2) is connected but its USB device %3 is unplugged: "
                           "plug it in on the forwarder's machine")
                .arg(device.forwarder.id)
                .arg(device.forwarder.name, device.forwarder.device.describe()));
    device.device.busId = *busId;
    if (input.deviceInUse && input.deviceInUse(device.forwarder.id))
        return Error::make(ErrorCode::DeviceBusy,
            QStringLiteral(
                "forwarder %1 (%2)'s USB device is lent to another run; run %3 waits for it")
                .arg(device.forwarder.id)
                .arg(device.forwarder.name)
                .arg(input.run.id));
    return {};
}

// Step 3: whether this executor can give the forwarder's device to the run's
// sandbox, from the run, the agent's protocol and what the agent reported.
Status checkAttachable(const DevicePlanInput &input, const Result<AgentCapabilities> &capabilities,
    const ForwarderRecord &forwarder)
{
    const ExecutorRecord &executor = input.executor;
    if (input.run.hostProcess)
        return cannotAttach(executor, forwarder,
            QStringLiteral(
                "a host-process run has no sandbox to give a device to; run it in a sandbox"));
    if (executor.protocol < protocol::kMinimumForDevices)
        return cannotAttach(executor, forwarder,
            QStringLiteral(
                "the agent speaks protocol %1 and forwarded devices need %2 or newer; "
                "upgrade cloop on that machine (it runs %3) and restart `cloop executor agent`")
                .arg(executor.protocol)
                .arg(protocol::kMinimumForDevices)
                .arg(executor.software.isEmpty() ? QStringLiteral("an unknown version")
                                                 : executor.software));
    if (!capabilities)
        return cannotAttach(
            executor, forwarder, QStringLiteral("its reported capabilities are unreadable"));
    if (capabilities->mode == AgentCapabilities::Mode::Host)
        return cannotAttach(executor, forwarder,
            QStringLiteral("the agent runs in host mode, without sandboxes; use an agent in "
                           "container mode"));
    const QString runtime = runtimeOf(input.run, *capabilities);
    const auto kind = AgentCapabilities::runtimeKindOf(runtime);
    if (kind == AgentCapabilities::RuntimeKind::Gvisor
        || kind == AgentCapabilities::RuntimeKind::Kata)
        return cannotAttach(executor, forwarder,
            QStringLiteral("the runtime %1 (%2) cannot receive a host device; use runc or crun")
                .arg(runtime, AgentCapabilities::runtimeKindName(*kind)));
    const bool segment = forwarder.device.kind == protocol::DeviceSpec::Kind::Segment;
    const AgentCapabilities::Verdict &verdict
        = segment ? capabilities->l2Attach : capabilities->usbAttach;
    if (!verdict.yes)
        return cannotAttach(executor, forwarder,
            QStringLiteral("the agent reported it cannot attach %1: %2")
                .arg(segment ? QStringLiteral("a network segment") : QStringLiteral("a USB device"),
                    verdict.reason.isEmpty() ? QStringLiteral("no reason given") : verdict.reason));
    if (!segment && executor.protocol < protocol::kMinimumForUsb)
        return cannotAttach(executor, forwarder,
            QStringLiteral("the agent speaks protocol %1 and USB devices need %2 or newer; "
                           "upgrade cloop on that machine")
                .arg(executor.protocol)
                .arg(protocol::kMinimumForUsb));
    return {};
}

// What the agent is told of a device it can attach.
void describeForAgent(const DevicePlanInput &input, PlannedDevice &device)
{
    const ForwarderRecord &forwarder = device.forwarder;
    device.device.bindingId = device.binding.id;
    device.device.name = deviceNameFor(forwarder);
    if (forwarder.device.kind != protocol::DeviceSpec::Kind::Segment) {
        device.device.kind = protocol::DeviceSpec::Kind::Usb;
        return;
    }
    device.device.kind = protocol::DeviceSpec::Kind::Segment;
    device.device.target = device.binding.terms.targetInterface.isEmpty()
        ? QString(bindingterms::kDefaultTarget)
        : device.binding.terms.targetInterface;
    device.device.address = device.binding.terms.targetAddress;
    // The sandbox's side matches the segment: a relay of frames cannot
    // answer a too-large packet with "fragmentation needed".
    if (input.segmentMtu) {
        if (const std::optional<int> mtu = input.segmentMtu(forwarder.id))
            device.device.mtu = std::min(*mtu, protocol::kMaxSandboxMtu);
    }
}

// Two segments cannot both be fwd0 in one sandbox.
Status checkTargetsDistinct(const DevicePlanInput &input, const QList<PlannedDevice> &planned)
{
    for (qsizetype i = 0; i < planned.size(); ++i) {
        for (qsizetype j = i + 1; j < planned.size(); ++j) {
            if (planned[i].device.kind == protocol::DeviceSpec::Kind::Segment
                && planned[j].device.kind == protocol::DeviceSpec::Kind::Segment
                && planned[i].device.target == planned[j].device.target)
                return Error::make(QStringLiteral("device_clash"),
                    QStringLiteral(
                        "bindings %1 (forwarder %2) and %3 (forwarder %4) of project %5 both "
                        "name %6 in the sandbox; bind one with another --target")
                        .arg(planned[i].binding.id)
                        .arg(planned[i].forwarder.name)
                        .arg(planned[j].binding.id)
                        .arg(planned[j].forwarder.name, input.run.projectPath,
                            planned[i].device.target));
        }
    }
    return {};
}

} // namespace

QString deviceNameFor(const ForwarderRecord &forwarder)
{
    return QStringLiteral("fwd-") + forwarder.name;
}

Result<QList<PlannedDevice>> planDevices(const DevicePlanInput &input)
{
    QList<PlannedDevice> planned = applyingBindings(input);
    // Step 2 before step 3: an absent forwarder refuses the run on any executor.
    for (PlannedDevice &device : planned) {
        if (Status present = checkPresent(input, device); !present)
            return present.error();
    }
    if (planned.isEmpty())
        return planned;
    const auto capabilities = AgentCapabilities::fromJson(input.executor.capabilities);
    for (PlannedDevice &device : planned) {
        if (Status attachable = checkAttachable(input, capabilities, device.forwarder); !attachable)
            return attachable.error();
        describeForAgent(input, device);
    }
    if (Status distinct = checkTargetsDistinct(input, planned); !distinct)
        return distinct.error();
    return planned;
}

} // namespace cloop::hub
