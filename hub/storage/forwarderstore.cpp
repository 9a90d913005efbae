#include "hub/storage/forwarderstore.h"

#include "common/api/daemonname.h"
#include "hub/storage/database.h"

#include <QJsonDocument>

namespace cloop::hub {

ForwarderStore::ForwarderStore(Database &db)
    : EnrolledDaemonStore(db, kForwarderTables, QLatin1StringView("device_spec"))
{ }

Status ForwarderStore::validateName(const QString &name)
{
    return api::validateDaemonName(name, QLatin1StringView("forwarder"));
}

Status ForwarderStore::readOwnColumns(const Rows &row, int first, ForwarderRecord &record) const
{
    auto device = protocol::DeviceSpec::fromJson(
        QJsonDocument::fromJson(row.value(first).toString().toUtf8()).object());
    if (!device)
        return Error::make(QStringLiteral("storage_error"),
            QStringLiteral("forwarder %1 has an unreadable device record: %2")
                .arg(record.id)
                .arg(device.error().message));
    record.device = *device;
    return {};
}

Result<NewEnrollment> ForwarderStore::enroll(const QString &name,
    const protocol::DeviceSpec &device, const QString &actor, std::chrono::seconds tokenTtl)
{
    auto enrolled = EnrolledDaemonStore::enroll(name, actor, tokenTtl,
        { { QStringLiteral("device_kind"), device.kindName() },
            { QStringLiteral("device_spec"),
                QString::fromUtf8(
                    QJsonDocument(device.toJson()).toJson(QJsonDocument::Compact)) } },
        { { QStringLiteral("device"), device.toJson() } });
    if (!enrolled)
        return enrolled.error();
    return NewEnrollment { enrolled->record, enrolled->token.token, enrolled->token.expiresAt };
}

Result<NewEnrollment> ForwarderStore::reissue(
    qint64 id, const QString &actor, std::chrono::seconds tokenTtl)
{
    auto issued = reissueToken(id, actor, tokenTtl);
    if (!issued)
        return issued.error();
    return NewEnrollment { issued->record, issued->token.token, issued->token.expiresAt };
}

Result<RedeemedEnrollment> ForwarderStore::redeem(const QString &token)
{
    auto redeemed = redeemToken(token);
    if (!redeemed)
        return redeemed.error();
    return RedeemedEnrollment { redeemed->first, redeemed->second };
}

} // namespace cloop::hub
