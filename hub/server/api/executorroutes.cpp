#include "hub/server/api/executorroutes.h"

#include "hub/domain/executorservice.h"
#include "hub/domain/recordjson.h"
#include "hub/server/api/daemonjson.h"
#include "hub/server/api/enrollmentanswer.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/api/releaseroutes.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/database.h"

#include "hub/server/api/sessionplace.h"

#include <QJsonArray>

namespace cloop::hub {

void ExecutorRoutes::writeExecutor(util::JsonWriter &out, const ExecutorRecord &record) const
{
    out.beginObject();
    writeDaemonFields(out, record,
        placeOfSession(m_gateway, m_holders, m_identity, protocol::PeerRole::Executor, record.id));
    out.field(QLatin1StringView("capabilities"), QJsonValue(record.capabilities));
    writeSoftwareFields(out, protocol::PeerRole::Executor, record, m_releases, m_upgrades);
    out.endObject();
}

namespace {
QJsonObject virtualExecutorJson(const VirtualExecutorRecord &record)
{
    return QJsonObject { { QStringLiteral("id"), record.id },
        { QStringLiteral("name"), record.name },
        { QStringLiteral("executor_id"), record.executorId },
        { QStringLiteral("executor"), record.executorName },
        { QStringLiteral("runtime"),
            record.runtime.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(record.runtime) },
        { QStringLiteral("created_at"), toDbTime(record.createdAt) },
        { QStringLiteral("created_by"), record.createdBy } };
}
} // namespace

void ExecutorRoutes::registerVirtualExecutorRoutes(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/virtual-executors"), [this](const ApiCall &call) {
        return ApiResponse::listOf(m_service.virtualExecutors(call.caller),
            QLatin1StringView("virtual_executors"), virtualExecutorJson);
    });
    router.add("POST", QStringLiteral("/api/virtual-executors"), [this](const ApiCall &call) {
        return ApiResponse::of(
            m_service.createVirtualExecutor(call.caller, call.body), virtualExecutorJson, 201);
    });
}

void ExecutorRoutes::registerIn(ApiRouter &router)
{
    registerVirtualExecutorRoutes(router);
    const auto json = [this](util::JsonWriter &out, const ExecutorRecord &record) {
        writeExecutor(out, record);
    };
    addEnrolledDaemonRoutes(router, QStringLiteral("/api/executors"),
        QLatin1StringView("executors"), m_service, m_identity,
        identity::EnrollmentBundle::Kind::Executor, json,
        [](const auto &enrollment) { return enrollment.executor; });

    router.add(
        "POST", QStringLiteral("/api/executors/{id}/revoke"), [this, json](const ApiCall &call) {
            return ApiResponse::of(m_service.revoke(call.caller, call.id(), call.body), json);
        });
    addUpgradeRoute(router, QStringLiteral("/api/executors"), m_upgrades,
        [this](const ApiPrincipal &caller, qint64 id) {
            return m_service.findForUpgrade(caller, id);
        });
}

} // namespace cloop::hub
