#include "hub/server/adminapi.h"

#include "common/identity/enrollmentbundle.h"
#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "common/util/duration.h"
#include "hub/server/forwardergateway.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace cloop::hub {

namespace {

int statusFor(const QString &code)
{
    static const QHash<QString, int> statuses{
        {QStringLiteral("unauthorized"), 401},
        {QStringLiteral("wrong_credential_type"), 401},
        {QStringLiteral("forbidden"), 403},
        {QStringLiteral("not_found"), 404},
        {QStringLiteral("method_not_allowed"), 405},
        {QStringLiteral("name_taken"), 409},
        {QStringLiteral("already_revoked"), 409},
        {QStringLiteral("body_too_large"), 413},
        {QStringLiteral("storage_error"), 500},
    };
    return statuses.value(code, 400);
}

QString formatTime(const QDateTime &time)
{
    return time.isValid() ? toDbTime(time) : QString();
}

QJsonValue timeOrNull(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(toDbTime(time)) : QJsonValue(QJsonValue::Null);
}

} // namespace

ApiResponse ApiResponse::error(int status, const QString &code, const QString &message)
{
    return ApiResponse{status, QJsonObject{{QStringLiteral("error"),
                                            QJsonObject{{QStringLiteral("code"), code},
                                                        {QStringLiteral("message"), message}}}}};
}

ApiResponse ApiResponse::fromError(const Error &error)
{
    return ApiResponse::error(statusFor(error.code), error.code, error.message);
}

AdminApi::AdminApi(ApiTokenStore &tokens, ForwarderStore &forwarders, ForwarderGateway &gateway,
                   HubIdentity identity)
    : m_tokens(tokens), m_forwarders(forwarders), m_gateway(gateway), m_identity(std::move(identity))
{
}

ApiResponse AdminApi::handle(const ApiRequest &request)
{
    const QString &path = request.path;
    if (path == QLatin1String("/api/health")) {
        if (request.method != "GET")
            return ApiResponse::error(405, QStringLiteral("method_not_allowed"), QStringLiteral("use GET"));
        return health();
    }
    if (!path.startsWith(QLatin1String("/api/")))
        return ApiResponse::error(404, QStringLiteral("not_found"), QStringLiteral("no such page: %1").arg(path));

    if (!request.authorization.startsWith("Bearer "))
        return ApiResponse::error(401, QStringLiteral("unauthorized"),
                                  QStringLiteral("an API token is required (Authorization: Bearer …)"));
    const QString bearer = QString::fromUtf8(request.authorization.mid(7)).trimmed();
    auto caller = m_tokens.authenticate(bearer);
    if (!caller) {
        qCWarning(lcHubApi).noquote() << "refused API call" << request.method << path << ":" << caller.error().code;
        return ApiResponse::fromError(caller.error());
    }

    if (request.body.size() > kMaxBodySize)
        return ApiResponse::error(413, QStringLiteral("body_too_large"),
                                  QStringLiteral("request body over %1 bytes").arg(kMaxBodySize));
    QJsonObject body;
    if (!request.body.trimmed().isEmpty()) {
        QJsonParseError parseError{};
        const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject())
            return ApiResponse::error(400, QStringLiteral("invalid_json"),
                                      QStringLiteral("the request body is not a JSON object%1")
                                              .arg(parseError.error != QJsonParseError::NoError
                                                           ? QStringLiteral(": ") + parseError.errorString()
                                                           : QString()));
        body = doc.object();
    }

    static const QRegularExpression forwarderPath(QStringLiteral("^/api/forwarders/(\\d{1,15})(/revoke)?$"));
    if (path == QLatin1String("/api/forwarders")) {
        if (request.method == "GET")
            return listForwarders();
        if (request.method == "POST")
            return enrollForwarder(*caller, body);
        return ApiResponse::error(405, QStringLiteral("method_not_allowed"), QStringLiteral("use GET or POST"));
    }
    if (const auto match = forwarderPath.match(path); match.hasMatch()) {
        const qint64 id = match.captured(1).toLongLong();
        const bool revoke = !match.captured(2).isEmpty();
        if (!revoke && request.method == "GET")
            return getForwarder(id);
        if (revoke && request.method == "POST")
            return revokeForwarder(*caller, id, body);
        return ApiResponse::error(405, QStringLiteral("method_not_allowed"),
                                  revoke ? QStringLiteral("use POST") : QStringLiteral("use GET"));
    }
    return ApiResponse::error(404, QStringLiteral("not_found"), QStringLiteral("no such API route: %1").arg(path));
}

ApiResponse AdminApi::health() const
{
    return ApiResponse{200, QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")},
                                        {QStringLiteral("version"), m_identity.software},
                                        {QStringLiteral("protocol"), protocol::kVersion}}};
}

