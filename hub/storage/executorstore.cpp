#include "hub/storage/executorstore.h"

#include "hub/storage/database.h"

#include <QJsonDocument>

namespace cloop::hub {

ExecutorStore::ExecutorStore(Database &db)
    : EnrolledDaemonStore(db, kExecutorTables, QLatin1StringView("capabilities"))
{ }

Status ExecutorStore::readOwnColumns(const Rows &row, int first, ExecutorRecord &record) const
{
    record.capabilities = QJsonDocument::fromJson(row.value(first).toString().toUtf8()).object();
    return {};
}

Result<NewExecutorEnrollment> ExecutorStore::enroll(
    const QString &name, const QString &actor, std::chrono::seconds tokenTtl)
{
    auto enrolled = EnrolledDaemonStore::enroll(name, actor, tokenTtl, {}, {});
    if (!enrolled)
        return enrolled.error();
    return NewExecutorEnrollment { enrolled->record, enrolled->token.token,
        enrolled->token.expiresAt };
}

Result<NewExecutorEnrollment> ExecutorStore::reissue(
    qint64 id, const QString &actor, std::chrono::seconds tokenTtl)
{
    auto issued = reissueToken(id, actor, tokenTtl);
    if (!issued)
        return issued.error();
    return NewExecutorEnrollment { issued->record, issued->token.token, issued->token.expiresAt };
}

Result<std::pair<ExecutorRecord, QString>> ExecutorStore::redeem(const QString &token)
{
    return redeemToken(token);
}

Result<ExecutorRecord> ExecutorStore::findActive(const QString &name)
{
    auto found = select(QStringLiteral("name = ? AND revoked_at IS NULL"), { name });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return Error::make(QStringLiteral("not_found"),
            QStringLiteral("no executor named \"%1\" (see cloop executor list)")
                .arg(name.left(80)));
    return found->first();
}

Status ExecutorStore::recordHello(qint64 id, const QString &software, int protocol,
    const QJsonObject &capabilities, const QString &channel)
{
    Database::Transaction transaction(m_db);
    if (Status recorded = EnrolledDaemonStore::recordHello(id, software, protocol, channel);
        !recorded)
        return recorded;
    if (Status stored = setCapabilities(id, capabilities); !stored)
        return stored;
    return transaction.commit();
}

Status ExecutorStore::setCapabilities(qint64 id, const QJsonObject &capabilities)
{
    auto updated = m_db.query(QStringLiteral("UPDATE executors SET capabilities = ? WHERE id = ?"),
        { QString::fromUtf8(QJsonDocument(capabilities).toJson(QJsonDocument::Compact)), id });
    if (!updated)
        return updated.error();
    return {};
}

} // namespace cloop::hub
