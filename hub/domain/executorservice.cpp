#include "hub/domain/executorservice.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/protocol/agentcapabilities.h"
#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/requestfields.h"
#include "hub/storage/database.h"

namespace cloop::hub {

ExecutorService::ExecutorService(Database &db, ExecutorStore &executors,
    VirtualExecutorStore &virtualExecutors, const AccessPolicy &policy, EventBus &events)
    : m_executors(executors)
    , m_virtualExecutors(virtualExecutors)
    , m_policy(policy)
    , m_events(events)
    , m_db(db)
{ }

Result<NewExecutorEnrollment> ExecutorService::enroll(
    const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::EnrollExecutor);
        !allowed)
        return allowed.error();
    auto name = requestfields::text(body, QLatin1StringView("name"), true);
    if (!name)
        return name.error();
    if (*name == kOwnExecutorName)
        return Error::make(QStringLiteral("name_reserved"),
            QStringLiteral("\"%1\" names the hub's own executor (cloop hub serve --executor); "
                           "choose another name")
                .arg(*name));
    auto ttl = requestfields::duration(
        body, QLatin1StringView("token_ttl"), CredentialLedger::kDefaultTokenTtl);
    if (!ttl)
        return ttl.error();
    Database::Transaction transaction(m_db);
    auto enrollment = m_executors.enroll(*name, caller.actor(), *ttl);
    if (!enrollment)
        return enrollment.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kExecutorEnrolled),
        { { QStringLiteral("id"), enrollment->executor.id },
            { QStringLiteral("name"), enrollment->executor.name } },
        std::nullopt });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "enrolled executor" << enrollment->executor.id
                            << enrollment->executor.name;
    return enrollment;
}

Result<NewExecutorEnrollment> ExecutorService::reissue(
    const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::EnrollExecutor);
        !allowed)
        return allowed.error();
    auto ttl = requestfields::duration(
        body, QLatin1StringView("token_ttl"), CredentialLedger::kDefaultTokenTtl);
    if (!ttl)
        return ttl.error();
    auto enrollment = m_executors.reissue(executorId, caller.actor(), *ttl);
    if (!enrollment)
        return enrollment.error();
    qCInfo(lcHub).noquote() << caller.userName << "issued a new enrollment token for executor"
                            << executorId << enrollment->executor.name;
    return enrollment;
}

Result<ExecutorRecord> ExecutorService::revoke(
    const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::RevokeExecutor);
        !allowed)
        return allowed.error();
    auto reason = requestfields::text(body, QLatin1StringView("reason"));
    if (!reason)
        return reason.error();
    Database::Transaction transaction(m_db);
    auto revoked = m_executors.revoke(executorId, caller.actor(), *reason);
    if (!revoked)
        return revoked.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kExecutorRevoked),
        { { QStringLiteral("id"), revoked->id }, { QStringLiteral("name"), revoked->name },
            { QStringLiteral("by"), caller.userName }, { QStringLiteral("reason"), *reason } },
        std::nullopt });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "revoked executor" << executorId << revoked->name;
    return revoked;
}

Result<QList<ExecutorRecord>> ExecutorService::list(const ApiPrincipal &caller)
{
    return m_policy.ifAllowed(
        caller, AccessPolicy::HubAction::ListExecutors, [&] { return m_executors.list(); });
}

Result<ExecutorRecord> ExecutorService::find(const ApiPrincipal &caller, qint64 executorId)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::ReadExecutor,
        [&] { return m_executors.find(executorId); });
}

Result<ExecutorRecord> ExecutorService::findForUpgrade(
    const ApiPrincipal &caller, qint64 executorId)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::UpgradeDevice,
        [&] { return m_executors.find(executorId); });
}

Result<VirtualExecutorRecord> ExecutorService::createVirtualExecutor(
    const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::CreateVirtualExecutor);
        !allowed)
        return allowed.error();
    auto name = requestfields::text(body, QLatin1StringView("name"), true);
    if (!name)
        return name.error();
    auto runtime = requestfields::text(body, QLatin1StringView("runtime"));
    if (!runtime)
        return runtime.error();
    const QJsonValue executor = body.value(QLatin1String("executor_id"));
    if (!executor.isDouble())
        return Error::make(
            QStringLiteral("invalid_request"), QStringLiteral("\"executor_id\" is required"));
    return m_virtualExecutors.create(*name, executor.toInteger(), *runtime, caller.actor());
}

Result<QList<VirtualExecutorRecord>> ExecutorService::virtualExecutors(const ApiPrincipal &caller)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::ListVirtualExecutors,
        [&] { return m_virtualExecutors.list(); });
}

Result<ExecutorRecord> ExecutorService::authenticate(const QString &credential)
{
    return m_executors.authenticate(credential);
}

Result<std::pair<ExecutorRecord, QString>> ExecutorService::redeem(const QString &token)
{
    return m_executors.redeem(token);
}

Status ExecutorService::recordHello(qint64 executorId, const QString &software, int protocol,
    const QJsonObject &capabilities, const QString &channel)
{
    return m_executors.recordHello(executorId, software, protocol, capabilities, channel);
}

Status ExecutorService::recordCapabilities(qint64 executorId, const QJsonObject &capabilities)
{
    auto parsed = protocol::AgentCapabilities::fromJson(capabilities);
    if (!parsed)
        return Error::make(QStringLiteral("protocol_error"),
            QStringLiteral("the agent's capabilities are malformed: %1")
                .arg(parsed.error().message));
    return m_executors.setCapabilities(executorId, parsed->toJson());
}

Status ExecutorService::touchLastSeen(qint64 executorId)
{
    return m_executors.touchLastSeen(executorId);
}

Result<ExecutorRecord> ExecutorService::forDispatch(qint64 executorId)
{
    return m_executors.find(executorId);
}

} // namespace cloop::hub
