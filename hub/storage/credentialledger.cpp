#include "hub/storage/credentialledger.h"

#include "common/util/duration.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

namespace cloop::hub {

const DaemonTables kForwarderTables {
    QLatin1StringView("forwarders"),
    QLatin1StringView("enrollment_tokens"),
    QLatin1StringView("forwarder_credentials"),
    QLatin1StringView("forwarder_id"),
    secrets::SecretKind::ForwarderEnrollmentToken,
    secrets::SecretKind::ForwarderCredential,
    QLatin1StringView("forwarder"),
    QLatin1StringView("a forwarder"),
    QLatin1StringView("cloop forward"),
    auditaction::kForwarderEnroll,
    auditaction::kForwarderReissue,
    auditaction::kForwarderRedeem,
    auditaction::kForwarderRevoke,
};

const DaemonTables kExecutorTables {
    QLatin1StringView("executors"),
    QLatin1StringView("executor_tokens"),
    QLatin1StringView("executor_credentials"),
    QLatin1StringView("executor_id"),
    secrets::SecretKind::AgentEnrollmentToken,
    secrets::SecretKind::AgentCredential,
    QLatin1StringView("executor"),
    QLatin1StringView("an executor"),
    QLatin1StringView("cloop executor"),
    auditaction::kExecutorEnroll,
    auditaction::kExecutorReissue,
    auditaction::kExecutorRedeem,
    auditaction::kExecutorRevoke,
};

Status CredentialLedger::validateTokenTtl(std::chrono::seconds ttl)
{
    if (ttl.count() < 1 || ttl > kMaxTokenTtl)
        return Error::make(QStringLiteral("invalid_ttl"),
            QStringLiteral("the enrollment token's lifetime must be between 1s and 7d"));
    return {};
}

Result<CredentialLedger::IssuedToken> CredentialLedger::issueToken(
    qint64 ownerId, std::chrono::seconds ttl)
{
    if (Status valid = validateTokenTtl(ttl); !valid)
        return valid.error();
    const QDateTime now = m_db.now();
    IssuedToken issued { secrets::generate(m_tables.tokenKind), now.addSecs(ttl.count()) };
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO %1 (%2, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)")
            .arg(m_tables.tokens, m_tables.ownerColumn),
        { ownerId, secrets::sha256Hex(issued.token), toDbTime(now), toDbTime(issued.expiresAt) });
    if (!inserted)
        return inserted.error();
    return issued;
}

