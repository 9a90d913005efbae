#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/auditlog.h"

namespace cloop::hub {

class AccessPolicy;
class Database;

// The audit log as hub administrators read it. Entries are written by the
// stores, in the transaction of the change they record.
class AuditService
{
public:
    AuditService(Database &db, const AccessPolicy &policy, const Clock &clock);

    // `since`: an ISO 8601 time, or a duration back from now ("2h"); empty:
    // from the start. `action`: only entries of that action ("forwarder.bind").
    // Read once the caller may read the log.
    Result<QList<AuditEntry>> entries(
        const ApiPrincipal &caller, const QString &since, const QString &action);

private:
    Database &m_db;
    const AccessPolicy &m_policy;
    const Clock &m_clock;
};

} // namespace cloop::hub
