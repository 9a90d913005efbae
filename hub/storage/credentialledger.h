#pragma once

#include "common/crypto/secrets.h"
#include "common/result.h"

#include <QDateTime>
#include <QString>

#include <chrono>

namespace cloop::hub {

class Database;

// Where one kind of daemon keeps its records, its one-time tokens and its
// long-lived credentials: forwarders and executor agents enroll the same
// way, in tables of their own.
struct DaemonTables
{
    QLatin1StringView daemons; // "forwarders"
    QLatin1StringView tokens; // "enrollment_tokens"
    QLatin1StringView credentials; // "forwarder_credentials"
    QLatin1StringView ownerColumn; // "forwarder_id"
    secrets::SecretKind tokenKind;
    secrets::SecretKind credentialKind;
    QLatin1StringView noun; // "forwarder", in messages and audit subjects
    QLatin1StringView aNoun; // "a forwarder", in messages
    QLatin1StringView command; // "cloop forward", the CLI's commands for it, in advice
    // Audited when a daemon is enrolled, given a new token, its token
    // redeemed, it is revoked.
    QLatin1StringView enrollAction;
    QLatin1StringView reissueAction;
    QLatin1StringView redeemAction;
    QLatin1StringView revokeAction;
};

extern const DaemonTables kForwarderTables;
extern const DaemonTables kExecutorTables;

// One-time enrollment tokens redeemed for long-lived credentials, stored as
// SHA-256 hashes only. Runs inside the caller's transaction where it has one.
class CredentialLedger
{
public:
    CredentialLedger(Database &db, const DaemonTables &tables)
        : m_db(db)
        , m_tables(tables)
    { }

    struct IssuedToken
    {
        QString token; // plaintext, shown once
        QDateTime expiresAt;
    };
    Result<IssuedToken> issueToken(qint64 ownerId, std::chrono::seconds ttl);

    struct Redeemed
    {
        qint64 ownerId = 0;
        QString credential; // plaintext, sent once
    };
    // Single use: of concurrent redemptions exactly one succeeds.
    Result<Redeemed> redeem(const QString &token);

    // The owner of a live credential (its daemon may still be revoked).
    Result<qint64> authenticate(const QString &credential);

    // Revokes every credential and voids every unredeemed token of the owner.
    Status revokeAll(qint64 ownerId, const QDateTime &now);
    // Voids the owner's unredeemed tokens only: a bundle that was lost or
    // leaked must not enroll the daemon once a new one is issued.
    Status voidTokens(qint64 ownerId, const QDateTime &now);

    static constexpr std::chrono::seconds kDefaultTokenTtl { 24 * 3600 };
    static constexpr std::chrono::seconds kMaxTokenTtl { 7 * 24 * 3600 };
    static Status validateTokenTtl(std::chrono::seconds ttl);

private:
    Database &m_db;
    const DaemonTables &m_tables;
};

} // namespace cloop::hub
