#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace cloop::hub {

class Database;

// A member of the hub cluster as it registered itself: a single hub is a
// cluster of one.
struct MemberRecord
{
    enum class State
    {
        Alive, // its lease runs
        Dead, // its lease lapsed: every session it held is offline
        Left // it stopped and said so
    };

    qint64 id = 0;
    QString key; // the member's own, kept in its data folder
    QString name; // its public host:port
    QString daemonUrl; // where daemons dial it
    QString peerUrl; // where other members reach it; empty: not yet
    QString keyPin;
    QString software;
    qint64 generation = 0; // its starts, counted
    QDateTime startedAt;
    QDateTime leaseUntil;
    QDateTime leftAt; // null unless it left

    State stateAt(const QDateTime &now) const;
};

QString memberStateName(MemberRecord::State state);

class MemberStore
{
public:
    explicit MemberStore(Database &db)
        : m_db(db)
    { }

    struct Joining
    {
        QString key;
        QString name;
        QString daemonUrl;
        QString peerUrl;
        QString keyPin;
        QString software;
    };
    // Registers the member, or the same member started again: its record,
    // with the next generation and a lease until `leaseUntil`.
    Result<MemberRecord> join(const Joining &member, const QDateTime &leaseUntil);
    // Extends the lease of that generation. False: a newer start of the
    // same member took the record over, and this process is no member.
    Result<bool> renew(qint64 id, qint64 generation, const QDateTime &leaseUntil);
    // Ends the lease now, saying the member left.
    Status leave(qint64 id, qint64 generation);
    Result<QList<MemberRecord>> list();

private:
    Database &m_db;
};

} // namespace cloop::hub
