#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace cloop::hub {

class Database;

namespace auditaction {
inline constexpr QLatin1StringView kForwarderEnroll { "forwarder.enroll" };
inline constexpr QLatin1StringView kForwarderReissue { "forwarder.reissue" };
inline constexpr QLatin1StringView kForwarderRedeem { "forwarder.redeem" };
inline constexpr QLatin1StringView kForwarderRevoke { "forwarder.revoke" };
inline constexpr QLatin1StringView kExecutorEnroll { "executor.enroll" };
inline constexpr QLatin1StringView kExecutorReissue { "executor.reissue" };
inline constexpr QLatin1StringView kExecutorRedeem { "executor.redeem" };
inline constexpr QLatin1StringView kExecutorRevoke { "executor.revoke" };
inline constexpr QLatin1StringView kVirtualExecutorCreate { "executor.virtual_create" };
inline constexpr QLatin1StringView kExecutorHarnessInstall { "executor.harness_install" };
inline constexpr QLatin1StringView kRunStart { "run.start" };
inline constexpr QLatin1StringView kRunCancel { "run.cancel" };
inline constexpr QLatin1StringView kRunDeviceReattach { "run.device_reattach" };
inline constexpr QLatin1StringView kForwarderBind { "forwarder.bind" };
inline constexpr QLatin1StringView kForwarderUnbind { "forwarder.unbind" };
inline constexpr QLatin1StringView kBindingExpired { "forwarder.binding_expired" };
inline constexpr QLatin1StringView kForwarderRequest { "forwarder.request" };
inline constexpr QLatin1StringView kRequestExpired { "forwarder.request_expired" };
inline constexpr QLatin1StringView kRequestCancelled { "forwarder.request_cancelled" };
inline constexpr QLatin1StringView kForwarderApprove { "forwarder.approve" };
inline constexpr QLatin1StringView kForwarderDeny { "forwarder.deny" };
inline constexpr QLatin1StringView kProjectAdd { "project.add" };
inline constexpr QLatin1StringView kProjectRole { "project.role" };
inline constexpr QLatin1StringView kUserAdd { "user.add" };
inline constexpr QLatin1StringView kApiTokenCreate { "token.create" };
inline constexpr QLatin1StringView kApiTokenRevoke { "token.revoke" };
inline constexpr QLatin1StringView kReleaseAdd { "release.add" };
inline constexpr QLatin1StringView kExecutorUpgrade { "executor.upgrade" };
inline constexpr QLatin1StringView kExecutorUpgradeOutcome { "executor.upgrade.outcome" };
inline constexpr QLatin1StringView kForwarderUpgrade { "forwarder.upgrade" };
inline constexpr QLatin1StringView kForwarderUpgradeOutcome { "forwarder.upgrade.outcome" };
} // namespace auditaction

struct AuditEntry
{
    qint64 id = 0;
    QDateTime at;
    QString actor;
    QString action;
    QString subject;
    QJsonObject details;
    // A forwarder's or executor's name, for a subject such as "forwarder:3",
    // and for an actor such as "executor:2".
    QString subjectName;
    QString actorName;
};

// Append-only: there is no update or delete. Callers append inside the
// transaction of the change they record, so a change and its audit entry
// exist together or not at all.
class AuditLog
{
public:
    explicit AuditLog(Database &db)
        : m_db(db)
    { }

    Status append(const QString &actor, QLatin1StringView action, const QString &subject,
        const QJsonObject &details = {});
    Result<QList<AuditEntry>> entries(const QDateTime &since = {}, const QString &action = {});

private:
    Status nameDaemons(QList<AuditEntry> &entries);

    Database &m_db;
};

} // namespace cloop::hub
