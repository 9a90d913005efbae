#include "hub/server/hubgateways.h"

#include "hub/hubcore.h"

namespace cloop::hub {

HubGateways::HubGateways(HubCore &core, const QString &software, DaemonGateway::Options options)
    : m_forwarderDirectory(core.forwarders(), software)
    , m_executorDirectory(core.executors(), software)
    , m_forwarders(m_forwarderDirectory, options)
    , m_executors(m_executorDirectory, options)
    , m_audit(core.stores().database)
{ }

} // namespace cloop::hub
