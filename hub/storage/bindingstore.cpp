#include "hub/storage/bindingstore.h"

#include "common/util/duration.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

namespace cloop::hub {

namespace {

const QString kColumns = QStringLiteral(
    "SELECT b.id, b.forwarder_id, f.name, b.project_id, p.path, b.virtual_executor, "
    "b.target_interface, "
    "b.target_address, b.created_at, b.created_by, b.expires_at, b.request_id, b.ended_at, "
    "b.ended_by, "
    "b.end_kind, b.end_reason FROM bindings b JOIN forwarders f ON f.id = b.forwarder_id "
    "JOIN projects p ON p.id = b.project_id");

BindingRecord::State stateFromName(const QString &name)
{
    return api::Binding::parseState(name).value_or(BindingRecord::State::Active);
}

BindingRecord readBinding(const Rows &q)
{
    BindingRecord b;
    b.id = q.value(0).toLongLong();
    b.forwarderId = q.value(1).toLongLong();
    b.forwarderName = q.value(2).toString();
    b.projectId = q.value(3).toLongLong();
    b.projectPath = q.value(4).toString();
    b.terms.virtualExecutor = q.value(5).toString();
    b.terms.targetInterface = q.value(6).toString();
    b.terms.targetAddress = q.value(7).toString();
    b.createdAt = fromDbTime(q.value(8));
    b.createdBy = q.value(9).toString();
    b.expiresAt = fromDbTime(q.value(10));
    b.terms.ttl = std::chrono::seconds(b.createdAt.secsTo(b.expiresAt));
    if (!q.value(11).isNull())
        b.requestId = q.value(11).toLongLong();
    b.endedAt = fromDbTime(q.value(12));
    b.endedBy = q.value(13).toString();
    b.state = b.endedAt.isValid() ? stateFromName(q.value(14).toString())
                                  : BindingRecord::State::Active;
    b.endReason = q.value(15).toString();
    return b;
}

QVariant nullIfEmpty(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

QLatin1StringView auditActionFor(BindingRecord::State how)
{
    return how == BindingRecord::State::Expired ? auditaction::kBindingExpired
                                                : auditaction::kForwarderUnbind;
}

} // namespace

QString bindingStateName(BindingRecord::State state)
{
    return QString(api::Binding::stateName(state));
}

Result<QList<BindingRecord>> BindingStore::select(const QString &where, const QVariantList &binds)
{
    return m_db.queryAll(kColumns + where, binds, readBinding);
}

Result<BindingRecord> BindingStore::find(qint64 id)
{
    auto found = select(QStringLiteral(" WHERE b.id = ?"), { id });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return Error::make(
            QStringLiteral("not_found"), QStringLiteral("no binding with id %1").arg(id));
    return found->first();
}

Result<QList<BindingRecord>> BindingStore::list(
    const QDateTime &now, std::optional<qint64> projectId, bool includeEnded)
{
    QString where = QStringLiteral(" WHERE 1 = 1");
    QVariantList binds;
    if (!includeEnded) {
        where += QStringLiteral(" AND b.ended_at IS NULL AND b.expires_at > ?");
        binds.append(toDbTime(now));
    }
    if (projectId) {
        where += QStringLiteral(" AND b.project_id = ?");
        binds.append(*projectId);
    }
    auto out = select(where + QStringLiteral(" ORDER BY b.id"), binds);
    if (!out)
        return out.error();
    // A binding past its expiry that the sweep has not reached yet still
    // reads as expired.
    for (BindingRecord &binding : *out) {
        if (binding.state == BindingRecord::State::Active && binding.expiresAt <= now)
            binding.state = BindingRecord::State::Expired;
    }
    return out;
}

Result<std::optional<BindingRecord>> BindingStore::activeForForwarder(
    qint64 forwarderId, const QDateTime &now)
{
    auto found = select(
        QStringLiteral(" WHERE b.forwarder_id = ? AND b.ended_at IS NULL AND b.expires_at > ?"),
        { forwarderId, toDbTime(now) });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return std::optional<BindingRecord>();
    return std::optional<BindingRecord>(found->first());
}

Result<BindingRecord> BindingStore::create(qint64 forwarderId, qint64 projectId,
    const BindingTerms &terms, const QString &actor, const QDateTime &now,
    std::optional<qint64> requestId)
{
    Database::Transaction transaction(m_db);
    // Expired bindings are swept first so that the one-active-binding rule
    // only sees live ones.
    if (auto swept = expireDue(now); !swept)
        return swept.error();
    auto existing = activeForForwarder(forwarderId, now);
    if (!existing)
        return existing.error();
    if (*existing)
        return Error::make(QStringLiteral("already_bound"),
            QStringLiteral(
                "forwarder %1 (%2) already lends its device to a binding; a forwarder serves "
                "one binding at a time")
                .arg(forwarderId)
                .arg((*existing)->forwarderName));
    const QDateTime expiresAt = now.addSecs(terms.ttl.count());
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO bindings (forwarder_id, project_id, virtual_executor, target_interface, "
            "target_address, created_at, created_by, expires_at, request_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"),
        { forwarderId, projectId, nullIfEmpty(terms.virtualExecutor),
            nullIfEmpty(terms.targetInterface), nullIfEmpty(terms.targetAddress), toDbTime(now),
            actor, toDbTime(expiresAt),
            requestId ? QVariant(*requestId) : QVariant(QMetaType(QMetaType::LongLong)) });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(
            ErrorCode::StorageError, QStringLiteral("binding insert returned no id"));
    auto binding = find(inserted->value(0).toLongLong());
    if (!binding)
        return binding.error();
    QJsonObject details { { QStringLiteral("binding"), binding->id },
        { QStringLiteral("project"), binding->projectPath },
        { QStringLiteral("expires_at"), toDbTime(expiresAt) },
        { QStringLiteral("ttl_seconds"), static_cast<qint64>(terms.ttl.count()) } };
    if (!terms.virtualExecutor.isEmpty())
        details.insert(QStringLiteral("virtual_executor"), terms.virtualExecutor);
    if (!terms.targetInterface.isEmpty())
        details.insert(QStringLiteral("target"), terms.targetInterface);
    if (!terms.targetAddress.isEmpty())
        details.insert(QStringLiteral("address"), terms.targetAddress);
    if (requestId)
        details.insert(QStringLiteral("request"), *requestId);
    if (Status audited = AuditLog(m_db).append(actor, auditaction::kForwarderBind,
            QStringLiteral("forwarder:%1").arg(forwarderId), details);
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return binding;
}

Result<BindingRecord> BindingStore::end(qint64 id, BindingRecord::State how, const QString &actor,
    const QString &reason, const QDateTime &now)
{
    Database::Transaction transaction(m_db);
    auto binding = find(id);
    if (!binding)
        return binding.error();
    if (binding->state != BindingRecord::State::Active)
        return Error::make(QStringLiteral("already_ended"),
            QStringLiteral("binding %1 already ended (%2 at %3)")
                .arg(id)
                .arg(bindingStateName(binding->state), toDbTime(binding->endedAt)));
    // Past its expiry a binding has ended already, swept or not.
    if (how == BindingRecord::State::Unbound && binding->expiresAt <= now)
        return Error::make(QStringLiteral("already_ended"),
            QStringLiteral("binding %1 already ended: it expired at %2")
                .arg(id)
                .arg(util::formatUtcTime(binding->expiresAt)));
    auto updated = m_db.query(
        QStringLiteral(
            "UPDATE bindings SET ended_at = ?, ended_by = ?, end_kind = ?, end_reason = ? "
            "WHERE id = ? AND ended_at IS NULL"),
        { toDbTime(how == BindingRecord::State::Expired ? binding->expiresAt : now),
            how == BindingRecord::State::Expired ? QStringLiteral("hub") : actor,
            bindingStateName(how), reason, id });
    if (!updated)
        return updated.error();
    if (updated->numRowsAffected() != 1)
        return Error::make(
            QStringLiteral("already_ended"), QStringLiteral("binding %1 already ended").arg(id));
    if (Status audited = AuditLog(m_db).append(
            how == BindingRecord::State::Expired ? QStringLiteral("hub") : actor,
            auditActionFor(how), QStringLiteral("forwarder:%1").arg(binding->forwarderId),
            { { QStringLiteral("binding"), id },
                { QStringLiteral("project"), binding->projectPath },
                { QStringLiteral("how"), bindingStateName(how) },
                { QStringLiteral("reason"), reason } });
        !audited)
        return audited.error();
    // Read before the commit, as Database::Transaction says.
    auto stored = find(id);
    if (!stored)
        return stored.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return stored;
}

Result<QList<BindingRecord>> BindingStore::expireDue(const QDateTime &now)
{
    auto due
        = select(QStringLiteral(" WHERE b.ended_at IS NULL AND b.expires_at <= ? ORDER BY b.id"),
            { toDbTime(now) });
    if (!due)
        return due.error();
    QList<BindingRecord> expired;
    for (const BindingRecord &binding : std::as_const(*due)) {
        auto ended = end(binding.id, BindingRecord::State::Expired, QStringLiteral("hub"),
            QStringLiteral("its time ran out"), now);
        if (!ended)
            return ended.error();
        expired.append(*ended);
    }
    return expired;
}

Result<QList<BindingRecord>> BindingStore::endAllOfForwarder(
    qint64 forwarderId, const QString &actor, const QString &reason, const QDateTime &now)
{
    auto active
        = select(QStringLiteral(" WHERE b.forwarder_id = ? AND b.ended_at IS NULL ORDER BY b.id"),
            { forwarderId });
    if (!active)
        return active.error();
    QList<BindingRecord> ended;
    for (const BindingRecord &binding : std::as_const(*active)) {
        auto result = end(binding.id, BindingRecord::State::ForwarderRevoked, actor, reason, now);
        if (!result)
            return result.error();
        ended.append(*result);
    }
    return ended;
}

Status BindingStore::releaseDevices(qint64 bindingId)
{
    auto removed = m_db.query(
        QStringLiteral("DELETE FROM lent_devices WHERE binding_id = ?"), { bindingId });
    if (!removed)
        return removed.error();
    return {};
}

} // namespace cloop::hub
