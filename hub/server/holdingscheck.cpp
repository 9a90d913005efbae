#include "hub/server/holdingscheck.h"

#include "common/logging.h"
#include "hub/domain/runlifecycle.h"
#include "hub/hubcore.h"
#include "hub/server/daemongateway.h"
#include "hub/server/devicestreams.h"
#include "hub/storage/bindingstore.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

HoldingsCheck::HoldingsCheck(HubCore &core, DaemonGateway &forwarders, DaemonGateway &executors,
    DeviceStreams &devices, std::chrono::milliseconds every, QObject *parent)
    : QObject(parent)
    , m_core(core)
    , m_forwarders(forwarders)
    , m_executors(executors)
    , m_devices(devices)
{
    m_timer.setInterval(every);
    connect(&m_timer, &QTimer::timeout, this,
        [this] { checkNow(u"the periodic check of what this member holds"_s); });
}

void HoldingsCheck::checkNow(const QString &why)
{
    dropRevoked(m_forwarders, u"forwarder"_s, why);
    dropRevoked(m_executors, u"executor"_s, why);
    detachEnded(why);
}

void HoldingsCheck::dropRevoked(DaemonGateway &gateway, const QString &noun, const QString &why)
{
    const QList<qint64> held = gateway.connectedIds();
    if (held.isEmpty())
        return;
    auto revoked = noun == u"forwarder"_s ? m_core.stores().forwarders.revokedIds()
                                          : m_core.stores().executors.revokedIds();
    if (!revoked) {
        qCDebug(lcHubCluster).noquote()
            << "cannot check the sessions held here:" << revoked.error().message;
        return;
    }
    for (const qint64 id : held) {
        if (!revoked->contains(id))
            continue;
        qCWarning(lcHubCluster).noquote()
            << noun << id << "was revoked; its session here ends (found by" << why + u')';
        gateway.drop(id,
            protocol::ErrorMessage {
                u"revoked"_s, u"this %1 was revoked"_s.arg(noun), /*permanent=*/true });
    }
}

void HoldingsCheck::detachEnded(const QString &why)
{
    const QDateTime now = m_core.clock().now();
    for (const auto &[runId, bindingId] : m_devices.lentKeys()) {
        auto binding = m_core.stores().bindings.find(bindingId);
        if (binding && !binding->isActiveAt(now)) {
            m_devices.detachBinding(bindingId,
                u"binding %1 has ended (found by %2)"_s.arg(QString::number(bindingId), why));
            continue;
        }
        auto run = m_core.runLifecycle().find(runId);
        if (run && run->isFinished())
            m_devices.detachRun(
                runId, u"run %1 has ended (found by %2)"_s.arg(QString::number(runId), why));
    }
}

} // namespace cloop::hub
