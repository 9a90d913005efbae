#include "hub/storage/releasestore.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

namespace cloop::hub {

namespace {
const QString kColumns = QStringLiteral(
    "SELECT id, package, version, channel, git_commit, sha256, key_id, file_name, size_bytes, "
    "signature, added_at, added_by FROM releases");

ReleaseRecord readRelease(const Rows &q)
{
    ReleaseRecord record;
    record.id = q.value(0).toLongLong();
    record.statement = release::ReleaseStatement { q.value(1).toString(), q.value(2).toString(),
        q.value(3).toString(), q.value(4).toString(),
        QByteArray::fromHex(q.value(5).toString().toLatin1()) };
    record.keyId = q.value(6).toString();
    record.fileName = q.value(7).toString();
    record.sizeBytes = q.value(8).toLongLong();
    record.signatureFile = q.value(9).toString().toUtf8();
    record.addedAt = fromDbTime(q.value(10));
    record.addedBy = q.value(11).toString();
    return record;
}
} // namespace

Result<ReleaseRecord> ReleaseStore::add(const release::ReleaseSignature &signature,
    const QString &fileName, qint64 sizeBytes, const QString &actor)
{
    const release::ReleaseStatement &statement = signature.statement;
    Database::Transaction transaction(m_db);
    auto existing = m_db.queryAll(kColumns + QStringLiteral(" WHERE package = ? AND version = ?"),
        { statement.package, statement.version }, readRelease);
    if (!existing)
        return existing.error();
    if (!existing->isEmpty())
        return Error::make(QStringLiteral("release_exists"),
            QStringLiteral("the hub offers %1 %2 already (added %3 by %4)")
                .arg(statement.package, statement.version,
                    existing->constFirst().addedAt.toString(Qt::ISODate),
                    existing->constFirst().addedBy));
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO releases (package, version, channel, git_commit, sha256, "
                       "key_id, file_name, size_bytes, signature, added_at, added_by) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        { statement.package, statement.version, statement.channel, statement.commit,
            QString::fromLatin1(statement.sha256.toHex()), signature.keyId, fileName, sizeBytes,
            QString::fromUtf8(signature.toFile()), toDbTime(m_db.now()), actor });
    if (!inserted)
        return inserted.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kReleaseAdd,
            QStringLiteral("release:%1 %2").arg(statement.package, statement.version),
            { { QStringLiteral("channel"), statement.channel },
                { QStringLiteral("commit"), statement.commit },
                { QStringLiteral("sha256"), QString::fromLatin1(statement.sha256.toHex()) },
                { QStringLiteral("key"), signature.keyId } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    auto added = m_db.queryAll(kColumns + QStringLiteral(" WHERE package = ? AND version = ?"),
        { statement.package, statement.version }, readRelease);
    if (!added)
        return added.error();
    if (added->isEmpty())
        return Error::make(QStringLiteral("db"), QStringLiteral("the release was not written"));
    return added->constFirst();
}

Result<QList<ReleaseRecord>> ReleaseStore::list()
{
    return m_db.queryAll(kColumns + QStringLiteral(" ORDER BY package, id"), {}, readRelease);
}

} // namespace cloop::hub
