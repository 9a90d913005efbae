#include "hub/server/hubgateways.h"

#include "hub/hubcore.h"

namespace cloop::hub {

namespace {

// An agent's tunnel carries as many channels as its runs need.
DaemonGateway::Options executorOptions(DaemonGateway::Options options)
{
    options.limits.maxChannels = tunnel::ChannelMultiplexer::Limits::kExecutorMaxChannels;
    return options;
}

} // namespace

HubGateways::HubGateways(HubCore &core, const QString &software, DaemonGateway::Options options)
    : m_forwarderDirectory(core.forwarders(), software)
    , m_executorDirectory(core.executors(), software)
    , m_forwarders(m_forwarderDirectory, options)
    , m_executors(m_executorDirectory, executorOptions(options))
    , m_audit(core.stores().database)
{ }

} // namespace cloop::hub
