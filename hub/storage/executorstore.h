#pragma once

#include "common/result.h"
#include "hub/storage/enrolleddaemonstore.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <chrono>

namespace cloop::hub {

struct ExecutorRecord : EnrolledDaemonRecord
{
    // What the agent last said it can do, in its hello.
    QJsonObject capabilities;
};

struct NewExecutorEnrollment
{
    ExecutorRecord executor;
    QString token; // plaintext, shown once
    QDateTime tokenExpiresAt;
};

// Executor agents: the machines that run sandboxes. They enroll like
// forwarders (EnrolledDaemonStore), with credentials of their own kind, and
// report what they can do at every hello.
class ExecutorStore final : public EnrolledDaemonStore<ExecutorRecord>
{
public:
    explicit ExecutorStore(Database &db);

    Result<NewExecutorEnrollment> enroll(const QString &name, const QString &actor,
        std::chrono::seconds tokenTtl = CredentialLedger::kDefaultTokenTtl);
    // See EnrolledDaemonStore::reissueToken.
    Result<NewExecutorEnrollment> reissue(qint64 id, const QString &actor,
        std::chrono::seconds tokenTtl = CredentialLedger::kDefaultTokenTtl);
    // The executor and its credential (plaintext, sent once to the agent).
    Result<std::pair<ExecutorRecord, QString>> redeem(const QString &token);
    // The executor of that name that is not revoked (names are unique among those).
    Result<ExecutorRecord> findActive(const QString &name);
    // The agent's self-description, stored at every hello.
    // The hello's report, and the capabilities beside it.
    Status recordHello(qint64 id, const QString &software, int protocol,
        const QJsonObject &capabilities, const QString &channel = {});
    Status setCapabilities(qint64 id, const QJsonObject &capabilities);

private:
    Status readOwnColumns(const Rows &row, int first, ExecutorRecord &record) const override;
};

} // namespace cloop::hub
