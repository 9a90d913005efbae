#include "hub/storage/enrolleddaemonstore.h"

#include "common/api/daemonname.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"

#include <QStringList>

namespace cloop::hub {

namespace {
// The shared columns, in the order read() reads them; a kind's own follow.
constexpr QLatin1StringView kSharedColumns {
    "id, name, created_at, created_by, enrolled_at, revoked_at, revoked_by, last_seen_at, "
    "software, protocol, channel"
};
constexpr int kSharedColumnCount = 11;
} // namespace

template <typename Record> Result<Record> EnrolledDaemonStore<Record>::read(const Rows &row) const
{
    Record record;
    record.id = row.value(0).toLongLong();
    record.name = row.value(1).toString();
    record.createdAt = fromDbTime(row.value(2));
    record.createdBy = row.value(3).toString();
    record.enrolledAt = fromDbTime(row.value(4));
    record.revokedAt = fromDbTime(row.value(5));
    record.revokedBy = row.value(6).toString();
    record.lastSeenAt = fromDbTime(row.value(7));
    record.software = row.value(8).toString();
    record.protocol = row.value(9).toInt();
    record.channel = row.value(10).toString();
    if (Status own = readOwnColumns(row, kSharedColumnCount, record); !own)
        return own.error();
    return record;
}

template <typename Record>
Result<QList<Record>> EnrolledDaemonStore<Record>::select(
    const QString &where, const QVariantList &binds)
{
    auto q = m_db.query(QStringLiteral("SELECT %1, %2 FROM %3%4 ORDER BY id")
                            .arg(kSharedColumns, m_ownColumns, m_tables.daemons,
                                where.isEmpty() ? QString() : QStringLiteral(" WHERE ") + where),
        binds);
    if (!q)
        return q.error();
    QList<Record> out;
    out.reserve(q->size());
    while (q->next()) {
        auto record = read(*q);
        if (!record)
            return record.error();
        out.append(std::move(*record));
    }
    return out;
}

template <typename Record> Result<Record> EnrolledDaemonStore<Record>::find(qint64 id)
{
    auto found = select(QStringLiteral("id = ?"), { id });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return Error::make(QStringLiteral("not_found"),
            QStringLiteral("no %1 with id %2").arg(m_tables.noun).arg(id));
    return found->first();
}

template <typename Record>
Result<QList<Record>> EnrolledDaemonStore<Record>::list(bool includeRevoked)
{
    return select(includeRevoked ? QString() : QStringLiteral("revoked_at IS NULL"), {});
}

template <typename Record> Result<QSet<qint64>> EnrolledDaemonStore<Record>::revokedIds()
{
    auto ids = m_db.queryAll(
        QStringLiteral("SELECT id FROM %1 WHERE revoked_at IS NOT NULL").arg(m_tables.daemons), {},
        [](const Rows &q) { return q.value(0).toLongLong(); });
    if (!ids)
        return ids.error();
    return QSet<qint64>(ids->cbegin(), ids->cend());
}

template <typename Record>
Result<Record> EnrolledDaemonStore<Record>::authenticate(const QString &credential)
{
    auto ownerId = ledger().authenticate(credential);
    if (!ownerId)
        return ownerId.error();
    auto record = find(*ownerId);
    if (!record)
        return record.error();
    if (record->isRevoked())
        return Error::make(QStringLiteral("revoked"),
            QStringLiteral("%1 %2 (%3) was revoked; it cannot connect again")
                .arg(m_tables.noun)
                .arg(record->id)
                .arg(record->name),
            true);
    return record;
}

template <typename Record>
Result<std::pair<Record, QString>> EnrolledDaemonStore<Record>::redeemToken(const QString &token)
{
    auto redeemed = ledger().redeem(token);
    if (!redeemed)
        return redeemed.error();
    auto record = find(redeemed->ownerId);
    if (!record)
        return record.error();
    return std::make_pair(*record, redeemed->credential);
}

template <typename Record>
Result<qint64> EnrolledDaemonStore<Record>::insert(
    const QString &name, const QString &actor, const QList<std::pair<QString, QVariant>> &ownValues)
{
    auto clash
        = m_db.query(QStringLiteral("SELECT id FROM %1 WHERE name = ? AND revoked_at IS NULL")
                         .arg(m_tables.daemons),
            { name });
    if (!clash)
        return clash.error();
    if (clash->next())
        return Error::make(QStringLiteral("name_taken"),
            QStringLiteral("%1 named \"%2\" already exists (id %3); revoke it first or choose "
                           "another name")
                .arg(m_tables.aNoun, name)
                .arg(clash->value(0).toLongLong()));
    QStringList columns { QStringLiteral("name") };
    QVariantList values { name };
    for (const auto &[column, value] : ownValues) {
        columns.append(column);
        values.append(value);
    }
    columns << QStringLiteral("created_at") << QStringLiteral("created_by");
    values << toDbTime(m_db.now()) << actor;
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO %1 (%2) VALUES (%3) RETURNING id")
            .arg(m_tables.daemons, columns.join(QStringLiteral(", ")),
                QStringList(columns.size(), QStringLiteral("?")).join(QStringLiteral(", "))),
        values);
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(QStringLiteral("storage_error"),
            QStringLiteral("%1 insert returned no id").arg(m_tables.noun));
    return inserted->value(0).toLongLong();
}

