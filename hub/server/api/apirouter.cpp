#include "hub/server/api/apirouter.h"

#include "hub/domain/requestfields.h"
#include "hub/storage/database.h"

#include <QHash>
#include <QJsonDocument>
#include <QStringList>

namespace cloop::hub {

namespace {
int statusFor(const QString &code)
{
    static const QHash<QString, int> statuses {
        { QStringLiteral("unauthorized"), 401 },
        { QStringLiteral("wrong_credential_type"), 401 },
        { QStringLiteral("forbidden"), 403 },
        { QStringLiteral("own_request"), 403 },
        { QStringLiteral("not_found"), 404 },
        { QStringLiteral("method_not_allowed"), 405 },
        { QStringLiteral("name_taken"), 409 },
        { QStringLiteral("name_reserved"), 409 },
        { QStringLiteral("already_revoked"), 409 },
        { QStringLiteral("already_enrolled"), 409 },
        { QStringLiteral("already_bound"), 409 },
        { QStringLiteral("already_decided"), 409 },
        { QStringLiteral("already_ended"), 409 },
        { QStringLiteral("forwarder_revoked"), 409 },
        { QStringLiteral("executor_revoked"), 409 },
        { QStringLiteral("forwarder_offline"), 409 },
        { QStringLiteral("forwarder_busy"), 409 },
        { QStringLiteral("daemon_offline"), 409 },
        { QStringLiteral("upgrade_refused"), 409 },
        { QStringLiteral("upgrade_unsupported"), 409 },
        { QStringLiteral("upgrade_unanswered"), 504 },
        { QStringLiteral("run_state"), 409 },
        { QStringLiteral("project_exists"), 409 },
        { QStringLiteral("user_exists"), 409 },
        { QStringLiteral("body_too_large"), 413 },
        { QString(errorCodeName(ErrorCode::StorageError)), 500 },
        { QString(kDatabaseUnreachable), 503 },
        { QString(kStorageFull), 507 },
    };
    return statuses.value(code, 400);
}
} // namespace

void DeferredResponse::finish(ApiResponse response)
{
    if (std::exchange(m_finished, true))
        return;
    m_result = std::move(response);
    Q_EMIT finished(*m_result);
}

QJsonValue ApiResponse::jsonBody() const
{
    if (contentType != "application/json")
        return body;
    const QJsonDocument document = QJsonDocument::fromJson(raw);
    if (document.isArray())
        return document.array();
    return document.object();
}

ApiResponse ApiResponse::error(int status, const QString &code, const QString &message)
{
    return ok(QJsonObject { { QStringLiteral("error"),
                  QJsonObject { { QStringLiteral("code"), code },
                      { QStringLiteral("message"), message } } } },
        status);
}

ApiResponse ApiResponse::fromError(const Error &error)
{
    return ApiResponse::error(statusFor(error.code), error.code, error.message);
}

bool ApiCall::queryFlag(const QString &key) const
{
    const QString value = queryValue(key);
    return value == QLatin1String("1") || value == QLatin1String("true")
        || value == QLatin1String("yes");
}

Result<QString> ApiCall::text(QLatin1StringView key, bool required) const
{
    return requestfields::text(body, key, required);
}

void ApiRouter::add(const QByteArray &method, const QString &pattern, Handler handler)
{
    QString regex = QRegularExpression::escape(pattern);
    regex.replace(
        QRegularExpression::escape(QStringLiteral("{id}")), QStringLiteral("(\\d{1,15})"));
    m_routes.append(Route { method, pattern,
        QRegularExpression(QLatin1Char('^') + regex + QLatin1Char('$')), std::move(handler) });
}

const ApiRouter::Route *ApiRouter::find(const QByteArray &method, const QString &path,
    QStringList *allowed, QRegularExpressionMatch *match) const
{
    for (const Route &route : m_routes) {
        QRegularExpressionMatch matched = route.path.match(path);
        if (!matched.hasMatch())
            continue;
        if (route.method != method) {
            allowed->append(QString::fromLatin1(route.method));
            continue;
        }
        if (match)
            *match = std::move(matched);
        return &route;
    }
    return nullptr;
}

std::optional<ApiResponse> ApiRouter::refusal(const QByteArray &method, const QString &path) const
{
    QStringList allowed;
    if (find(method, path, &allowed, nullptr))
        return std::nullopt;
    if (!allowed.isEmpty())
        return ApiResponse::error(405, QStringLiteral("method_not_allowed"),
            QStringLiteral("%1 takes %2").arg(path, allowed.join(QStringLiteral(", "))));
    return ApiResponse::error(
        404, QStringLiteral("not_found"), QStringLiteral("no such API route: %1").arg(path));
}

QString ApiRouter::patternOf(const QByteArray &method, const QString &path) const
{
    QStringList allowed;
    QRegularExpressionMatch match;
    const Route *route = find(method, path, &allowed, &match);
    return route ? route->pattern : QString();
}

ApiResponse ApiRouter::dispatch(
    const ApiRequest &request, const ApiPrincipal &caller, const QJsonObject &body) const
{
    QStringList allowed;
    QRegularExpressionMatch match;
    const Route *route = find(request.method, request.path, &allowed, &match);
    if (!route)
        return *refusal(request.method, request.path);
    ApiCall call { request, caller, body, {} };
    for (int i = 1; i <= match.lastCapturedIndex(); ++i)
        call.ids.append(match.captured(i).toLongLong());
    return route->handler(call);
}

} // namespace cloop::hub
