#pragma once

#include "common/api/recordfields.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace cloop::api {

// What the admin API says alike of every enrolled daemon, a forwarder
// (forwarder.h) or an executor agent (executor.h).
struct EnrolledDaemon
{
    enum class State
    {
        AwaitingEnrollment, // its one-time token was never redeemed
        Connected,
        Disconnected,
        Revoked
    };

    qint64 id = 0;
    QString name;
    State state = State::AwaitingEnrollment;
    bool connected = false;
    QString hubMember; // the hub holding its live session; empty when none
    QDateTime lastSeen; // now while connected; invalid when never seen
    QDateTime createdAt;
    QString createdBy;
    QDateTime enrolledAt;
    QDateTime revokedAt;
    QString version; // its software; empty until it connected once
    int protocolVersion = 0; // 0 until it connected once
    QString channel; // the update channel its device follows; empty if never said
    // The newer release the hub offers it on its channel: it is behind.
    QString offeredVersion;
    bool upgrading = false; // draining, or its root helper installing
    // Its upgrade's last word since the hub started ({"state", "target",
    // "from", "to", "message", "since"}); empty when none.
    QJsonObject upgrade;

    bool isRevoked() const { return state == State::Revoked; }

    static QLatin1StringView stateName(State state);
    static std::optional<State> parseState(QStringView name);

    // What a forwarder's or an executor's record says of it as a daemon.
    static Result<EnrolledDaemon> fromJson(const QJsonObject &object);

    friend bool operator==(const EnrolledDaemon &, const EnrolledDaemon &) = default;

protected:
    void readFrom(RecordReader &read);
    void writeTo(QJsonObject &object) const;
};

} // namespace cloop::api
