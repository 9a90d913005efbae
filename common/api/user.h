#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A person the hub knows (GET /api/users).
struct User
{
    qint64 id = 0;
    QString name;
    bool hubAdmin = false;
    QDateTime createdAt;

    static Result<User> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const User &, const User &) = default;
};

} // namespace cloop::api
