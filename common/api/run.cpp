#include "common/api/run.h"

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<Run::State>, 7> kStates { {
    { Run::State::Queued, QLatin1StringView("queued") },
    { Run::State::Dispatched, QLatin1StringView("dispatched") },
    { Run::State::Running, QLatin1StringView("running") },
    { Run::State::Succeeded, QLatin1StringView("succeeded") },
    { Run::State::Failed, QLatin1StringView("failed") },
    { Run::State::Cancelled, QLatin1StringView("cancelled") },
    { Run::State::Lost, QLatin1StringView("lost") },
} };
} // namespace

QLatin1StringView Run::stateName(State state)
{
    return nameIn(kStates, state);
}

std::optional<Run::State> Run::parseState(QStringView name)
{
    return valueIn(kStates, name);
}

Result<Run> Run::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("run"));
    Run run;
    run.id = read.integer(QLatin1StringView("id"));
    run.project = read.text(QLatin1StringView("project"));
    run.requestedBy = read.text(QLatin1StringView("requested_by"));
    run.executorId = read.optionalInteger(QLatin1StringView("executor_id"));
    run.virtualExecutor = read.text(QLatin1StringView("virtual_executor"));
    run.runtime = read.text(QLatin1StringView("runtime"));
    run.image = read.text(QLatin1StringView("image"));
    run.argv = read.texts(QLatin1StringView("argv"));
    run.hostProcess = read.flag(QLatin1StringView("host_process"));
    run.state = read.choice(QLatin1StringView("state"), kStates, State::Queued);
    if (const auto code = read.optionalInteger(QLatin1StringView("exit_code")))
        run.exitCode = int(*code);
    run.error = read.text(QLatin1StringView("error"));
    run.createdAt = read.time(QLatin1StringView("created_at"));
    run.dispatchedAt = read.time(QLatin1StringView("dispatched_at"));
    run.startedAt = read.time(QLatin1StringView("started_at"));
    run.finishedAt = read.time(QLatin1StringView("finished_at"));
    run.finished = read.flag(QLatin1StringView("finished"));
    return read.finish(std::move(run));
}

QJsonObject Run::toJson() const
{
    return QJsonObject {
        { QLatin1StringView("id"), id },
        { QLatin1StringView("project"), project },
        { QLatin1StringView("requested_by"), requestedBy },
        { QLatin1StringView("executor_id"), integerOrNull(executorId) },
        { QLatin1StringView("virtual_executor"), textOrNull(virtualExecutor) },
        { QLatin1StringView("runtime"), textOrNull(runtime) },
        { QLatin1StringView("image"), textOrNull(image) },
        { QLatin1StringView("argv"), QJsonArray::fromStringList(argv) },
        { QLatin1StringView("host_process"), hostProcess },
        { QLatin1StringView("state"), stateName(state) },
        { QLatin1StringView("exit_code"),
            exitCode ? QJsonValue(*exitCode) : QJsonValue(QJsonValue::Null) },
        { QLatin1StringView("error"), textOrNull(error) },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("dispatched_at"), timeOrNull(dispatchedAt) },
        { QLatin1StringView("started_at"), timeOrNull(startedAt) },
        { QLatin1StringView("finished_at"), timeOrNull(finishedAt) },
        { QLatin1StringView("finished"), finished },
    };
}

} // namespace cloop::api
