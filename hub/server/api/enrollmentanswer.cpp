#include "hub/server/api/enrollmentanswer.h"

#include "hub/server/api/forwarderroutes.h"
#include "hub/storage/database.h"

namespace cloop::hub {

ApiResponse enrollmentAnswer(const HubIdentity &hub, identity::EnrollmentBundle::Kind kind,
    const QJsonObject &record, const QString &token, const QDateTime &tokenExpiresAt)
{
    const bool forwarder = kind == identity::EnrollmentBundle::Kind::Forwarder;
    identity::EnrollmentBundle bundle;
    bundle.kind = kind;
    bundle.setHubs(hub.bundleUrls());
    bundle.token = token;
    bundle.pins = hub.pin;
    const QString daemon
        = forwarder ? QStringLiteral("cloop forward") : QStringLiteral("cloop executor agent");
    const QString file
        = forwarder ? QStringLiteral("forwarder.bundle") : QStringLiteral("agent.bundle");
    const QString command = bundle.tokenFileCommand(daemon, file);
    return ApiResponse::ok(
        QJsonObject {
            { forwarder ? QStringLiteral("forwarder") : QStringLiteral("executor"), record },
            { QStringLiteral("bundle"), bundle.encode() }, { QStringLiteral("command"), command },
            { QStringLiteral("install_command"), bundle.installCommand(daemon, file) },
            { QStringLiteral("token_expires_at"), toDbTime(tokenExpiresAt) } },
        201);
}

} // namespace cloop::hub
