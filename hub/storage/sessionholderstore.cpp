#include "hub/storage/sessionholderstore.h"

#include "hub/storage/database.h"

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
        "member_generation = excluded.member_generation, connected_at = excluded.connected_at "
        "WHERE session_holders.connected_at <= excluded.connected_at OR NOT EXISTS (SELECT 1 "
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

Result<QList<SessionHolderStore::Holder>> SessionHolderStore::live(const QDateTime &now)
{
    return m_db.queryAll(
        u"SELECT s.kind, s.daemon_id, s.member_id, m.name, s.connected_at FROM session_holders s "
        "JOIN hub_members m ON m.id = s.member_id AND m.generation = s.member_generation WHERE "
        "m.left_at IS NULL AND m.lease_until > ? ORDER BY s.kind, s.daemon_id"_s,
        { toDbTime(now) }, [](const Rows &q) {
            return Holder { q.value(0).toString(), q.value(1).toLongLong(), q.value(2).toLongLong(),
                q.value(3).toString(), fromDbTime(q.value(4)) };
        });
}

} // namespace cloop::hub
