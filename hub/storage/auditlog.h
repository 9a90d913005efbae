#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace cloop::hub {

class Database;

namespace auditaction {
inline constexpr QLatin1StringView kForwarderEnroll{"forwarder.enroll"};
inline constexpr QLatin1StringView kForwarderRedeem{"forwarder.redeem"};
inline constexpr QLatin1StringView kForwarderRevoke{"forwarder.revoke"};
inline constexpr QLatin1StringView kApiTokenCreate{"token.create"};
} // namespace auditaction

struct AuditEntry
{
    qint64 id = 0;
    QDateTime at;
    QString actor;
    QString action;
    QString subject;
    QJsonObject details;
};

// Append-only: there is no update or delete. Callers append inside the
// transaction of the change they record, so a change and its audit entry
// exist together or not at all.
class AuditLog
{
public:
    explicit AuditLog(Database &db) : m_db(db) { }

    Status append(const QString &actor, QLatin1StringView action, const QString &subject,
                  const QJsonObject &details = {});
    Result<QList<AuditEntry>> entries(const QDateTime &since = {}, const QString &action = {});

private:
    Database &m_db;
};

} // namespace cloop::hub
