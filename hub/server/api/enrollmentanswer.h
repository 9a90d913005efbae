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

} // namespace cloop::hub
