#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"
#include "hub/storage/enrolleddaemonstore.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <chrono>

namespace cloop::hub {

struct ForwarderRecord : EnrolledDaemonRecord
{
    // The one device it carries, recorded at enrollment.
    protocol::DeviceSpec device;
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
// credentials: enrolled daemons (EnrolledDaemonStore) that carry a device.
class ForwarderStore final : public EnrolledDaemonStore<ForwarderRecord>
{
public:
    static constexpr std::chrono::seconds kDefaultTokenTtl = CredentialLedger::kDefaultTokenTtl;
    static constexpr std::chrono::seconds kMaxTokenTtl = CredentialLedger::kMaxTokenTtl;

    explicit ForwarderStore(Database &db);

    Result<NewEnrollment> enroll(const QString &name, const protocol::DeviceSpec &device,
        const QString &actor, std::chrono::seconds tokenTtl = kDefaultTokenTtl);
    // See EnrolledDaemonStore::reissueToken.
    Result<NewEnrollment> reissue(
        qint64 id, const QString &actor, std::chrono::seconds tokenTtl = kDefaultTokenTtl);
    // Single use: of two concurrent redemptions exactly one succeeds.
    Result<RedeemedEnrollment> redeem(const QString &token);

    static Status validateName(const QString &name);

private:
    Status readOwnColumns(const Rows &row, int first, ForwarderRecord &record) const override;
};

} // namespace cloop::hub
