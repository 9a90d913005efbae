#pragma once

#include "common/api/binding.h"

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <chrono>
#include <optional>

namespace cloop::hub {

class Database;

// What a binding grants, as asked for in a bind or a request: how long, on
// which virtual executor, and for a segment the interface and address the
// sandbox sees. Validated by the caller (BindingTerms::parse).
struct BindingTerms
{
    std::chrono::seconds ttl { 24 * 3600 };
    QString virtualExecutor; // empty: any executor
    QString targetInterface; // segments only
    QString targetAddress; // segments only, CIDR
};

struct BindingRecord
{
    // Spelled once, where the admin API spells it.
    using State = api::Binding::State;

    qint64 id = 0;
    qint64 forwarderId = 0;
    QString forwarderName;
    qint64 projectId = 0;
    QString projectPath;
    BindingTerms terms;
    QDateTime createdAt;
    QString createdBy;
    QDateTime expiresAt;
    std::optional<qint64> requestId;
    State state = State::Active;
    QDateTime endedAt;
    QString endedBy;
    QString endReason;

    bool isActiveAt(const QDateTime &now) const
    {
        return state == State::Active && expiresAt > now;
    }
};

QString bindingStateName(BindingRecord::State state);

// Bindings: a forwarder's device lent to a project's runs until they end.
// A binding past its expiry is no binding even before the sweep marks it.
class BindingStore
{
public:
    explicit BindingStore(Database &db)
        : m_db(db)
    { }

    Result<BindingRecord> create(qint64 forwarderId, qint64 projectId, const BindingTerms &terms,
        const QString &actor, const QDateTime &now, std::optional<qint64> requestId);
    Result<BindingRecord> find(qint64 id);
    // A binding that ended lends nothing more: its devices go back.
    Status releaseDevices(qint64 bindingId);
    // Active ones at `now`, optionally of one project; or all of them.
    Result<QList<BindingRecord>> list(
        const QDateTime &now, std::optional<qint64> projectId, bool includeEnded);
    Result<std::optional<BindingRecord>> activeForForwarder(
        qint64 forwarderId, const QDateTime &now);

    Result<BindingRecord> end(qint64 id, BindingRecord::State how, const QString &actor,
        const QString &reason, const QDateTime &now);
    // Marks every binding past its expiry as expired and returns them.
    Result<QList<BindingRecord>> expireDue(const QDateTime &now);
    Result<QList<BindingRecord>> endAllOfForwarder(
        qint64 forwarderId, const QString &actor, const QString &reason, const QDateTime &now);

private:
    Result<QList<BindingRecord>> select(const QString &where, const QVariantList &binds);

    Database &m_db;
};

} // namespace cloop::hub
