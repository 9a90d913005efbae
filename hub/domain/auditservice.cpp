#include "hub/domain/auditservice.h"

#include "common/util/clock.h"
#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"

namespace cloop::hub {

AuditService::AuditService(Database &db, const AccessPolicy &policy, const Clock &clock)
    : m_db(db)
    , m_policy(policy)
    , m_clock(clock)
{ }

Result<QList<AuditEntry>> AuditService::entries(
    const ApiPrincipal &caller, const QString &since, const QString &action)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::ReadAuditLog); !allowed)
        return allowed.error();
    QDateTime from;
    if (!since.isEmpty()) {
        from = QDateTime::fromString(since, Qt::ISODateWithMs);
        if (!from.isValid()) {
            auto back = util::parseDuration(since);
            if (!back)
                return Error::make(QStringLiteral("invalid_duration"),
                    QStringLiteral("\"since\" is an ISO 8601 time or a duration such as 2h; "
                                   "not \"%1\"")
                        .arg(since.left(60)));
            from = m_clock.now().addSecs(-back->count());
        }
    }
    return AuditLog(m_db).entries(from, action);
}

} // namespace cloop::hub
