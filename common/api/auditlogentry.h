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
    QString subject; // "forwarder:3", "project:/srv/x", "user:maria"
    QJsonObject details; // the action's own fields
    // The name of a forwarder or executor subject, as it is now; empty for
    // other subjects and for ones that are gone.
    QString subjectName;
    // The same for a forwarder or executor that acted (a forwarder's
    // report, an executor's run).
    QString actorName;

    // "forwarder lab (#3)" for a named daemon subject; the subject as
    // written otherwise.
    QString describeSubject() const;
    // The same for the actor.
    QString describeActor() const;

    static Result<AuditLogEntry> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const AuditLogEntry &, const AuditLogEntry &) = default;
};

// An entry's details for a person: key=value pairs, a nested object's
// fields as key.field=value, text with spaces or quotes in quotes, "-" for
// none. {"ttl": "8h", "reason": "bench back"} -> ttl=8h reason="bench back".
QString describeAuditDetails(const QJsonObject &details);

} // namespace cloop::api
