#include "hub/storage/sessionholderstore.h"

#include "hub/storage/database.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace cloop::hub {

Result<bool> SessionHolderStore::claim(const QString &kind, qint64 daemonId, qint64 memberId,
    qint64 generation, const QDateTime &connectedAt)
{
    const QString now = toDbTime(m_db.now());
    const QString at = toDbTime(connectedAt);
    // One statement: the member's lease, the claim it replaces and the
    // write are judged together.
    auto written = m_db.query(
        u"INSERT INTO session_holders (kind, daemon_id, member_id, member_generation, "
        "connected_at) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM hub_members WHERE id = ? "
        "AND generation = ? AND left_at IS NULL AND lease_until > ?) "
        "ON CONFLICT (kind, daemon_id) DO UPDATE SET member_id = excluded.member_id, "
        "member_generation = excluded.member_generation, connected_at = excluded.connected_at, "
        "device_state = NULL WHERE session_holders.connected_at <= excluded.connected_at OR NOT "
        "EXISTS (SELECT 1 "
        "FROM hub_members m WHERE m.id = session_holders.member_id AND m.generation = "
        "session_holders.member_generation AND m.left_at IS NULL AND m.lease_until > ?)"_s,
        { kind, daemonId, memberId, generation, at, memberId, generation, now, now });
    if (!written)
        return written.error();
    return written->numRowsAffected() > 0;
}

Status SessionHolderStore::release(
    const QString &kind, qint64 daemonId, qint64 memberId, qint64 generation)
{
    auto removed = m_db.query(u"DELETE FROM session_holders WHERE kind = ? AND daemon_id = ? AND "
                              "member_id = ? AND member_generation = ?"_s,
        { kind, daemonId, memberId, generation });
    if (!removed)
        return removed.error();
    return {};
}

Status SessionHolderStore::forgetEarlierStarts(qint64 memberId, qint64 generation)
{
    auto removed
        = m_db.query(u"DELETE FROM session_holders WHERE member_id = ? AND member_generation < ?"_s,
            { memberId, generation });
    if (!removed)
        return removed.error();
    return {};
}

namespace {

const QString kSelectLive = u"SELECT s.kind, s.daemon_id, s.member_id, m.name, s.connected_at, "
                            "s.device_state FROM session_holders s JOIN hub_members m ON m.id = "
                            "s.member_id AND m.generation = s.member_generation WHERE m.left_at "
                            "IS NULL AND m.lease_until > ?"_s;

SessionHolderStore::Holder readHolder(const Rows &q)
{
    return SessionHolderStore::Holder { q.value(0).toString(), q.value(1).toLongLong(),
        q.value(2).toLongLong(), q.value(3).toString(), fromDbTime(q.value(4)),
        q.value(5).isNull() ? QJsonObject()
                            : QJsonDocument::fromJson(q.value(5).toString().toUtf8()).object() };
}

} // namespace

Result<QList<SessionHolderStore::Holder>> SessionHolderStore::live(const QDateTime &now)
{
    return m_db.queryAll(
        kSelectLive + u" ORDER BY s.kind, s.daemon_id"_s, { toDbTime(now) }, readHolder);
}

Result<std::optional<SessionHolderStore::Holder>> SessionHolderStore::holderOf(
    const QString &kind, qint64 daemonId, const QDateTime &now)
{
    auto holders = m_db.queryAll(kSelectLive + u" AND s.kind = ? AND s.daemon_id = ?"_s,
        { toDbTime(now), kind, daemonId }, readHolder);
    if (!holders)
        return holders.error();
    if (holders->isEmpty())
        return std::optional<Holder>();
    return std::optional<Holder>(holders->constFirst());
}

Status SessionHolderStore::recordDeviceState(const QString &kind, qint64 daemonId, qint64 memberId,
    qint64 generation, const QJsonObject &state)
{
    auto updated = m_db.query(u"UPDATE session_holders SET device_state = ? WHERE kind = ? AND "
                              "daemon_id = ? AND member_id = ? AND member_generation = ?"_s,
        { QString::fromUtf8(QJsonDocument(state).toJson(QJsonDocument::Compact)), kind, daemonId,
            memberId, generation });
    if (!updated)
        return updated.error();
    return {};
}

} // namespace cloop::hub
