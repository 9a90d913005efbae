#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// One entry of the hub's audit log (GET /api/audit): who changed what, when.
struct AuditLogEntry
{
    qint64 id = 0;
    QDateTime at;
    QString actor; // "user:NAME", "forwarder:ID" or "hub"
    QString action; // "forwarder.bind", "project.role", …
    QString subject;
    QJsonObject details; // the action's own fields

    static Result<AuditLogEntry> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const AuditLogEntry &, const AuditLogEntry &) = default;
};

} // namespace cloop::api
