#include "hub/storage/requeststore.h"

#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

#include <QStringList>

namespace cloop::hub {

namespace {

const QString kColumns = QStringLiteral(
    "SELECT r.id, r.forwarder_id, f.name, r.project_id, p.path, r.requested_by, u.name, r.reason, "
    "r.ttl_seconds, r.virtual_executor, r.target_interface, r.target_address, r.created_at, "
    "r.expires_at, "
    "r.state, r.decided_by, r.decided_at, r.decision_reason, r.binding_id FROM binding_requests r "
    "JOIN forwarders f ON f.id = r.forwarder_id JOIN projects p ON p.id = r.project_id "
    "JOIN users u ON u.id = r.requested_by");

RequestRecord::State stateFromName(const QString &name)
{
    return api::BindingRequest::parseState(name).value_or(RequestRecord::State::Pending);
}

RequestRecord readRequest(const Rows &q)
{
    RequestRecord r;
    r.id = q.value(0).toLongLong();
    r.forwarderId = q.value(1).toLongLong();
    r.forwarderName = q.value(2).toString();
    r.projectId = q.value(3).toLongLong();
    r.projectPath = q.value(4).toString();
    r.requesterId = q.value(5).toLongLong();
    r.requesterName = q.value(6).toString();
    r.reason = q.value(7).toString();
    r.terms.ttl = std::chrono::seconds(q.value(8).toLongLong());
    r.terms.virtualExecutor = q.value(9).toString();
    r.terms.targetInterface = q.value(10).toString();
    r.terms.targetAddress = q.value(11).toString();
    r.createdAt = fromDbTime(q.value(12));
    r.expiresAt = fromDbTime(q.value(13));
    r.state = stateFromName(q.value(14).toString());
    r.decidedBy = q.value(15).toString();
    r.decidedAt = fromDbTime(q.value(16));
    r.decisionReason = q.value(17).toString();
    if (!q.value(18).isNull())
        r.bindingId = q.value(18).toLongLong();
    return r;
}

QVariant nullIfEmpty(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

QLatin1StringView auditActionFor(RequestRecord::State outcome)
{
    switch (outcome) {
    case RequestRecord::State::Approved:
        return auditaction::kForwarderApprove;
    case RequestRecord::State::Denied:
        return auditaction::kForwarderDeny;
    case RequestRecord::State::Cancelled:
        return auditaction::kRequestCancelled;
    default:
        return auditaction::kRequestExpired;
    }
}

} // namespace

QString requestStateName(RequestRecord::State state)
{
    return QString(api::BindingRequest::stateName(state));
}

Result<QList<RequestRecord>> RequestStore::select(const QString &where, const QVariantList &binds)
{
    return m_db.queryAll(kColumns + where, binds, readRequest);
}

Result<RequestRecord> RequestStore::find(qint64 id)
{
    auto found = select(QStringLiteral(" WHERE r.id = ?"), { id });
    if (!found)
        return found.error();
    if (found->isEmpty())
        return Error::make(
            QStringLiteral("not_found"), QStringLiteral("no binding request with id %1").arg(id));
    return found->first();
}

Result<RequestRecord> RequestStore::file(qint64 forwarderId, qint64 projectId, qint64 requesterId,
    const QString &reason, const BindingTerms &terms, const QDateTime &now,
    std::chrono::seconds lifetime)
{
    Database::Transaction transaction(m_db);
    auto inserted = m_db.query(
        QStringLiteral(
            "INSERT INTO binding_requests (forwarder_id, project_id, requested_by, reason, "
            "ttl_seconds, "
            "virtual_executor, target_interface, target_address, created_at, expires_at, state) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') RETURNING id"),
        { forwarderId, projectId, requesterId, reason, static_cast<qint64>(terms.ttl.count()),
            nullIfEmpty(terms.virtualExecutor), nullIfEmpty(terms.targetInterface),
            nullIfEmpty(terms.targetAddress), toDbTime(now),
            toDbTime(now.addSecs(lifetime.count())) });
    if (!inserted)
        return inserted.error();
    if (!inserted->next())
        return Error::make(
            ErrorCode::StorageError, QStringLiteral("request insert returned no id"));
    auto request = find(inserted->value(0).toLongLong());
    if (!request)
        return request.error();
    if (Status audited
        = AuditLog(m_db).append(QStringLiteral("user:%1").arg(request->requesterName),
            auditaction::kForwarderRequest, QStringLiteral("forwarder:%1").arg(forwarderId),
            { { QStringLiteral("request"), request->id },
                { QStringLiteral("project"), request->projectPath },
                { QStringLiteral("ttl_seconds"), static_cast<qint64>(terms.ttl.count()) },
                { QStringLiteral("reason"), reason } });
        !audited)
        return audited.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return request;
}

Result<QList<RequestRecord>> RequestStore::list(const Filter &filter, const QDateTime &now)
{
    QString where = QStringLiteral(" WHERE 1 = 1");
    QVariantList binds;
    if (filter.pendingOnly) {
        where += QStringLiteral(" AND r.state = 'pending' AND r.expires_at > ?");
        binds.append(toDbTime(now));
    }
    if (filter.projectIds) {
        if (filter.projectIds->isEmpty())
            return QList<RequestRecord>();
        QStringList marks;
        for (const qint64 projectId : *filter.projectIds) {
            marks.append(QStringLiteral("?"));
            binds.append(projectId);
        }
        where += QStringLiteral(" AND r.project_id IN (%1)").arg(marks.join(QLatin1Char(',')));
    }
    if (filter.requesterId) {
        where += QStringLiteral(" AND r.requested_by = ?");
        binds.append(*filter.requesterId);
    }
    if (filter.excludeRequesterId) {
        where += QStringLiteral(" AND r.requested_by <> ?");
        binds.append(*filter.excludeRequesterId);
    }
    auto out = select(where + QStringLiteral(" ORDER BY r.id"), binds);
    if (!out)
        return out.error();
    for (RequestRecord &request : *out) {
        if (request.state == RequestRecord::State::Pending && request.expiresAt <= now)
            request.state = RequestRecord::State::Expired;
    }
    return out;
}

Result<RequestRecord> RequestStore::decide(qint64 id, RequestRecord::State outcome,
    const QString &decider, const QString &decisionReason, std::optional<qint64> bindingId,
    const QDateTime &now)
{
    Database::Transaction transaction(m_db);
    auto request = find(id);
    if (!request)
        return request.error();
    // The guard on state makes the row change once, whoever else decides.
    auto updated = m_db.query(
        QStringLiteral("UPDATE binding_requests SET state = ?, decided_by = ?, decided_at = ?, "
                       "decision_reason = ?, binding_id = ? WHERE id = ? AND state = 'pending'"),
        { requestStateName(outcome), decider, toDbTime(now), decisionReason,
            bindingId ? QVariant(*bindingId) : QVariant(QMetaType(QMetaType::LongLong)), id });
    if (!updated)
        return updated.error();
    if (updated->numRowsAffected() != 1)
        return Error::make(QStringLiteral("already_decided"),
            QStringLiteral("request %1 was already %2%3")
                .arg(id)
                .arg(requestStateName(request->state),
                    request->decidedBy.isEmpty()
                        ? QString()
                        : QStringLiteral(" by %1").arg(request->decidedBy)));
    QJsonObject details { { QStringLiteral("request"), id },
        { QStringLiteral("project"), request->projectPath },
        { QStringLiteral("requested_by"), request->requesterName } };
    if (!decisionReason.isEmpty())
        details.insert(QStringLiteral("reason"), decisionReason);
    if (bindingId)
        details.insert(QStringLiteral("binding"), *bindingId);
    if (Status audited = AuditLog(m_db).append(decider, auditActionFor(outcome),
            QStringLiteral("forwarder:%1").arg(request->forwarderId), details);
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

Result<QList<RequestRecord>> RequestStore::expireDue(const QDateTime &now)
{
    auto due
        = select(QStringLiteral(" WHERE r.state = 'pending' AND r.expires_at <= ? ORDER BY r.id"),
            { toDbTime(now) });
    if (!due)
        return due.error();
    QList<RequestRecord> expired;
    for (const RequestRecord &request : std::as_const(*due)) {
        auto decided = decide(request.id, RequestRecord::State::Expired, QStringLiteral("hub"),
            QStringLiteral("nobody decided it in time"), std::nullopt, now);
        if (!decided)
            return decided.error();
        expired.append(*decided);
    }
    return expired;
}

Result<QList<RequestRecord>> RequestStore::cancelAllOfForwarder(
    qint64 forwarderId, const QString &actor, const QString &reason, const QDateTime &now)
{
    auto pending
        = select(QStringLiteral(" WHERE r.forwarder_id = ? AND r.state = 'pending' ORDER BY r.id"),
            { forwarderId });
    if (!pending)
        return pending.error();
    QList<RequestRecord> cancelled;
    for (const RequestRecord &request : std::as_const(*pending)) {
        auto decided
            = decide(request.id, RequestRecord::State::Cancelled, actor, reason, std::nullopt, now);
        if (!decided)
            return decided.error();
        cancelled.append(*decided);
    }
    return cancelled;
}

} // namespace cloop::hub
