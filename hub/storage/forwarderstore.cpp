#include "hub/storage/forwarderstore.h"

#include "common/crypto/secrets.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/credentialledger.h"
#include "hub/storage/database.h"

#include <QJsonDocument>
#include <QRegularExpression>

namespace cloop::hub {

namespace {

const QString kSelectColumns = QStringLiteral(
    "SELECT id, name, device_spec, created_at, created_by, enrolled_at, revoked_at, revoked_by, "
    "last_seen_at FROM forwarders");

Result<ForwarderRecord> readRecord(const Rows &q)
{
    ForwarderRecord record;
    record.id = q.value(0).toLongLong();
    record.name = q.value(1).toString();
    auto device = protocol::DeviceSpec::fromJson(
        QJsonDocument::fromJson(q.value(2).toString().toUtf8()).object());
    if (!device)
        return Error::make(QStringLiteral("storage_error"),
            QStringLiteral("forwarder %1 has an unreadable device record: %2")
                .arg(record.id)
                .arg(device.error().message));
    record.device = *device;
    record.createdAt = fromDbTime(q.value(3));
    record.createdBy = q.value(4).toString();
    record.enrolledAt = fromDbTime(q.value(5));
    record.revokedAt = fromDbTime(q.value(6));
    record.revokedBy = q.value(7).toString();
    record.lastSeenAt = fromDbTime(q.value(8));
    return record;
}

Error notFound(qint64 id)
{
    return Error::make(
        QStringLiteral("not_found"), QStringLiteral("no forwarder with id %1").arg(id));
}

QString now()
{
    return toDbTime(QDateTime::currentDateTimeUtc());
}

} // namespace

Status ForwarderStore::validateName(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("^[a-z0-9][a-z0-9._-]{0,62}$"));
    if (!pattern.match(name).hasMatch())
        return Error::make(QStringLiteral("invalid_name"),
            QStringLiteral("forwarder name \"%1\" must be 1-63 characters of a-z, 0-9, "
                           "'.', '_' or '-', starting with a letter or digit")
                .arg(name.left(80)));
    return {};
}

Result<NewEnrollment> ForwarderStore::enroll(const QString &name,
    const protocol::DeviceSpec &device, const QString &actor, std::chrono::seconds tokenTtl)
{
    if (Status valid = validateName(name); !valid)
        return valid.error();
    if (Status valid = CredentialLedger::validateTokenTtl(tokenTtl); !valid)
        return valid.error();

    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    auto clash = m_db.query(
        QStringLiteral("SELECT id FROM forwarders WHERE name = ? AND revoked_at IS NULL"),
        { name });
    if (!clash)
        return clash.error();
    if (clash->next())
        return Error::make(QStringLiteral("name_taken"),
            QStringLiteral("a forwarder named \"%1\" already exists (id %2); revoke it "
                           "first or choose another name")
                .arg(name)
                .arg(clash->value(0).toLongLong()));

    const QString createdAt = now();
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO forwarders (name, device_kind, device_spec, created_at, created_by) "
            "VALUES (?, ?, ?, ?, ?) RETURNING id"),
        { name, device.kindName(),
            QString::fromUtf8(QJsonDocument(device.toJson()).toJson(QJsonDocument::Compact)),
            createdAt, actor });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(
            QStringLiteral("storage_error"), QStringLiteral("forwarder insert returned no id"));
    const qint64 id = inserted->value(0).toLongLong();

    NewEnrollment enrollment;
    auto token = CredentialLedger(m_db, kForwarderTables).issueToken(id, tokenTtl);
    if (!token)
        return token.error();
    enrollment.token = token->token;
    enrollment.tokenExpiresAt = token->expiresAt;
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kForwarderEnroll,
            QStringLiteral("forwarder:%1").arg(id),
            { { QStringLiteral("name"), name }, { QStringLiteral("device"), device.toJson() },
                { QStringLiteral("token_expires_at"), toDbTime(enrollment.tokenExpiresAt) } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();

    auto record = find(id);
    if (!record)
        return record.error();
    enrollment.forwarder = *record;
    return enrollment;
}

Result<RedeemedEnrollment> ForwarderStore::redeem(const QString &token)
{
    auto redeemed = CredentialLedger(m_db, kForwarderTables).redeem(token);
    if (!redeemed)
        return redeemed.error();
    auto record = find(redeemed->ownerId);
    if (!record)
        return record.error();
    return RedeemedEnrollment { *record, redeemed->credential };
}

Result<ForwarderRecord> ForwarderStore::authenticate(const QString &credential)
{
    auto ownerId = CredentialLedger(m_db, kForwarderTables).authenticate(credential);
    if (!ownerId)
        return ownerId.error();
    auto record = find(*ownerId);
    if (!record)
        return record.error();
    if (record->isRevoked())
        return Error::make(QStringLiteral("revoked"),
            QStringLiteral("forwarder %1 (%2) was revoked; it cannot connect again")
                .arg(record->id)
                .arg(record->name),
            true);
    return record;
}

Result<ForwarderRecord> ForwarderStore::find(qint64 id)
{
    auto q = m_db.query(kSelectColumns + QStringLiteral(" WHERE id = ?"), { id });
    if (!q)
        return q.error();
    if (!q->next())
        return notFound(id);
    return readRecord(*q);
}

Result<QList<ForwarderRecord>> ForwarderStore::list(bool includeRevoked)
{
    auto q = m_db.query(kSelectColumns
        + (includeRevoked ? QString() : QStringLiteral(" WHERE revoked_at IS NULL"))
        + QStringLiteral(" ORDER BY id"));
    if (!q)
        return q.error();
    QList<ForwarderRecord> out;
    while (q->next()) {
        auto record = readRecord(*q);
        if (!record)
            return record.error();
        out.append(*record);
    }
    return out;
}

Result<ForwarderRecord> ForwarderStore::revoke(
    qint64 id, const QString &actor, const QString &reason)
{
    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    auto existing = find(id);
    if (!existing)
        return existing.error();
    if (existing->isRevoked())
        return Error::make(QStringLiteral("already_revoked"),
            QStringLiteral("forwarder %1 was already revoked at %2")
                .arg(id)
                .arg(toDbTime(existing->revokedAt)));
    const QDateTime revokedAt = QDateTime::currentDateTimeUtc();
    auto updated = m_db.query(
        QStringLiteral("UPDATE forwarders SET revoked_at = ?, revoked_by = ? WHERE id = ?"),
        { toDbTime(revokedAt), actor, id });
    if (!updated)
        return updated.error();
    if (Status voided = CredentialLedger(m_db, kForwarderTables).revokeAll(id, revokedAt); !voided)
        return voided.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kForwarderRevoke,
            QStringLiteral("forwarder:%1").arg(id),
            { { QStringLiteral("name"), existing->name }, { QStringLiteral("reason"), reason } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return find(id);
}

Status ForwarderStore::touchLastSeen(qint64 id)
{
    auto updated = m_db.query(
        QStringLiteral("UPDATE forwarders SET last_seen_at = ? WHERE id = ?"), { now(), id });
    if (!updated)
        return updated.error();
    return {};
}

} // namespace cloop::hub
