#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A run of a workload in a sandbox (GET /api/runs).
struct Run
{
    enum class State
    {
        Queued, // waiting on the hub
        Dispatched, // sent to an agent
        Running,
        Succeeded, // exit 0
        Failed, // another exit code, or `error` says why it never ran
        Cancelled,
        Lost // its agent went away for longer than the grace period
    };

    qint64 id = 0;
    QString project; // empty: the executor's own maintenance (a harness install)
    QString harness; // set: the run installs this harness on its executor
    QString requestedBy;
    std::optional<qint64> executorId; // none until dispatched
    QString virtualExecutor;
    QString runtime;
    QString image; // empty: the agent's default
    QStringList argv;
    bool hostProcess = false;
    State state = State::Queued;
    std::optional<int> exitCode;
    QString error; // why it never ran: the engine's own message
    QDateTime createdAt;
    QDateTime dispatchedAt;
    QDateTime startedAt;
    QDateTime finishedAt;
    bool finished = false;

    static QLatin1StringView stateName(State state);
    static std::optional<State> parseState(QStringView name);

    static Result<Run> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Run &, const Run &) = default;
};

} // namespace cloop::api
