#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A maintainer's request for a binding, waiting for or past an
// administrator's decision (GET /api/requests).
struct BindingRequest
{
    enum class State
    {
        Pending,
        Approved,
        Denied,
        Expired,
        Cancelled // its forwarder was revoked
    };

    qint64 id = 0;
    qint64 forwarderId = 0;
    QString forwarder;
    QString project;
    QString requestedBy;
    QString reason;
    QString ttl; // "8h"
    qint64 ttlSeconds = 0;
    QString virtualExecutor;
    QString target;
    QString address;
    QDateTime createdAt;
    QDateTime expiresAt;
    State state = State::Pending;
    QString decidedBy;
    QDateTime decidedAt;
    QString decisionReason;
    std::optional<qint64> bindingId; // the binding an approval made

    bool isPending() const { return state == State::Pending; }

    static QLatin1StringView stateName(State state);
    static std::optional<State> parseState(QStringView name);

    static Result<BindingRequest> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const BindingRequest &, const BindingRequest &) = default;
};

} // namespace cloop::api
