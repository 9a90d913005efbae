#pragma once

#include "common/result.h"

#include <QString>

namespace cloop::hub {

class Database;

// Who is calling the admin API.
struct ApiPrincipal
{
    qint64 userId = 0;
    QString userName;
    bool hubAdmin = false;
};

// Users' API tokens, stored as SHA-256 hashes only.
class ApiTokenStore
{
public:
    explicit ApiTokenStore(Database &db) : m_db(db) { }

    // The hub's first administrator, created on first start.
    Result<qint64> ensureHubAdmin(const QString &name);
    // Returns the plaintext once; only its hash is kept.
    Result<QString> createToken(qint64 userId, const QString &label, const QString &actor);
    // Refuses other kinds of secret by name (a forwarder credential is not an API token).
    Result<ApiPrincipal> authenticate(const QString &bearer);

private:
    Database &m_db;
};

} // namespace cloop::hub
