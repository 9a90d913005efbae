#include "hub/storage/memberstore.h"

#include "hub/storage/database.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

const QString kSelect = u"SELECT id, member_key, name, daemon_url, peer_url, key_pin, software, "
                        "generation, started_at, lease_until, left_at FROM hub_members"_s;

MemberRecord readMember(const Rows &q)
{
    MemberRecord record;
    record.id = q.value(0).toLongLong();
    record.key = q.value(1).toString();
    record.name = q.value(2).toString();
    record.daemonUrl = q.value(3).toString();
    record.peerUrl = q.value(4).toString();
    record.keyPin = q.value(5).toString();
    record.software = q.value(6).toString();
    record.generation = q.value(7).toLongLong();
    record.startedAt = fromDbTime(q.value(8));
    record.leaseUntil = fromDbTime(q.value(9));
    if (!q.value(10).isNull())
        record.leftAt = fromDbTime(q.value(10));
    return record;
}

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(text);
}

} // namespace

MemberRecord::State MemberRecord::stateAt(const QDateTime &now) const
{
    if (leftAt.isValid())
        return State::Left;
    return leaseUntil > now ? State::Alive : State::Dead;
}

QString memberStateName(MemberRecord::State state)
{
    switch (state) {
    case MemberRecord::State::Alive:
        return u"alive"_s;
    case MemberRecord::State::Dead:
        return u"dead"_s;
    case MemberRecord::State::Left:
        return u"left"_s;
    }
    return {};
}

Result<MemberRecord> MemberStore::join(const Joining &member, const QDateTime &leaseUntil)
{
    Database::Transaction transaction(m_db);
    const QString now = toDbTime(m_db.now());
    // One statement either way, so two starts of one member cannot both
    // take generation 1.
    auto updated = m_db.query(
        u"UPDATE hub_members SET name = ?, daemon_url = ?, peer_url = ?, key_pin = ?, "
        "software = ?, generation = generation + 1, started_at = ?, lease_until = ?, left_at = "
        "NULL WHERE member_key = ?"_s,
        { member.name, member.daemonUrl, textOrNull(member.peerUrl), member.keyPin, member.software,
            now, toDbTime(leaseUntil), member.key });
    if (!updated)
        return updated.error();
    if (updated->numRowsAffected() == 0) {
        auto inserted = m_db.query(
            u"INSERT INTO hub_members (member_key, name, daemon_url, peer_url, key_pin, "
            "software, generation, started_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)"_s,
            { member.key, member.name, member.daemonUrl, textOrNull(member.peerUrl), member.keyPin,
                member.software, now, toDbTime(leaseUntil) });
        if (!inserted)
            return inserted.error();
    }
    auto record = m_db.queryOne(kSelect + u" WHERE member_key = ?"_s, { member.key }, readMember,
        Error::make(u"storage"_s, u"the member's record vanished as it joined"_s));
    if (!record)
        return record.error();
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return record;
}

Result<bool> MemberStore::renew(qint64 id, qint64 generation, const QDateTime &leaseUntil)
{
    auto updated = m_db.query(u"UPDATE hub_members SET lease_until = ? WHERE id = ? AND "
                              "generation = ? AND left_at IS NULL"_s,
        { toDbTime(leaseUntil), id, generation });
    if (!updated)
        return updated.error();
    return updated->numRowsAffected() == 1;
}

Status MemberStore::leave(qint64 id, qint64 generation)
{
    const QString now = toDbTime(m_db.now());
    auto updated = m_db.query(u"UPDATE hub_members SET lease_until = ?, left_at = ? WHERE id = ? "
                              "AND generation = ?"_s,
        { now, now, id, generation });
    if (!updated)
        return updated.error();
    return {};
}

Result<QList<MemberRecord>> MemberStore::list()
{
    return m_db.queryAll(kSelect + u" ORDER BY id"_s, {}, readMember);
}

} // namespace cloop::hub
