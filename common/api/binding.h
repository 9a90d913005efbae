#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A forwarder's device lent to a project's runs (GET /api/bindings).
struct Binding
{
    enum class State
    {
        Active,
        Unbound,
        Expired,
        ForwarderRevoked
    };

    qint64 id = 0;
    qint64 forwarderId = 0;
    QString forwarder; // its name
    QString project; // its directory on the hub
    QString virtualExecutor; // empty: runs on any executor
    QString target; // segments: the interface in the sandbox
    QString address; // segments: its CIDR address
    QDateTime createdAt;
    QString createdBy;
    QDateTime expiresAt;
    std::optional<qint64> requestId; // the approved request it came from
    State state = State::Active;
    QDateTime endedAt;
    QString endedBy;
    QString endReason;

    bool isActive() const { return state == State::Active; }

    static QLatin1StringView stateName(State state);
    static std::optional<State> parseState(QStringView name);

    static Result<Binding> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Binding &, const Binding &) = default;
};

} // namespace cloop::api