template <typename Record>
Status EnrolledDaemonStore<Record>::recordHello(
    qint64 id, const QString &software, int protocol, const QString &channel)
{
    auto updated
        = m_db.query(QStringLiteral("UPDATE %1 SET software = ?, protocol = ?, channel = ?, "
                                    "last_seen_at = ? WHERE id = ?")
                         .arg(m_tables.daemons),
            { software, protocol, channel.isEmpty() ? QVariant() : QVariant(channel),
                toDbTime(m_db.now()), id });
    if (!updated)
        return updated.error();
    return {};
}

template <typename Record>
Result<typename EnrolledDaemonStore<Record>::Enrolled> EnrolledDaemonStore<Record>::enroll(
    const QString &name, const QString &actor, std::chrono::seconds tokenTtl,
    const QList<std::pair<QString, QVariant>> &ownValues, const QJsonObject &auditDetails)
{
    if (Status valid = api::validateDaemonName(name, m_tables.noun); !valid)
        return valid.error();
    if (Status valid = CredentialLedger::validateTokenTtl(tokenTtl); !valid)
        return valid.error();
    Database::Transaction transaction(m_db);
    auto id = insert(name, actor, ownValues);
    if (!id)
        return id.error();
    auto token = ledger().issueToken(*id, tokenTtl);
    if (!token)
        return token.error();
    QJsonObject details = auditDetails;
    details.insert(QStringLiteral("name"), name);
    details.insert(QStringLiteral("token_expires_at"), toDbTime(token->expiresAt));
    if (Status audited = AuditLog(m_db).append(actor, m_tables.enrollAction,
            QStringLiteral("%1:%2").arg(m_tables.noun).arg(*id), details);
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    auto record = find(*id);
    if (!record)
        return record.error();
    return Enrolled { *record, *token };
}

template <typename Record>
Result<typename EnrolledDaemonStore<Record>::Enrolled> EnrolledDaemonStore<Record>::reissueToken(
    qint64 id, const QString &actor, std::chrono::seconds tokenTtl)
{
    if (Status valid = CredentialLedger::validateTokenTtl(tokenTtl); !valid)
        return valid.error();
    Database::Transaction transaction(m_db);
    auto existing = find(id);
    if (!existing)
        return existing.error();
    if (existing->isRevoked())
        return Error::make(QStringLiteral("already_revoked"),
            QStringLiteral("%1 %2 (%3) was revoked; enroll a new one instead")
                .arg(m_tables.noun)
                .arg(id)
                .arg(existing->name));
    if (existing->enrolledAt.isValid())
        return Error::make(QStringLiteral("already_enrolled"),
            QStringLiteral("%1 %2 (%3) redeemed its token at %4 and holds a credential; a new "
                           "token would enroll nothing")
                .arg(m_tables.noun)
                .arg(id)
                .arg(existing->name, toDbTime(existing->enrolledAt)));
    if (Status voided = ledger().voidTokens(id, m_db.now()); !voided)
        return voided.error();
    auto token = ledger().issueToken(id, tokenTtl);
    if (!token)
        return token.error();
    if (Status audited = AuditLog(m_db).append(actor, m_tables.reissueAction,
            QStringLiteral("%1:%2").arg(m_tables.noun).arg(id),
            { { QStringLiteral("name"), existing->name },
                { QStringLiteral("token_expires_at"), toDbTime(token->expiresAt) } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return Enrolled { *existing, *token };
}

template <typename Record>
Result<Record> EnrolledDaemonStore<Record>::revoke(
    qint64 id, const QString &actor, const QString &reason)
{
    Database::Transaction transaction(m_db);
    auto existing = find(id);
    if (!existing)
        return existing.error();
    if (existing->isRevoked())
        return Error::make(QStringLiteral("already_revoked"),
            QStringLiteral("%1 %2 was already revoked at %3")
                .arg(m_tables.noun)
                .arg(id)
                .arg(toDbTime(existing->revokedAt)));
    const QDateTime now = m_db.now();
    auto updated
        = m_db.query(QStringLiteral("UPDATE %1 SET revoked_at = ?, revoked_by = ? WHERE id = ?")
                         .arg(m_tables.daemons),
            { toDbTime(now), actor, id });
    if (!updated)
        return updated.error();
    if (Status voided = ledger().revokeAll(id, now); !voided)
        return voided.error();
    if (Status audited = AuditLog(m_db).append(actor, m_tables.revokeAction,
            QStringLiteral("%1:%2").arg(m_tables.noun).arg(id),
            { { QStringLiteral("name"), existing->name }, { QStringLiteral("reason"), reason } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = find(id);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

template <typename Record> Status EnrolledDaemonStore<Record>::touchLastSeen(qint64 id)
{
    auto updated = m_db.query(
        QStringLiteral("UPDATE %1 SET last_seen_at = ? WHERE id = ?").arg(m_tables.daemons),
        { toDbTime(m_db.now()), id });
    if (!updated)
        return updated.error();
    return {};
}

// The two kinds there are; the members are defined here, once.
template class EnrolledDaemonStore<ForwarderRecord>;
template class EnrolledDaemonStore<ExecutorRecord>;

} // namespace cloop::hub
