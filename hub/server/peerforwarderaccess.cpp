#include "hub/server/peerforwarderaccess.h"

#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "hub/domain/runlifecycle.h"
#include "hub/hubcore.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/bindingstore.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

Error refused(const QString &why)
{
    return Error::make(u"peer_refused"_s, why);
}

} // namespace

Result<tunnel::Channel *> PeerForwarderAccess::open(qint64 forwarderId, const QJsonObject &json)
{
    auto open = protocol::parseChannelOpen(json);
    if (!open)
        return refused(u"not a channel opening: %1"_s.arg(open.error().message));
    if (const auto *segment = std::get_if<protocol::SegmentOpen>(&*open)) {
        if (Status allowed = checkRunStream(forwarderId, segment->runId, segment->bindingId);
            !allowed)
            return allowed.error();
    } else if (const auto *usb = std::get_if<protocol::UsbOpen>(&*open)) {
        if (usb->purpose == protocol::UsbOpen::Purpose::Run) {
            if (Status allowed = checkRunStream(forwarderId, usb->runId, usb->bindingId); !allowed)
                return allowed.error();
        }
    } else if (!std::holds_alternative<protocol::DeviceTestOpen>(*open)) {
        return refused(u"a member may open a forwarder's device stream or its test, not a "
                       "channel of kind %1"_s.arg(protocol::channelOpenKind(*open)));
    }
    tunnel::TunnelConnection *session = m_forwarders.session(forwarderId);
    if (!session)
        return Error::make(u"forwarder_offline"_s,
            u"forwarder %1 is not connected to this member any more"_s.arg(forwarderId));
    return session->channels()->openChannel(*open);
}

Status PeerForwarderAccess::checkRunStream(qint64 forwarderId, qint64 runId, qint64 bindingId)
{
    auto binding = m_core.stores().bindings.find(bindingId);
    if (!binding)
        return refused(
            u"binding %1 cannot be read: %2"_s.arg(bindingId).arg(binding.error().message));
    if (binding->forwarderId != forwarderId)
        return refused(u"binding %1 lends forwarder %2, not %3"_s.arg(bindingId)
                           .arg(binding->forwarderId)
                           .arg(forwarderId));
    if (!binding->isActiveAt(m_core.clock().now()))
        return refused(u"binding %1 has ended"_s.arg(bindingId));
    auto run = m_core.runLifecycle().find(runId);
    if (!run)
        return refused(u"run %1 cannot be read: %2"_s.arg(runId).arg(run.error().message));
    if (run->projectId != binding->projectId)
        return refused(
            u"run %1 is not of the project binding %2 lends to"_s.arg(runId).arg(bindingId));
    if (run->state != RunRecord::State::Dispatched && run->state != RunRecord::State::Running)
        return refused(u"run %1 is %2"_s.arg(runId).arg(runStateName(run->state)));
    return {};
}

} // namespace cloop::hub
