#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace cloop::hub {

class Database;

// The shared record of which cluster member holds each daemon's tunnel.
class SessionHolderStore
{
public:
    explicit SessionHolderStore(Database &db)
        : m_db(db)
    { }

    struct Holder
    {
        QString kind; // "forwarder" or "executor"
        qint64 daemonId = 0;
        qint64 memberId = 0;
        QString memberName;
        QDateTime connectedAt;
        // A forwarder's last word on its device (device.state), as JSON; empty
        // until it said something.
        QJsonObject deviceState;
    };

    // The session of `daemonId` is this member's (that generation, whose
    // lease must run), since `connectedAt`. False, and nothing written,
    // when a later connection holds it on a live member, or this member's
    // lease lapsed: a dying member's late write never wins.
    Result<bool> claim(const QString &kind, qint64 daemonId, qint64 memberId, qint64 generation,
        const QDateTime &connectedAt);
    // The session ended; only that member's own claim is removed.
    Status release(const QString &kind, qint64 daemonId, qint64 memberId, qint64 generation);
    // Claims of a member's earlier starts: their sessions ended with them.
    Status forgetEarlierStarts(qint64 memberId, qint64 generation);
    // The sessions live members hold (their lease runs at `now`).
    Result<QList<Holder>> live(const QDateTime &now);
    // The live member holding that daemon's session, if any.
    Result<std::optional<Holder>> holderOf(
        const QString &kind, qint64 daemonId, const QDateTime &now);
    // What the daemon said of its device, beside this member's claim.
    Status recordDeviceState(const QString &kind, qint64 daemonId, qint64 memberId,
        qint64 generation, const QJsonObject &state);

private:
    Database &m_db;
};

} // namespace cloop::hub
