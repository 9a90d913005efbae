#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QVariant>

#include <optional>

namespace cloop::hub {

class Database;

// Who is calling the admin API.
struct ApiPrincipal
{
    qint64 userId = 0;
    QString userName;
    bool hubAdmin = false;
    qint64 tokenId = 0;
    // Set instead of a user when a forwarder or an agent presents its own
    // credential ("executor:3"): the release downloads are all it may reach.
    QString device;

    // How records and the audit log name the caller as the actor of a change.
    QString actor() const { return QStringLiteral("user:%1").arg(userName); }
};

// An API token as it can be shown: never the secret, which is not kept.
struct ApiTokenRecord
{
    qint64 id = 0;
    qint64 userId = 0;
    QString userName;
    QString label;
    QDateTime createdAt;
    QDateTime revokedAt;
};

// Users' API tokens, stored as SHA-256 hashes only.
class ApiTokenStore
{
public:
    explicit ApiTokenStore(Database &db)
        : m_db(db)
    { }

    // The hub's first administrator, created on first start.
    Result<qint64> ensureHubAdmin(const QString &name);
    // Returns the plaintext once; only its hash is kept.
    Result<QString> createToken(qint64 userId, const QString &label, const QString &actor);
    // Refuses other kinds of secret by name (a forwarder credential is not an API token).
    Result<ApiPrincipal> authenticate(const QString &bearer);
    // Who a token still speaks for, by its id: the check a long-lived
    // subscription repeats (refused once the token is revoked).
    Result<ApiPrincipal> principalOf(qint64 tokenId);

    Result<QList<ApiTokenRecord>> list(std::optional<qint64> userId);
    Result<ApiTokenRecord> find(qint64 tokenId);
    // Takes effect at once: the next call with it is refused.
    Result<ApiTokenRecord> revoke(qint64 tokenId, const QString &actor);

private:
    // The principal of a token matching `condition` that is not revoked.
    Result<ApiPrincipal> livePrincipal(
        const QString &condition, const QVariant &value, const QString &refusal);

    Database &m_db;
};

} // namespace cloop::hub
