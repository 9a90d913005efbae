#include "hub/server/api/executorroutes.h"

#include "common/identity/enrollmentbundle.h"
#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/recordjson.h"
#include "hub/executor/ownexecutor.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/virtualexecutorstore.h"

#include <QJsonArray>

namespace cloop::hub {

QJsonObject ExecutorRoutes::executorJson(const ExecutorRecord &record) const
{
    const bool connected = m_gateway.isConnected(record.id);
    const QString state
        = daemonStateName(record.isRevoked(), record.enrolledAt.isValid(), connected);
    return QJsonObject {
        { QStringLiteral("id"), record.id },
        { QStringLiteral("name"), record.name },
        { QStringLiteral("state"), state },
        { QStringLiteral("connected"), connected },
        { QStringLiteral("hub_member"),
            connected ? QJsonValue(m_identity.member()) : QJsonValue() },
        { QStringLiteral("last_seen"),
            connected ? QJsonValue(toDbTime(QDateTime::currentDateTimeUtc()))
                      : timeOrNull(record.lastSeenAt) },
        { QStringLiteral("version"),
            record.software.isEmpty() ? QJsonValue(QJsonValue::Null)
                                      : QJsonValue(record.software) },
        { QStringLiteral("protocol"),
            record.protocol > 0 ? QJsonValue(record.protocol) : QJsonValue(QJsonValue::Null) },
        { QStringLiteral("capabilities"), record.capabilities },
        { QStringLiteral("created_at"), timeOrNull(record.createdAt) },
        { QStringLiteral("created_by"), record.createdBy },
        { QStringLiteral("enrolled_at"), timeOrNull(record.enrolledAt) },
        { QStringLiteral("revoked_at"), timeOrNull(record.revokedAt) },
    };
}

void ExecutorRoutes::registerVirtualExecutorRoutes(ApiRouter &router)
{
    const auto json = [](const VirtualExecutorRecord &record) {
        return QJsonObject { { QStringLiteral("id"), record.id },
            { QStringLiteral("name"), record.name },
            { QStringLiteral("executor_id"), record.executorId },
            { QStringLiteral("executor"), record.executorName },
            { QStringLiteral("runtime"),
                record.runtime.isEmpty() ? QJsonValue(QJsonValue::Null)
                                         : QJsonValue(record.runtime) },
            { QStringLiteral("created_at"), toDbTime(record.createdAt) },
            { QStringLiteral("created_by"), record.createdBy } };
    };
    router.add("GET", QStringLiteral("/api/virtual-executors"), [this, json](const ApiCall &call) {
        if (Status allowed
            = m_policy.require(call.caller, AccessPolicy::HubAction::ListVirtualExecutors);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto records = m_virtualExecutors.list();
        if (!records)
            return ApiResponse::fromError(records.error());
        QJsonArray out;
        for (const VirtualExecutorRecord &record : std::as_const(*records))
            out.append(json(record));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("virtual_executors"), out } });
    });
    router.add("POST", QStringLiteral("/api/virtual-executors"), [this, json](const ApiCall &call) {
        if (Status allowed
            = m_policy.require(call.caller, AccessPolicy::HubAction::CreateVirtualExecutor);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto name = call.text(QLatin1StringView("name"), true);
        if (!name)
            return ApiResponse::fromError(name.error());
        auto runtime = call.text(QLatin1StringView("runtime"));
        if (!runtime)
            return ApiResponse::fromError(runtime.error());
        const QJsonValue executor = call.body.value(QLatin1String("executor_id"));
        if (!executor.isDouble())
            return ApiResponse::error(400, QStringLiteral("invalid_request"),
                QStringLiteral("\"executor_id\" is required"));
        auto created = m_virtualExecutors.create(*name, executor.toInteger(), *runtime,
            QStringLiteral("user:%1").arg(call.caller.userName));
        if (!created)
            return ApiResponse::fromError(created.error());
        return ApiResponse::ok(json(*created), 201);
    });
}

void ExecutorRoutes::registerIn(ApiRouter &router)
{
    registerVirtualExecutorRoutes(router);
    router.add("GET", QStringLiteral("/api/executors"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::ListExecutors);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto records = m_store.list();
        if (!records)
            return ApiResponse::fromError(records.error());
        QJsonArray out;
        for (const ExecutorRecord &record : std::as_const(*records))
            out.append(executorJson(record));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("executors"), out } });
    });

    router.add("GET", QStringLiteral("/api/executors/{id}"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::ReadExecutor);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto record = m_store.find(call.id());
        if (!record)
            return ApiResponse::fromError(record.error());
        return ApiResponse::ok(executorJson(*record));
    });

    router.add("POST", QStringLiteral("/api/executors"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::EnrollExecutor);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto name = call.text(QLatin1StringView("name"), true);
        if (!name)
            return ApiResponse::fromError(name.error());
        if (*name == OwnExecutor::kName)
            return ApiResponse::fromError(Error::make(QStringLiteral("name_reserved"),
                QStringLiteral("\"%1\" names the hub's own executor (cloop hub "
                               "serve --executor); choose another name")
                    .arg(*name)));
        std::chrono::seconds ttl { 24 * 3600 };
        if (const QJsonValue ttlValue = call.body.value(QLatin1String("token_ttl"));
            !ttlValue.isUndefined()) {
            auto parsed = util::parseDuration(ttlValue.toString());
            if (!parsed)
                return ApiResponse::fromError(parsed.error());
            ttl = *parsed;
        }
        auto enrollment
            = m_store.enroll(*name, QStringLiteral("user:%1").arg(call.caller.userName), ttl);
        if (!enrollment)
            return ApiResponse::fromError(enrollment.error());
        identity::EnrollmentBundle bundle;
        bundle.kind = identity::EnrollmentBundle::Kind::Executor;
        bundle.hub = m_identity.publicUrl;
        bundle.token = enrollment->token;
        bundle.pins = m_identity.pin;
        const QString encoded = bundle.encode();
        m_events.publish(HubEvent { QStringLiteral("executor.enrolled"),
            { { QStringLiteral("id"), enrollment->executor.id },
                { QStringLiteral("name"), enrollment->executor.name } },
            std::nullopt });
        return ApiResponse::ok(
            QJsonObject { { QStringLiteral("executor"), executorJson(enrollment->executor) },
                { QStringLiteral("bundle"), encoded },
                { QStringLiteral("command"),
                    bundle.tokenFileCommand(
                        QStringLiteral("cloop executor agent"), QStringLiteral("agent.bundle")) },
                { QStringLiteral("token_expires_at"), toDbTime(enrollment->tokenExpiresAt) } },
            201);
    });

    router.add("POST", QStringLiteral("/api/executors/{id}/revoke"), [this](const ApiCall &call) {
        if (Status allowed = m_policy.require(call.caller, AccessPolicy::HubAction::RevokeExecutor);
            !allowed)
            return ApiResponse::fromError(allowed.error());
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto revoked = m_store.revoke(
            call.id(), QStringLiteral("user:%1").arg(call.caller.userName), *reason);
        if (!revoked)
            return ApiResponse::fromError(revoked.error());
        m_events.publish(HubEvent { QStringLiteral("executor.revoked"),
            { { QStringLiteral("id"), revoked->id }, { QStringLiteral("name"), revoked->name },
                { QStringLiteral("by"), call.caller.userName },
                { QStringLiteral("reason"), *reason } },
            std::nullopt });
        return ApiResponse::ok(executorJson(*revoked));
    });
}
} // namespace cloop::hub
