#include "hub/storage/auditlog.h"

#include "hub/storage/database.h"

#include <QHash>
#include <QJsonDocument>
#include <QSet>

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
    if (Status named = nameDaemons(out); !named)
        return named.error();
    return out;
}

Status AuditLog::nameDaemons(QList<AuditEntry> &entries)
{
    // The daemons' names, looked up once per table for the ids the entries
    // name (the log outgrows the tables, so no join on its text).
    for (const auto &[prefix, table] :
        { std::pair { QStringLiteral("forwarder:"), QStringLiteral("forwarders") },
            std::pair { QStringLiteral("executor:"), QStringLiteral("executors") } }) {
        const auto idIn = [&prefix](const QString &written) -> qint64 {
            bool isNumber = false;
            const qint64 id
                = written.startsWith(prefix) ? written.mid(prefix.size()).toLongLong(&isNumber) : 0;
            return isNumber && id > 0 ? id : 0;
        };
        QSet<qint64> ids;
        for (const AuditEntry &entry : std::as_const(entries)) {
            for (const QString &written : { entry.subject, entry.actor })
                if (const qint64 id = idIn(written))
                    ids.insert(id);
        }
        if (ids.isEmpty())
            continue;
        QHash<qint64, QString> names;
        const QList<qint64> all(ids.cbegin(), ids.cend());
        constexpr qsizetype kChunk = 500;
        for (qsizetype from = 0; from < all.size(); from += kChunk) {
            const QList<qint64> chunk = all.mid(from, kChunk);
            QStringList marks;
            QVariantList binds;
            for (qint64 id : chunk) {
                marks.append(QStringLiteral("?"));
                binds.append(id);
            }
            auto q = m_db.query(QStringLiteral("SELECT id, name FROM %1 WHERE id IN (%2)")
                                    .arg(table, marks.join(QLatin1Char(','))),
                binds);
            if (!q)
                return q.error();
            while (q->next())
                names.insert(q->value(0).toLongLong(), q->value(1).toString());
        }
        for (AuditEntry &entry : entries) {
            if (const qint64 id = idIn(entry.subject))
                entry.subjectName = names.value(id);
            if (const qint64 id = idIn(entry.actor))
                entry.actorName = names.value(id);
        }
    }
    return {};
}

} // namespace cloop::hub