Result<CredentialLedger::Redeemed> CredentialLedger::redeem(const QString &token)
{
    const auto kind = secrets::kindOf(token);
    if (kind != m_tables.tokenKind)
        return Error::make(QStringLiteral("wrong_credential_type"),
            QStringLiteral("%1 was given where %2 is needed")
                .arg(secrets::describe(kind), secrets::describe(m_tables.tokenKind)),
            true);
    Database::Transaction transaction(m_db);
    const QString hash = secrets::sha256Hex(token);
    auto lookup = m_db.query(
        QStringLiteral("SELECT t.%1, t.expires_at, t.redeemed_at, d.revoked_at FROM %2 t "
                       "JOIN %3 d ON d.id = t.%1 WHERE t.token_hash = ?")
            .arg(m_tables.ownerColumn, m_tables.tokens, m_tables.daemons),
        { hash });
    if (!lookup)
        return lookup.error();
    if (!lookup->next())
        return Error::make(QStringLiteral("unknown_token"),
            QStringLiteral("the hub does not know this enrollment token"), true);
    const qint64 ownerId = lookup->value(0).toLongLong();
    const QDateTime expiresAt = fromDbTime(lookup->value(1));
    if (!lookup->value(2).isNull())
        return Error::make(QStringLiteral("token_used"),
            QStringLiteral(
                "this enrollment token was already used; enroll the %1 again for a new bundle")
                .arg(m_tables.noun),
            true);
    if (!lookup->value(3).isNull())
        return Error::make(ErrorCode::Revoked,
            QStringLiteral("%1 %2 was revoked").arg(m_tables.noun).arg(ownerId), true);
    const QDateTime now = m_db.now();
    if (expiresAt <= now)
        return Error::make(QStringLiteral("token_expired"),
            QStringLiteral("this enrollment token expired at %1, or a newer one replaced it; a "
                           "hub administrator can issue a new bundle with `%2 reenroll %3`")
                .arg(util::formatUtcTime(expiresAt), m_tables.command)
                .arg(ownerId),
            true);
    // The guard on redeemed_at makes the row change once even if two hub
    // members race on the same token.
    auto claimed = m_db.query(
        QStringLiteral("UPDATE %1 SET redeemed_at = ? WHERE token_hash = ? AND redeemed_at IS NULL")
            .arg(m_tables.tokens),
        { toDbTime(now), hash });
    if (!claimed)
        return claimed.error();
    if (claimed->numRowsAffected() != 1)
        return Error::make(QStringLiteral("token_used"),
            QStringLiteral("this enrollment token was already used"), true);

    Redeemed redeemed { ownerId, secrets::generate(m_tables.credentialKind) };
    auto credential = m_db.query(
        QStringLiteral("INSERT INTO %1 (%2, credential_hash, created_at) VALUES (?, ?, ?)")
            .arg(m_tables.credentials, m_tables.ownerColumn),
        { ownerId, secrets::sha256Hex(redeemed.credential), toDbTime(now) });
    if (!credential)
        return credential.error();
    auto enrolled = m_db.query(
        QStringLiteral("UPDATE %1 SET enrolled_at = ? WHERE id = ?").arg(m_tables.daemons),
        { toDbTime(now), ownerId });
    if (!enrolled)
        return enrolled.error();
    const QString subject = QStringLiteral("%1:%2").arg(m_tables.noun).arg(ownerId);
    if (Status audited = AuditLog(m_db).append(subject, m_tables.redeemAction, subject); !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return redeemed;
}

Result<qint64> CredentialLedger::authenticate(const QString &credential)
{
    const auto kind = secrets::kindOf(credential);
    if (kind != m_tables.credentialKind)
        return Error::make(QStringLiteral("wrong_credential_type"),
            QStringLiteral("%1 was given where %2 is needed")
                .arg(secrets::describe(kind), secrets::describe(m_tables.credentialKind)),
            true);
    auto q = m_db.query(QStringLiteral("SELECT %1, revoked_at FROM %2 WHERE credential_hash = ?")
                            .arg(m_tables.ownerColumn, m_tables.credentials),
        { secrets::sha256Hex(credential) });
    if (!q)
        return q.error();
    if (!q->next())
        return Error::make(ErrorCode::UnknownCredential,
            QStringLiteral("the hub does not know this %1 credential; enroll again")
                .arg(m_tables.noun),
            true);
    const qint64 ownerId = q->value(0).toLongLong();
    if (!q->value(1).isNull())
        return Error::make(ErrorCode::Revoked,
            QStringLiteral("%1 %2 was revoked; it cannot connect again")
                .arg(m_tables.noun)
                .arg(ownerId),
            true);
    return ownerId;
}

Status CredentialLedger::revokeAll(qint64 ownerId, const QDateTime &now)
{
    auto credentials = m_db.query(
        QStringLiteral("UPDATE %1 SET revoked_at = ? WHERE %2 = ? AND revoked_at IS NULL")
            .arg(m_tables.credentials, m_tables.ownerColumn),
        { toDbTime(now), ownerId });
    if (!credentials)
        return credentials.error();
    // An outstanding bundle must not enroll a revoked daemon.
    return voidTokens(ownerId, now);
}

Status CredentialLedger::voidTokens(qint64 ownerId, const QDateTime &now)
{
    auto tokens = m_db.query(
        QStringLiteral("UPDATE %1 SET expires_at = ? WHERE %2 = ? AND redeemed_at IS NULL "
                       "AND expires_at > ?")
            .arg(m_tables.tokens, m_tables.ownerColumn),
        { toDbTime(now), ownerId, toDbTime(now) });
    if (!tokens)
        return tokens.error();
    return {};
}

} // namespace cloop::hub
