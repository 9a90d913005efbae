#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A user's API token, as listed (GET /api/tokens); the token itself is
// shown once, when it is made, and never again.
struct ApiToken
{
    qint64 id = 0;
    QString user;
    QString label;
    QDateTime createdAt;
    QDateTime revokedAt;
    // In a listing: whether it is the token the listing was asked with.
    std::optional<bool> current;

    bool isRevoked() const { return revokedAt.isValid(); }

    static Result<ApiToken> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const ApiToken &, const ApiToken &) = default;
};

// The answer to making a token (POST /api/tokens): the token itself, shown
// this once.
struct NewApiToken
{
    QString token; // "cat_…"
    QString user;

    static Result<NewApiToken> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const NewApiToken &, const NewApiToken &) = default;
};

} // namespace cloop::api
