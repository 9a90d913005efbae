#pragma once

#include "common/api/bindingrequest.h"

#include "common/result.h"
#include "hub/storage/bindingstore.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>

namespace cloop::hub {

class Database;

struct RequestRecord
{
    // Spelled once, where the admin API spells it.
    using State = api::BindingRequest::State;

    qint64 id = 0;
    qint64 forwarderId = 0;
    QString forwarderName;
    qint64 projectId = 0;
    QString projectPath;
    qint64 requesterId = 0;
    QString requesterName;
    QString reason;
    BindingTerms terms;
    QDateTime createdAt;
    QDateTime expiresAt; // of the pending request, not of a binding
    State state = State::Pending;
    QString decidedBy;
    QDateTime decidedAt;
    QString decisionReason;
    std::optional<qint64> bindingId;
};

QString requestStateName(RequestRecord::State state);

// Binding requests filed by maintainers and decided by administrators.
// A decision changes a pending request exactly once, however many deciders
// race for it.
class RequestStore
{
public:
    explicit RequestStore(Database &db)
        : m_db(db)
    { }

    Result<RequestRecord> file(qint64 forwarderId, qint64 projectId, qint64 requesterId,
        const QString &reason, const BindingTerms &terms, const QDateTime &now,
        std::chrono::seconds lifetime);
    Result<RequestRecord> find(qint64 id);

    struct Filter
    {
        bool pendingOnly = true;
        std::optional<QList<qint64>> projectIds; // none: every project
        std::optional<qint64> requesterId; // only this requester's
        std::optional<qint64> excludeRequesterId; // never this requester's (an inbox)
    };
    Result<QList<RequestRecord>> list(const Filter &filter, const QDateTime &now);

    // Moves a pending request to its final state; fails with already_decided
    // when another decision (or expiry) came first.
    Result<RequestRecord> decide(qint64 id, RequestRecord::State outcome, const QString &decider,
        const QString &decisionReason, std::optional<qint64> bindingId, const QDateTime &now);
    Result<QList<RequestRecord>> expireDue(const QDateTime &now);
    Result<QList<RequestRecord>> cancelAllOfForwarder(
        qint64 forwarderId, const QString &actor, const QString &reason, const QDateTime &now);

private:
    Result<QList<RequestRecord>> select(const QString &where, const QVariantList &binds);

    Database &m_db;
};

} // namespace cloop::hub
