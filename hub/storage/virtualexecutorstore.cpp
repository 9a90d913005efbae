#include "hub/storage/virtualexecutorstore.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"

#include <QRegularExpression>

namespace cloop::hub {

namespace {
const QString kColumns = QStringLiteral(
    "SELECT v.id, v.name, v.executor_id, e.name, v.runtime, v.created_at, v.created_by "
    "FROM virtual_executors v JOIN executors e ON e.id = v.executor_id");

VirtualExecutorRecord readVirtual(const Rows &q)
{
    return VirtualExecutorRecord { q.value(0).toLongLong(), q.value(1).toString(),
        q.value(2).toLongLong(), q.value(3).toString(), q.value(4).toString(),
        fromDbTime(q.value(5)), q.value(6).toString() };
}
} // namespace

Result<VirtualExecutorRecord> VirtualExecutorStore::create(
    const QString &name, qint64 executorId, const QString &runtime, const QString &actor)
{
    if (Status valid = ForwarderStore::validateName(name); !valid)
        return Error::make(QStringLiteral("invalid_name"),
            QStringLiteral(
                "virtual executor name \"%1\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
                .arg(name.left(80)));
    static const QRegularExpression runtimeName(QStringLiteral("\\A[a-z0-9][a-z0-9._-]{0,31}\\z"));
    if (!runtime.isEmpty() && !runtimeName.match(runtime).hasMatch())
        return Error::make(QStringLiteral("invalid_request"),
            QStringLiteral("\"%1\" is not an OCI runtime name (runc, crun, runsc, kata…)")
                .arg(runtime.left(40)));
    Database::Transaction transaction(m_db);
    auto executor = ExecutorStore(m_db).find(executorId);
    if (!executor)
        return executor.error();
    if (executor->isRevoked())
        return Error::make(QStringLiteral("executor_revoked"),
            QStringLiteral("executor %1 was revoked").arg(executorId));
    if (find(name))
        return Error::make(QStringLiteral("name_taken"),
            QStringLiteral("a virtual executor named \"%1\" exists").arg(name));
    auto inserted = m_db.query(
        QStringLiteral("INSERT INTO virtual_executors (name, executor_id, runtime, created_at, "
                       "created_by) VALUES (?, ?, ?, ?, ?)"),
        { name, executorId,
            runtime.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(runtime),
            toDbTime(m_db.now()), actor });
    if (!inserted)
        return inserted.error();
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kVirtualExecutorCreate,
            QStringLiteral("executor:%1").arg(executorId),
            { { QStringLiteral("name"), name }, { QStringLiteral("runtime"), runtime } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = find(name);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

Result<VirtualExecutorRecord> VirtualExecutorStore::find(const QString &name)
{
    return m_db.queryOne(kColumns + QStringLiteral(" WHERE v.name = ?"), { name }, readVirtual,
        Error::make(QStringLiteral("not_found"),
            QStringLiteral("no virtual executor named \"%1\"").arg(name.left(80))));
}

Result<QList<VirtualExecutorRecord>> VirtualExecutorStore::list()
{
    return m_db.queryAll(kColumns + QStringLiteral(" ORDER BY v.name"), {}, readVirtual);
}

} // namespace cloop::hub
