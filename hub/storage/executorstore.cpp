#include "hub/storage/executorstore.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/credentialledger.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"

#include <QJsonDocument>

namespace cloop::hub {

namespace {

const QString kColumns = QStringLiteral("SELECT id, name, created_at, created_by, enrolled_at, "
                                        "revoked_at, revoked_by, last_seen_at, software, "
                                        "protocol, capabilities FROM executors");

ExecutorRecord readExecutor(const Rows &q)
{
    ExecutorRecord record;
    record.id = q.value(0).toLongLong();
    record.name = q.value(1).toString();
    record.createdAt = fromDbTime(q.value(2));
    record.createdBy = q.value(3).toString();
    record.enrolledAt = fromDbTime(q.value(4));
    record.revokedAt = fromDbTime(q.value(5));
    record.revokedBy = q.value(6).toString();
    record.lastSeenAt = fromDbTime(q.value(7));
    record.software = q.value(8).toString();
    record.protocol = q.value(9).toInt();
    record.capabilities = QJsonDocument::fromJson(q.value(10).toString().toUtf8()).object();
    return record;
}

} // namespace

Result<NewExecutorEnrollment> ExecutorStore::enroll(
    const QString &name, const QString &actor, std::chrono::seconds tokenTtl)
{
    if (Status valid = ForwarderStore::validateName(name); !valid)
        return Error::make(QStringLiteral("invalid_name"),
            QStringLiteral(
                "executor name \"%1\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
                .arg(name.left(80)));
    if (Status valid = CredentialLedger::validateTokenTtl(tokenTtl); !valid)
        return valid.error();
    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    auto clash = m_db.query(
        QStringLiteral("SELECT id FROM executors WHERE name = ? AND revoked_at IS NULL"), { name });
    if (!clash)
        return clash.error();
    if (clash->next())
        return Error::make(QStringLiteral("name_taken"),
            QStringLiteral(
                "an executor named \"%1\" already exists (id %2); revoke it first or choose "
                "another name")
                .arg(name)
                .arg(clash->value(0).toLongLong()));
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO executors (name, created_at, created_by) VALUES (?, ?, ?) "
                       "RETURNING id"),
        { name, toDbTime(QDateTime::currentDateTimeUtc()), actor });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(
            QStringLiteral("storage_error"), QStringLiteral("executor insert returned no id"));
    const qint64 id = inserted->value(0).toLongLong();
    auto token = CredentialLedger(m_db, kExecutorTables).issueToken(id, tokenTtl);
    if (!token)
        return token.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kExecutorEnroll,
            QStringLiteral("executor:%1").arg(id),
            { { QStringLiteral("name"), name },
                { QStringLiteral("token_expires_at"), toDbTime(token->expiresAt) } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    auto record = find(id);
    if (!record)
        return record.error();
    return NewExecutorEnrollment { *record, token->token, token->expiresAt };
}

Result<std::pair<ExecutorRecord, QString>> ExecutorStore::redeem(const QString &token)
{
    auto redeemed = CredentialLedger(m_db, kExecutorTables).redeem(token);
    if (!redeemed)
        return redeemed.error();
    auto record = find(redeemed->ownerId);
    if (!record)
        return record.error();
    return std::make_pair(*record, redeemed->credential);
}

Result<ExecutorRecord> ExecutorStore::authenticate(const QString &credential)
{
    auto ownerId = CredentialLedger(m_db, kExecutorTables).authenticate(credential);
    if (!ownerId)
        return ownerId.error();
    auto record = find(*ownerId);
    if (!record)
        return record.error();
    if (record->isRevoked())
        return Error::make(QStringLiteral("revoked"),
            QStringLiteral("executor %1 (%2) was revoked; it cannot connect again")
                .arg(record->id)
                .arg(record->name),
            true);
    return record;
}

Result<ExecutorRecord> ExecutorStore::find(qint64 id)
{
    auto q = m_db.query(kColumns + QStringLiteral(" WHERE id = ?"), { id });
    if (!q)
        return q.error();
    if (!q->next())
        return Error::make(
            QStringLiteral("not_found"), QStringLiteral("no executor with id %1").arg(id));
    return readExecutor(*q);
}

Result<ExecutorRecord> ExecutorStore::findActive(const QString &name)
{
    auto q
        = m_db.query(kColumns + QStringLiteral(" WHERE name = ? AND revoked_at IS NULL"), { name });
    if (!q)
        return q.error();
    if (!q->next())
        return Error::make(QStringLiteral("not_found"),
            QStringLiteral("no executor named \"%1\" (see cloop executor list)")
                .arg(name.left(80)));
    return readExecutor(*q);
}

Result<QList<ExecutorRecord>> ExecutorStore::list(bool includeRevoked)
{
    auto q = m_db.query(kColumns
        + (includeRevoked ? QString() : QStringLiteral(" WHERE revoked_at IS NULL"))
        + QStringLiteral(" ORDER BY id"));
    if (!q)
        return q.error();
    QList<ExecutorRecord> out;
    while (q->next())
        out.append(readExecutor(*q));
    return out;
}

Result<ExecutorRecord> ExecutorStore::revoke(qint64 id, const QString &actor, const QString &reason)
{
    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    auto existing = find(id);
    if (!existing)
        return existing.error();
    if (existing->isRevoked())
        return Error::make(QStringLiteral("already_revoked"),
            QStringLiteral("executor %1 was already revoked at %2")
                .arg(id)
                .arg(toDbTime(existing->revokedAt)));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    auto updated = m_db.query(
        QStringLiteral("UPDATE executors SET revoked_at = ?, revoked_by = ? WHERE id = ?"),
        { toDbTime(now), actor, id });
    if (!updated)
        return updated.error();
    if (Status voided = CredentialLedger(m_db, kExecutorTables).revokeAll(id, now); !voided)
        return voided.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kExecutorRevoke,
            QStringLiteral("executor:%1").arg(id),
            { { QStringLiteral("name"), existing->name }, { QStringLiteral("reason"), reason } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return find(id);
}

Status ExecutorStore::recordHello(
    qint64 id, const QString &software, int protocol, const QJsonObject &capabilities)
{
    auto updated = m_db.query(
        QStringLiteral("UPDATE executors SET software = ?, protocol = ?, capabilities = ?, "
                       "last_seen_at = ? WHERE id = ?"),
        { software, protocol,
            QString::fromUtf8(QJsonDocument(capabilities).toJson(QJsonDocument::Compact)),
            toDbTime(QDateTime::currentDateTimeUtc()), id });
    if (!updated)
        return updated.error();
    return {};
}

Status ExecutorStore::touchLastSeen(qint64 id)
{
    auto updated = m_db.query(QStringLiteral("UPDATE executors SET last_seen_at = ? WHERE id = ?"),
        { toDbTime(QDateTime::currentDateTimeUtc()), id });
    if (!updated)
        return updated.error();
    return {};
}

} // namespace cloop::hub
