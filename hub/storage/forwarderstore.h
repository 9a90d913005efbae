#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <chrono>

namespace cloop::hub {

class Database;

struct ForwarderRecord
{
    qint64 id = 0;
    QString name;
    protocol::DeviceSpec device;
    QDateTime createdAt;
    QString createdBy;
    QDateTime enrolledAt; // invalid until the token was redeemed
    QDateTime revokedAt; // invalid while active
    QString revokedBy;
    QDateTime lastSeenAt;

    bool isRevoked() const { return revokedAt.isValid(); }
};

struct NewEnrollment
{
    ForwarderRecord forwarder;
    QString token; // plaintext, shown once
    QDateTime tokenExpiresAt;
};

struct RedeemedEnrollment
{
    ForwarderRecord forwarder;
    QString credential; // plaintext, sent once to the daemon
};

// Forwarders, their one-time enrollment tokens and their long-lived
// credentials. Secrets are stored as SHA-256 hashes only.
class ForwarderStore
{
public:
    static constexpr std::chrono::seconds kDefaultTokenTtl { 24 * 3600 };
    static constexpr std::chrono::seconds kMaxTokenTtl { 7 * 24 * 3600 };

    explicit ForwarderStore(Database &db)
        : m_db(db)
    { }

    Result<NewEnrollment> enroll(const QString &name, const protocol::DeviceSpec &device,
        const QString &actor, std::chrono::seconds tokenTtl = kDefaultTokenTtl);
    // Single use: of two concurrent redemptions exactly one succeeds.
    Result<RedeemedEnrollment> redeem(const QString &token);
    Result<ForwarderRecord> authenticate(const QString &credential);
    Result<ForwarderRecord> find(qint64 id);
    Result<QList<ForwarderRecord>> list(bool includeRevoked = true);
    Result<ForwarderRecord> revoke(qint64 id, const QString &actor, const QString &reason);
    Status touchLastSeen(qint64 id);

    static Status validateName(const QString &name);

private:
    Database &m_db;
};

} // namespace cloop::hub
