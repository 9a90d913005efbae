#include "hub/domain/recordjson.h"

#include "common/util/duration.h"
#include "hub/storage/database.h"

#include <QJsonArray>

namespace cloop::hub {

namespace {
QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

} // namespace

QJsonValue timeOrNull(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(toDbTime(time)) : QJsonValue(QJsonValue::Null);
}

QString daemonStateName(bool revoked, bool enrolled, bool connected)
{
    if (revoked)
        return QStringLiteral("revoked");
    if (connected)
        return QStringLiteral("connected");
    return enrolled ? QStringLiteral("disconnected") : QStringLiteral("awaiting_enrollment");
}

QJsonObject bindingJson(const BindingRecord &binding, const QDateTime &now)
{
    BindingRecord::State state = binding.state;
    if (state == BindingRecord::State::Active && binding.expiresAt <= now)
        state = BindingRecord::State::Expired;
    return QJsonObject {
        { QStringLiteral("id"), binding.id },
        { QStringLiteral("forwarder_id"), binding.forwarderId },
        { QStringLiteral("forwarder"), binding.forwarderName },
        { QStringLiteral("project"), binding.projectPath },
        { QStringLiteral("virtual_executor"), textOrNull(binding.terms.virtualExecutor) },
        { QStringLiteral("target"), textOrNull(binding.terms.targetInterface) },
        { QStringLiteral("address"), textOrNull(binding.terms.targetAddress) },
        { QStringLiteral("created_at"), timeOrNull(binding.createdAt) },
        { QStringLiteral("created_by"), binding.createdBy },
        { QStringLiteral("expires_at"), timeOrNull(binding.expiresAt) },
        { QStringLiteral("request_id"),
            binding.requestId ? QJsonValue(*binding.requestId) : QJsonValue(QJsonValue::Null) },
        { QStringLiteral("state"), bindingStateName(state) },
        { QStringLiteral("ended_at"), timeOrNull(binding.endedAt) },
        { QStringLiteral("ended_by"), textOrNull(binding.endedBy) },
        { QStringLiteral("end_reason"), textOrNull(binding.endReason) },
    };
}

QJsonObject requestJson(const RequestRecord &request, const QDateTime &now)
{
    RequestRecord::State state = request.state;
    if (state == RequestRecord::State::Pending && request.expiresAt <= now)
        state = RequestRecord::State::Expired;
    return QJsonObject {
        { QStringLiteral("id"), request.id },
        { QStringLiteral("forwarder_id"), request.forwarderId },
        { QStringLiteral("forwarder"), request.forwarderName },
        { QStringLiteral("project"), request.projectPath },
        { QStringLiteral("requested_by"), request.requesterName },
        { QStringLiteral("reason"), request.reason },
        { QStringLiteral("ttl"), util::formatDuration(request.terms.ttl) },
        { QStringLiteral("ttl_seconds"), static_cast<qint64>(request.terms.ttl.count()) },
        { QStringLiteral("virtual_executor"), textOrNull(request.terms.virtualExecutor) },
        { QStringLiteral("target"), textOrNull(request.terms.targetInterface) },
        { QStringLiteral("address"), textOrNull(request.terms.targetAddress) },
        { QStringLiteral("created_at"), timeOrNull(request.createdAt) },
        { QStringLiteral("expires_at"), timeOrNull(request.expiresAt) },
        { QStringLiteral("state"), requestStateName(state) },
        { QStringLiteral("decided_by"), textOrNull(request.decidedBy) },
        { QStringLiteral("decided_at"), timeOrNull(request.decidedAt) },
        { QStringLiteral("decision_reason"), textOrNull(request.decisionReason) },
        { QStringLiteral("binding_id"),
            request.bindingId ? QJsonValue(*request.bindingId) : QJsonValue(QJsonValue::Null) },
    };
}

QJsonObject projectJson(const ProjectRecord &project)
{
    QJsonArray members;
    for (const ProjectMember &member : project.members)
        members.append(QJsonObject { { QStringLiteral("user"), member.user },
            { QStringLiteral("role"), roleName(member.role) } });
    return QJsonObject { { QStringLiteral("id"), project.id },
        { QStringLiteral("path"), project.path },
        { QStringLiteral("created_at"), timeOrNull(project.createdAt) },
        { QStringLiteral("created_by"), project.createdBy },
        { QStringLiteral("members"), members } };
}

QJsonObject userJson(const UserRecord &user)
{
    return QJsonObject { { QStringLiteral("id"), user.id }, { QStringLiteral("name"), user.name },
        { QStringLiteral("hub_admin"), user.hubAdmin },
        { QStringLiteral("created_at"), timeOrNull(user.createdAt) } };
}

QJsonObject runJson(const RunRecord &run)
{
    return QJsonObject {
        { QStringLiteral("id"), run.id },
        { QStringLiteral("project"),
            run.projectPath.isEmpty() ? QJsonValue(QJsonValue::Null)
                                      : QJsonValue(run.projectPath) },
        { QStringLiteral("harness"),
            run.harness.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(run.harness) },
        { QStringLiteral("requested_by"), run.requestedBy },
        { QStringLiteral("executor_id"),
            run.executorId ? QJsonValue(*run.executorId) : QJsonValue(QJsonValue::Null) },
        { QStringLiteral("virtual_executor"),
            run.virtualExecutor.isEmpty() ? QJsonValue(QJsonValue::Null)
                                          : QJsonValue(run.virtualExecutor) },
        { QStringLiteral("runtime"),
            run.runtime.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(run.runtime) },
        { QStringLiteral("image"),
            run.image.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(run.image) },
        { QStringLiteral("argv"), QJsonArray::fromStringList(run.argv) },
        { QStringLiteral("host_process"), run.hostProcess },
        { QStringLiteral("state"), runStateName(run.state) },
        { QStringLiteral("exit_code"),
            run.exitCode ? QJsonValue(*run.exitCode) : QJsonValue(QJsonValue::Null) },
        { QStringLiteral("error"),
            run.error.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(run.error) },
        { QStringLiteral("created_at"), timeOrNull(run.createdAt) },
        { QStringLiteral("dispatched_at"), timeOrNull(run.dispatchedAt) },
        { QStringLiteral("started_at"), timeOrNull(run.startedAt) },
        { QStringLiteral("finished_at"), timeOrNull(run.finishedAt) },
        { QStringLiteral("finished"), run.isFinished() },
    };
}

} // namespace cloop::hub
