#include "hub/storage/forwarderstore.h"

#include "common/crypto/secrets.h"
#include "hub/storage/auditlog.h"
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
    return Error::make(QStringLiteral("not_found"), QStringLiteral("no forwarder with id %1").arg(id));
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

Result<NewEnrollment> ForwarderStore::enroll(const QString &name, const protocol::DeviceSpec &device,
                                             const QString &actor, std::chrono::seconds tokenTtl)
{
    if (Status valid = validateName(name); !valid)
        return valid.error();
    if (tokenTtl.count() < 1 || tokenTtl > kMaxTokenTtl)
        return Error::make(QStringLiteral("invalid_ttl"),
                           QStringLiteral("the enrollment token's lifetime must be between 1s and 7d"));

    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    auto clash = m_db.query(QStringLiteral("SELECT id FROM forwarders WHERE name = ? AND revoked_at IS NULL"),
                            {name});
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
            QStringLiteral("INSERT INTO forwarders (name, device_kind, device_spec, created_at, created_by) "
                           "VALUES (?, ?, ?, ?, ?) RETURNING id"),
            {name, device.kindName(),
             QString::fromUtf8(QJsonDocument(device.toJson()).toJson(QJsonDocument::Compact)),
             createdAt, actor});
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(QStringLiteral("storage_error"), QStringLiteral("forwarder insert returned no id"));
    const qint64 id = inserted->value(0).toLongLong();

    NewEnrollment enrollment;
    enrollment.token = secrets::generate(secrets::SecretKind::ForwarderEnrollmentToken);
    enrollment.tokenExpiresAt = QDateTime::currentDateTimeUtc().addSecs(tokenTtl.count());
    auto token = m_db.query(QStringLiteral("INSERT INTO enrollment_tokens (forwarder_id, token_hash, "
                                           "created_at, expires_at) VALUES (?, ?, ?, ?)"),
                            {id, secrets::sha256Hex(enrollment.token), createdAt,
                             toDbTime(enrollment.tokenExpiresAt)});
    if (!token)
        return token.error();
    if (Status audited = AuditLog(m_db).append(
                actor, auditaction::kForwarderEnroll, QStringLiteral("forwarder:%1").arg(id),
                {{QStringLiteral("name"), name},
                 {QStringLiteral("device"), device.toJson()},
                 {QStringLiteral("token_expires_at"), toDbTime(enrollment.tokenExpiresAt)}});
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
    const auto kind = secrets::kindOf(token);
    if (kind != secrets::SecretKind::ForwarderEnrollmentToken)
        return Error::make(QStringLiteral("wrong_credential_type"),
                           QStringLiteral("%1 cannot enroll a forwarder").arg(secrets::describe(kind)), true);

    Database::Transaction transaction(m_db);
    if (!transaction.begin())
        return transaction.begin().error();
    const QString hash = secrets::sha256Hex(token);
    auto lookup = m_db.query(QStringLiteral("SELECT t.forwarder_id, t.expires_at, t.redeemed_at, f.revoked_at "
                                            "FROM enrollment_tokens t JOIN forwarders f ON f.id = t.forwarder_id "
                                            "WHERE t.token_hash = ?"),
                             {hash});
    if (!lookup)
        return lookup.error();
    if (!lookup->next())
        return Error::make(QStringLiteral("unknown_token"),
                           QStringLiteral("the hub does not know this enrollment token"), true);
    const qint64 forwarderId = lookup->value(0).toLongLong();
    const QDateTime expiresAt = fromDbTime(lookup->value(1));
    if (!lookup->value(2).isNull())
        return Error::make(QStringLiteral("token_used"),
                           QStringLiteral("this enrollment token was already used; enroll the "
                                          "forwarder again for a new bundle"),
                           true);
    if (!lookup->value(3).isNull())
        return Error::make(QStringLiteral("revoked"),
                           QStringLiteral("forwarder %1 was revoked").arg(forwarderId), true);
    const QString redeemedAt = now();
    if (expiresAt <= QDateTime::currentDateTimeUtc())
        return Error::make(QStringLiteral("token_expired"),
                           QStringLiteral("this enrollment token expired at %1; enroll the forwarder "
                                          "again for a new bundle")
                                   .arg(toDbTime(expiresAt)),
                           true);
    // The guard on redeemed_at makes the row change once even if two hub
    // members race on the same token.
    auto claimed = m_db.query(QStringLiteral("UPDATE enrollment_tokens SET redeemed_at = ? "
                                             "WHERE token_hash = ? AND redeemed_at IS NULL"),
                              {redeemedAt, hash});
    if (!claimed)
        return claimed.error();
    if (claimed->numRowsAffected() != 1)
        return Error::make(QStringLiteral("token_used"),
                           QStringLiteral("this enrollment token was already used"), true);

    RedeemedEnrollment redeemed;
    redeemed.credential = secrets::generate(secrets::SecretKind::ForwarderCredential);
    auto credential = m_db.query(QStringLiteral("INSERT INTO forwarder_credentials (forwarder_id, "
                                                "credential_hash, created_at) VALUES (?, ?, ?)"),
                                 {forwarderId, secrets::sha256Hex(redeemed.credential), redeemedAt});
    if (!credential)
        return credential.error();
    auto enrolled = m_db.query(QStringLiteral("UPDATE forwarders SET enrolled_at = ? WHERE id = ?"),
                               {redeemedAt, forwarderId});
    if (!enrolled)
        return enrolled.error();
    if (Status audited = AuditLog(m_db).append(QStringLiteral("forwarder:%1").arg(forwarderId),
                                               auditaction::kForwarderRedeem,
                                               QStringLiteral("forwarder:%1").arg(forwarderId));
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    auto record = find(forwarderId);
    if (!record)
        return record.error();
    redeemed.forwarder = *record;
    return redeemed;
}

Result<ForwarderRecord> ForwarderStore::authenticate(const QString &credential)
{
    const auto kind = secrets::kindOf(credential);
    if (kind != secrets::SecretKind::ForwarderCredential)
        return Error::make(QStringLiteral("wrong_credential_type"),
                           QStringLiteral("%1 cannot authenticate a forwarder").arg(secrets::describe(kind)),
                           true);
    auto q = m_db.query(QStringLiteral("SELECT forwarder_id, revoked_at FROM forwarder_credentials "
                                       "WHERE credential_hash = ?"),
                        {secrets::sha256Hex(credential)});
    if (!q)
        return q.error();
    if (!q->next())
        return Error::make(QStringLiteral("unknown_credential"),
                           QStringLiteral("the hub does not know this forwarder credential; enroll again"),
                           true);
    const qint64 id = q->value(0).toLongLong();
    auto record = find(id);
    if (!record)
        return record.error();
    if (!q->value(1).isNull() || record->isRevoked())
        return Error::make(QStringLiteral("revoked"),
                           QStringLiteral("forwarder %1 (%2) was revoked; it cannot connect again")
                                   .arg(id)
                                   .arg(record->name),
                           true);
    return record;
}

Result<ForwarderRecord> ForwarderStore::find(qint64 id)
{
    auto q = m_db.query(kSelectColumns + QStringLiteral(" WHERE id = ?"), {id});
    if (!q)
        return q.error();
    if (!q->next())
        return notFound(id);
    return readRecord(*q);
}

Result<QList<ForwarderRecord>> ForwarderStore::list(bool includeRevoked)
{
    auto q = m_db.query(kSelectColumns + (includeRevoked ? QString() : QStringLiteral(" WHERE revoked_at IS NULL"))
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

Result<ForwarderRecord> ForwarderStore::revoke(qint64 id, const QString &actor, const QString &reason)
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
    const QString revokedAt = now();
    const std::pair<QString, QVariantList> updates[] = {
        {QStringLiteral("UPDATE forwarders SET revoked_at = ?, revoked_by = ? WHERE id = ?"),
         {revokedAt, actor, id}},
        {QStringLiteral("UPDATE forwarder_credentials SET revoked_at = ? "
                        "WHERE forwarder_id = ? AND revoked_at IS NULL"),
         {revokedAt, id}},
        // An outstanding bundle must not enroll a revoked forwarder.
        {QStringLiteral("UPDATE enrollment_tokens SET expires_at = ? "
                        "WHERE forwarder_id = ? AND redeemed_at IS NULL"),
         {revokedAt, id}},
    };
    for (const auto &[sql, binds] : updates) {
        auto updated = m_db.query(sql, binds);
        if (!updated)
            return updated.error();
    }
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kForwarderRevoke,
                                               QStringLiteral("forwarder:%1").arg(id),
                                               {{QStringLiteral("name"), existing->name},
                                                {QStringLiteral("reason"), reason}});
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return find(id);
}

Status ForwarderStore::touchLastSeen(qint64 id)
{
    auto updated = m_db.query(QStringLiteral("UPDATE forwarders SET last_seen_at = ? WHERE id = ?"), {now(), id});
    if (!updated)
        return updated.error();
    return {};
}

} // namespace cloop::hub
