#pragma once

#include "common/api/enrolleddaemon.h"
#include "common/protocol/agentcapabilities.h"

namespace cloop::api {

// An executor agent as the admin API shows it (GET /api/executors).
struct Executor : EnrolledDaemon
{
    // What the agent reported in its last hello, as it reported it (empty
    // until it connected once); capabilities() reads it.
    QJsonObject reportedCapabilities;

    Result<cloop::protocol::AgentCapabilities> capabilities() const;

    static Result<Executor> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Executor &, const Executor &) = default;
};

} // namespace cloop::api
