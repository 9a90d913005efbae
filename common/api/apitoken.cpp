#include "common/api/apitoken.h"

namespace cloop::api {

Result<ApiToken> ApiToken::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("token"));
    ApiToken token;
    token.id = read.integer(QLatin1StringView("id"));
    token.user = read.text(QLatin1StringView("user"));
    token.label = read.text(QLatin1StringView("label"));
    token.createdAt = read.time(QLatin1StringView("created_at"));
    token.revokedAt = read.time(QLatin1StringView("revoked_at"));
    if (object.contains(QLatin1StringView("current")))
        token.current = read.flag(QLatin1StringView("current"));
    return read.finish(std::move(token));
}

QJsonObject ApiToken::toJson() const
{
    QJsonObject object { { QLatin1StringView("id"), id }, { QLatin1StringView("user"), user },
        { QLatin1StringView("label"), label },
        { QLatin1StringView("created_at"), timeOrNull(createdAt) },
        { QLatin1StringView("revoked_at"), timeOrNull(revokedAt) } };
    if (current)
        object.insert(QLatin1StringView("current"), *current);
    return object;
}

Result<NewApiToken> NewApiToken::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("new token"));
    NewApiToken made;
    made.token = read.text(QLatin1StringView("token"));
    made.user = read.text(QLatin1StringView("user"));
    return read.finish(std::move(made));
}

QJsonObject NewApiToken::toJson() const
{
    return QJsonObject { { QLatin1StringView("token"), token },
        { QLatin1StringView("user"), user } };
}

} // namespace cloop::api
