#include "hub/storage/clustereventstore.h"

#include "hub/storage/database.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

// The transaction lock that orders the writers of events ("cloopev").
constexpr qint64 kAppendLockKey = 0x636c6f6f706576;

QVariant optionalId(const std::optional<qint64> &id)
{
    return id ? QVariant(*id) : QVariant(QMetaType::fromType<qint64>());
}

std::optional<qint64> idOrNone(const QVariant &value)
{
    if (value.isNull())
        return std::nullopt;
    return value.toLongLong();
}

} // namespace

Status ClusterEventStore::append(const ClusterEventRecord &event)
{
    Database::Transaction transaction(m_db);
    if (m_db.dialect() == Database::Dialect::Postgres) {
        // Held until this transaction commits: the next writer numbers its
        // events after it, and commits after it.
        if (auto locked = m_db.query(u"SELECT pg_advisory_xact_lock(%1)"_s.arg(kAppendLockKey));
            !locked)
            return locked.error();
    }
    auto inserted = m_db.query(
        u"INSERT INTO cluster_events (at, member_id, member_generation, member_name, name, data, "
        "project_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"_s,
        { toDbTime(event.at), event.memberId, event.memberGeneration, event.memberName, event.name,
            QString::fromUtf8(QJsonDocument(event.data).toJson(QJsonDocument::Compact)),
            optionalId(event.projectId), optionalId(event.userId) });
    if (!inserted)
        return inserted.error();
    if (m_db.dialect() == Database::Dialect::Postgres) {
        // Delivered at commit, once per transaction however many events it
        // holds (identical notifications are folded).
        if (auto notified = m_db.query(u"SELECT pg_notify(?, '')"_s, { QString(kChannel) });
            !notified)
            return notified.error();
    }
    return transaction.commit();
}

Result<QList<ClusterEventRecord>> ClusterEventStore::after(qint64 sequence, int limit)
{
    return m_db.queryAll(
        u"SELECT seq, at, member_id, member_generation, member_name, name, data, project_id, "
        "user_id FROM cluster_events WHERE seq > ? ORDER BY seq LIMIT %1"_s.arg(limit),
        { sequence }, [](const Rows &q) {
            ClusterEventRecord record;
            record.sequence = q.value(0).toLongLong();
            record.at = fromDbTime(q.value(1));
            record.memberId = q.value(2).toLongLong();
            record.memberGeneration = q.value(3).toLongLong();
            record.memberName = q.value(4).toString();
            record.name = q.value(5).toString();
            record.data = QJsonDocument::fromJson(q.value(6).toString().toUtf8()).object();
            record.projectId = idOrNone(q.value(7));
            record.userId = idOrNone(q.value(8));
            return record;
        });
}

Result<qint64> ClusterEventStore::lastSequence()
{
    return m_db.queryOne(
        u"SELECT COALESCE(MAX(seq), 0) FROM cluster_events"_s, {},
        [](const Rows &q) { return q.value(0).toLongLong(); }, Error::make(u"storage_error"_s, {}));
}

Result<qint64> ClusterEventStore::firstSequence()
{
    return m_db.queryOne(
        u"SELECT COALESCE(MIN(seq), 0) FROM cluster_events"_s, {},
        [](const Rows &q) { return q.value(0).toLongLong(); }, Error::make(u"storage_error"_s, {}));
}

Result<int> ClusterEventStore::pruneBefore(const QDateTime &before)
{
    auto removed = m_db.query(u"DELETE FROM cluster_events WHERE at < ?"_s, { toDbTime(before) });
    if (!removed)
        return removed.error();
    return removed->numRowsAffected();
}

} // namespace cloop::hub
