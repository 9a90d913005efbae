#include "hub/storage/apitokenstore.h"

#include "common/crypto/secrets.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

#include <QDateTime>

namespace cloop::hub {

Result<qint64> ApiTokenStore::ensureHubAdmin(const QString &name)
{
    auto existing = m_db.query(QStringLiteral("SELECT id FROM users WHERE name = ?"), { name });
    if (!existing)
        return existing.error();
    if (existing->next())
        return existing->value(0).toLongLong();
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO users (name, hub_admin, created_at) VALUES (?, 1, ?) RETURNING id"),
        { name, toDbTime(m_db.now()) });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(ErrorCode::StorageError, QStringLiteral("user insert returned no id"));
    return inserted->value(0).toLongLong();
}

Result<QString> ApiTokenStore::createToken(
    qint64 userId, const QString &label, const QString &actor)
{
    const QString token = secrets::generate(secrets::SecretKind::ApiToken);
    Database::Transaction transaction(m_db);
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO api_tokens (user_id, token_hash, label, created_at) "
                       "VALUES (?, ?, ?, ?)"),
        { userId, secrets::sha256Hex(token), label.isNull() ? QStringLiteral("") : label,
            toDbTime(m_db.now()) });
    if (!inserted)
        return inserted.error();
    auto owner = m_db.query(QStringLiteral("SELECT name FROM users WHERE id = ?"), { userId });
    if (!owner)
        return owner.error();
    if (!owner->next())
        return Error::make(
            QStringLiteral("not_found"), QStringLiteral("no user with id %1").arg(userId));
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kApiTokenCreate,
            QStringLiteral("user:%1").arg(owner->value(0).toString()),
            { { QStringLiteral("label"), label } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return token;
}

Result<ApiPrincipal> ApiTokenStore::authenticate(const QString &bearer)
{
    const auto kind = secrets::kindOf(bearer);
    if (kind != secrets::SecretKind::ApiToken && kind != secrets::SecretKind::Unknown)
        return Error::make(QStringLiteral("wrong_credential_type"),
            QStringLiteral("%1 cannot be used on the admin API; it takes a user's API token")
                .arg(secrets::describe(kind)));
    return livePrincipal(QStringLiteral("t.token_hash = ?"), secrets::sha256Hex(bearer),
        QStringLiteral("unknown or revoked API token"));
}

Result<ApiPrincipal> ApiTokenStore::principalOf(qint64 tokenId)
{
    return livePrincipal(
        QStringLiteral("t.id = ?"), tokenId, QStringLiteral("the API token was revoked"));
}

Result<ApiPrincipal> ApiTokenStore::livePrincipal(
    const QString &condition, const QVariant &value, const QString &refusal)
{
    auto q = m_db.query(QStringLiteral("SELECT u.id, u.name, u.hub_admin, t.id FROM api_tokens t "
                                       "JOIN users u ON u.id = t.user_id WHERE ")
            + condition + QStringLiteral(" AND t.revoked_at IS NULL"),
        { value });
    if (!q)
        return q.error();
    if (!q->next())
        return Error::make(QStringLiteral("unauthorized"), refusal);
    return ApiPrincipal { q->value(0).toLongLong(), q->value(1).toString(),
        q->value(2).toInt() != 0, q->value(3).toLongLong(), {} };
}

namespace {
const QString kTokenColumns
    = QStringLiteral("SELECT t.id, t.user_id, u.name, t.label, t.created_at, t.revoked_at "
                     "FROM api_tokens t JOIN users u ON u.id = t.user_id");

ApiTokenRecord readToken(const Rows &q)
{
    return ApiTokenRecord { q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString(),
        q.value(3).toString(), fromDbTime(q.value(4)), fromDbTime(q.value(5)) };
}
} // namespace

Result<QList<ApiTokenRecord>> ApiTokenStore::list(std::optional<qint64> userId)
{
    auto q = userId ? m_db.query(
                 kTokenColumns + QStringLiteral(" WHERE t.user_id = ? ORDER BY t.id"), { *userId })
                    : m_db.query(kTokenColumns + QStringLiteral(" ORDER BY t.id"));
    if (!q)
        return q.error();
    QList<ApiTokenRecord> out;
    while (q->next())
        out.append(readToken(*q));
    return out;
}

Result<ApiTokenRecord> ApiTokenStore::find(qint64 tokenId)
{
    return m_db.queryOne(kTokenColumns + QStringLiteral(" WHERE t.id = ?"), { tokenId }, readToken,
        Error::make(
            QStringLiteral("not_found"), QStringLiteral("no API token with id %1").arg(tokenId)));
}

Result<ApiTokenRecord> ApiTokenStore::revoke(qint64 tokenId, const QString &actor)
{
    Database::Transaction transaction(m_db);
    auto token = find(tokenId);
    if (!token)
        return token.error();
    if (token->revokedAt.isValid())
        return Error::make(QStringLiteral("already_revoked"),
            QStringLiteral("API token %1 was already revoked").arg(tokenId));
    auto updated = m_db.query(
        QStringLiteral("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
        { toDbTime(m_db.now()), tokenId });
    if (!updated)
        return updated.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kApiTokenRevoke,
            QStringLiteral("user:%1").arg(token->userName),
            { { QStringLiteral("token"), tokenId }, { QStringLiteral("label"), token->label } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = find(tokenId);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

} // namespace cloop::hub
