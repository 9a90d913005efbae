#pragma once

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/virtualexecutorstore.h"

#include <QJsonObject>

#include <utility>

namespace cloop::hub {

class AccessPolicy;
class Database;
class EventBus;

// Executor agents and virtual executors as people manage them: enrolled,
// revoked and created by hub administrators, listed and read by anyone with
// a role. Enrollments and revocations are published on the event bus
// (executor.enrolled, executor.revoked); the gateway answers a revocation
// by dropping the agent's live session. The agents themselves come in
// through the same service at their endpoint, and the dispatcher reads what
// they reported.
class ExecutorService
{
public:
    // The name the hub's own executor enrolls under; nobody else may take it.
    static constexpr QLatin1StringView kOwnExecutorName { "hub" };

    ExecutorService(Database &db, ExecutorStore &executors, VirtualExecutorStore &virtualExecutors,
        const AccessPolicy &policy, EventBus &events);

    // {"name", "token_ttl"}; read once the caller may enroll.
    Result<NewExecutorEnrollment> enroll(const ApiPrincipal &caller, const QJsonObject &body);
    // A new one-time token for an agent that never redeemed its first
    // ({"token_ttl"}); the earlier ones stop working.
    Result<NewExecutorEnrollment> reissue(
        const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body);
    // {"reason"}; read once the caller may revoke.
    Result<ExecutorRecord> revoke(
        const ApiPrincipal &caller, qint64 executorId, const QJsonObject &body);
    Result<QList<ExecutorRecord>> list(const ApiPrincipal &caller);
    Result<ExecutorRecord> find(const ApiPrincipal &caller, qint64 executorId);
    // For a hub administrator asking the agent to upgrade.
    Result<ExecutorRecord> findForUpgrade(const ApiPrincipal &caller, qint64 executorId);

    // {"name", "executor_id", "runtime"}; read once the caller may create one.
    Result<VirtualExecutorRecord> createVirtualExecutor(
        const ApiPrincipal &caller, const QJsonObject &body);
    Result<QList<VirtualExecutorRecord>> virtualExecutors(const ApiPrincipal &caller);

    // The agents' endpoint, where no person asks: an agent's first message
    // names its credential, or the token it redeems for one, and says what
    // it can do.
    Result<ExecutorRecord> authenticate(const QString &credential);
    Result<std::pair<ExecutorRecord, QString>> redeem(const QString &token);
    Status recordHello(qint64 executorId, const QString &software, int protocol,
        const QJsonObject &capabilities, const QString &channel = {});
    Status touchLastSeen(qint64 executorId);
    // A connected agent's new report (after a harness install), read as a
    // hello's is; a malformed one changes nothing.
    Status recordCapabilities(qint64 executorId, const QJsonObject &capabilities);

    // What the dispatcher plans with: the executor and its last report.
    Result<ExecutorRecord> forDispatch(qint64 executorId);

private:
    ExecutorStore &m_executors;
    VirtualExecutorStore &m_virtualExecutors;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    Database &m_db;
};

} // namespace cloop::hub
