#pragma once

#include "common/identity/enrollmentbundle.h"
#include "hub/server/api/apirouter.h"

#include <QDateTime>
#include <QJsonObject>

namespace cloop::hub {

struct HubIdentity;

// What an enroll call answers (201), for a forwarder or an executor agent:
// the record, the bundle that carries the one-time token with this hub's
// address and pin, the command that starts the daemon with it from a 0600
// file, and when the token expires.
ApiResponse enrollmentAnswer(const HubIdentity &hub, identity::EnrollmentBundle::Kind kind,
    const QJsonObject &record, const QString &token, const QDateTime &tokenExpiresAt);

// The routes every kind of enrolled daemon has under its collection
// ("/api/forwarders"): the listing, one of them, its enrollment, whose
// answer carries the bundle once, and a new bundle for one that never
// redeemed its first ("/{id}/enrollment"). `json(writer, record)` writes a record;
// `recordOf` picks the new record out of
// what the service's enroll() gives.
template <typename Service, typename ToJson, typename RecordOf>
void addEnrolledDaemonRoutes(ApiRouter &router, const QString &collection, QLatin1StringView key,
    Service &service, const HubIdentity &hub, identity::EnrollmentBundle::Kind kind, ToJson json,
    RecordOf recordOf)
{
    router.add("GET", collection, [&service, key, json](const ApiCall &call) {
        return ApiResponse::listOf(service.list(call.caller), key, json);
    });
    router.add("GET", collection + QLatin1String("/{id}"), [&service, json](const ApiCall &call) {
        return ApiResponse::of(service.find(call.caller, call.id()), json);
    });
    const auto answer = [&hub, kind, json, recordOf](const auto &enrollment) {
        if (!enrollment)
            return ApiResponse::fromError(enrollment.error());
        const auto record = recordOf(*enrollment);
        return enrollmentAnswer(hub, kind,
            util::writtenObject([&](util::JsonWriter &out) { json(out, record); }),
            enrollment->token, enrollment->tokenExpiresAt);
    };
    router.add("POST", collection, [&service, answer](const ApiCall &call) {
        return answer(service.enroll(call.caller, call.body));
    });
    router.add("POST", collection + QLatin1String("/{id}/enrollment"),
        [&service, answer](const ApiCall &call) {
            return answer(service.reissue(call.caller, call.id(), call.body));
        });
}

} // namespace cloop::hub