QJsonObject AdminApi::forwarderJson(const ForwarderRecord &record) const
{
    const bool connected = m_gateway.isConnected(record.id);
    QString state = QStringLiteral("awaiting enrollment");
    if (record.isRevoked())
        state = QStringLiteral("revoked");
    else if (connected)
        state = QStringLiteral("connected");
    else if (record.enrolledAt.isValid())
        state = QStringLiteral("disconnected");
    return QJsonObject{
        {QStringLiteral("id"), record.id},
        {QStringLiteral("name"), record.name},
        {QStringLiteral("device"), record.device.toJson()},
        {QStringLiteral("device_description"), record.device.describe()},
        {QStringLiteral("state"), state},
        {QStringLiteral("connected"), connected},
        {QStringLiteral("last_seen"), connected ? QJsonValue(formatTime(QDateTime::currentDateTimeUtc()))
                                                : timeOrNull(record.lastSeenAt)},
        {QStringLiteral("created_at"), timeOrNull(record.createdAt)},
        {QStringLiteral("created_by"), record.createdBy},
        {QStringLiteral("enrolled_at"), timeOrNull(record.enrolledAt)},
        {QStringLiteral("revoked_at"), timeOrNull(record.revokedAt)},
    };
}

ApiResponse AdminApi::listForwarders()
{
    auto records = m_forwarders.list();
    if (!records)
        return ApiResponse::fromError(records.error());
    QJsonArray out;
    for (const ForwarderRecord &record : std::as_const(*records))
        out.append(forwarderJson(record));
    return ApiResponse{200, QJsonObject{{QStringLiteral("forwarders"), out}}};
}

ApiResponse AdminApi::getForwarder(qint64 id)
{
    auto record = m_forwarders.find(id);
    if (!record)
        return ApiResponse::fromError(record.error());
    return ApiResponse{200, forwarderJson(*record)};
}

ApiResponse AdminApi::enrollForwarder(const ApiPrincipal &caller, const QJsonObject &body)
{
    if (!caller.hubAdmin)
        return ApiResponse::error(403, QStringLiteral("forbidden"),
                                  QStringLiteral("enrolling a forwarder needs the permission executor.manage"));
    const QString name = body.value(QLatin1String("name")).toString();
    const QJsonValue usb = body.value(QLatin1String("usb"));
    const QJsonValue iface = body.value(QLatin1String("interface"));
    if (usb.isUndefined() == iface.isUndefined())
        return ApiResponse::error(400, QStringLiteral("invalid_device"),
                                  QStringLiteral("give exactly one of \"usb\" (VID:PID[:SERIAL]) or "
                                                 "\"interface\" (a network interface name)"));
    auto device = usb.isUndefined() ? protocol::DeviceSpec::parseInterface(iface.toString())
                                    : protocol::DeviceSpec::parseUsb(usb.toString());
    if (!device)
        return ApiResponse::fromError(device.error());
    std::chrono::seconds ttl = ForwarderStore::kDefaultTokenTtl;
    if (const QJsonValue ttlValue = body.value(QLatin1String("token_ttl")); !ttlValue.isUndefined()) {
        auto parsed = util::parseDuration(ttlValue.toString());
        if (!parsed)
            return ApiResponse::fromError(parsed.error());
        ttl = *parsed;
    }
    auto enrollment = m_forwarders.enroll(name, *device, QStringLiteral("user:%1").arg(caller.userName), ttl);
    if (!enrollment)
        return ApiResponse::fromError(enrollment.error());

    identity::EnrollmentBundle bundle;
    bundle.kind = identity::EnrollmentBundle::Kind::Forwarder;
    bundle.hub = m_identity.publicUrl;
    bundle.token = enrollment->token;
    bundle.pins = m_identity.pin;
    const QString encoded = bundle.encode();
    qCInfo(lcHubApi).noquote() << caller.userName << "enrolled forwarder" << enrollment->forwarder.id
                               << enrollment->forwarder.name << enrollment->forwarder.device.describe();
    QJsonObject out{
        {QStringLiteral("forwarder"), forwarderJson(enrollment->forwarder)},
        {QStringLiteral("bundle"), encoded},
        {QStringLiteral("command"), QStringLiteral("cloop forward --bundle %1").arg(encoded)},
        {QStringLiteral("token_expires_at"), toDbTime(enrollment->tokenExpiresAt)},
    };
    return ApiResponse{201, out};
}

ApiResponse AdminApi::revokeForwarder(const ApiPrincipal &caller, qint64 id, const QJsonObject &body)
{
    if (!caller.hubAdmin)
        return ApiResponse::error(403, QStringLiteral("forbidden"),
                                  QStringLiteral("revoking a forwarder needs the permission executor.manage"));
    const QString reason = body.value(QLatin1String("reason")).toString();
    auto revoked = m_forwarders.revoke(id, QStringLiteral("user:%1").arg(caller.userName), reason);
    if (!revoked)
        return ApiResponse::fromError(revoked.error());
    m_gateway.drop(id, protocol::ErrorMessage{QStringLiteral("revoked"),
                                              QStringLiteral("this forwarder was revoked by %1%2")
                                                      .arg(caller.userName,
                                                           reason.isEmpty() ? QString()
                                                                            : QStringLiteral(": ") + reason),
                                              true});
    return ApiResponse{200, forwarderJson(*revoked)};
}

} // namespace cloop::hub
