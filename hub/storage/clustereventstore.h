#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace cloop::hub {

class Database;

// One event as the cluster's members exchange it.
struct ClusterEventRecord
{
    qint64 sequence = 0; // given by the store, in commit order
    QDateTime at;
    qint64 memberId = 0;
    qint64 memberGeneration = 0;
    QString memberName;
    QString name;
    QJsonObject data;
    std::optional<qint64> projectId;
    std::optional<qint64> userId;
};

// The cluster's events table: every member appends its own events in the
// transaction of the change they report, and reads the others' by sequence
// number. Numbers follow commit order (writers take one lock in turn until
// they commit), so a reader that has seen number N has seen every committed
// event before it; a number can only be missing for good (a rolled back
// change), never arrive later.
class ClusterEventStore
{
public:
    // What members LISTEN on; a commit that appended events notifies it once.
    static constexpr QLatin1StringView kChannel { "cloop_cluster_events" };

    explicit ClusterEventStore(Database &db)
        : m_db(db)
    { }

    // In the transaction open now, or in one of its own.
    Status append(const ClusterEventRecord &event);
    // The events after `sequence`, oldest first, at most `limit`.
    Result<QList<ClusterEventRecord>> after(qint64 sequence, int limit);
    // The newest number (0 with none).
    Result<qint64> lastSequence();
    // The oldest number kept (0 with none).
    Result<qint64> firstSequence();
    // Removes the events older than `before`; how many went.
    Result<int> pruneBefore(const QDateTime &before);

private:
    Database &m_db;
};

} // namespace cloop::hub
