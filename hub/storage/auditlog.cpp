#include "hub/storage/auditlog.h"

#include "hub/storage/database.h"

#include <QJsonDocument>

namespace cloop::hub {

Status AuditLog::append(const QString &actor, QLatin1StringView action, const QString &subject,
    const QJsonObject &details)
{
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO audit_log (at, actor, action, subject, details) VALUES (?, ?, ?, ?, ?)"),
        { toDbTime(m_db.now()), actor, QString(action), subject,
            QString::fromUtf8(QJsonDocument(details).toJson(QJsonDocument::Compact)) });
    if (!inserted)
        return inserted.error();
    return {};
}

Result<QList<AuditEntry>> AuditLog::entries(const QDateTime &since, const QString &action)
{
    QString sql = QStringLiteral(
        "SELECT id, at, actor, action, subject, details FROM audit_log WHERE 1 = 1");
    QVariantList binds;
    if (since.isValid()) {
        sql += QStringLiteral(" AND at >= ?");
        binds.append(toDbTime(since));
    }
    if (!action.isEmpty()) {
        sql += QStringLiteral(" AND action = ?");
        binds.append(action);
    }
    auto q = m_db.query(sql + QStringLiteral(" ORDER BY id"), binds);
    if (!q)
        return q.error();
    QList<AuditEntry> out;
    while (q->next()) {
        AuditEntry entry;
        entry.id = q->value(0).toLongLong();
        entry.at = fromDbTime(q->value(1));
        entry.actor = q->value(2).toString();
        entry.action = q->value(3).toString();
        entry.subject = q->value(4).toString();
        entry.details = QJsonDocument::fromJson(q->value(5).toString().toUtf8()).object();
        out.append(entry);
    }
    return out;
}

} // namespace cloop::hub
