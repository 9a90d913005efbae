#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <chrono>

namespace cloop::hub {

class Database;

struct ExecutorRecord
{
    qint64 id = 0;
    QString name;
    QDateTime createdAt;
    QString createdBy;
    QDateTime enrolledAt;
    QDateTime revokedAt;
    QString revokedBy;
    QDateTime lastSeenAt;
    // What the agent last said about itself in its hello.
    QString software;
    int protocol = 0;
    QJsonObject capabilities;

    bool isRevoked() const { return revokedAt.isValid(); }
};

struct NewExecutorEnrollment
{
    ExecutorRecord executor;
    QString token; // plaintext, shown once
    QDateTime tokenExpiresAt;
};

// Executor agents: the machines that run sandboxes. They enroll like
// forwarders, with credentials of their own kind.
class ExecutorStore
{
public:
    explicit ExecutorStore(Database &db)
        : m_db(db)
    { }

    Result<NewExecutorEnrollment> enroll(const QString &name, const QString &actor,
        std::chrono::seconds tokenTtl = std::chrono::seconds(24 * 3600));
    Result<std::pair<ExecutorRecord, QString>> redeem(const QString &token);
    Result<ExecutorRecord> authenticate(const QString &credential);
    Result<ExecutorRecord> find(qint64 id);
    // The executor of that name that is not revoked (names are unique among those).
    Result<ExecutorRecord> findActive(const QString &name);
    Result<QList<ExecutorRecord>> list(bool includeRevoked = true);
    Result<ExecutorRecord> revoke(qint64 id, const QString &actor, const QString &reason);
    // The agent's self-description, stored at every hello.
    Status recordHello(
        qint64 id, const QString &software, int protocol, const QJsonObject &capabilities);
    Status touchLastSeen(qint64 id);

private:
    Database &m_db;
};

} // namespace cloop::hub
