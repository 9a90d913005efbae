#include "hub/edge/greeting.h"

#include "common/protocol/protocolversion.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::hub::edge {

using namespace protocol;

namespace {

Status checkPeer(PeerRole role, int version, PeerRole endpointRole)
{
    if (role != endpointRole)
        return Error::make(QStringLiteral("wrong_endpoint"),
            QStringLiteral("this is the %1 endpoint (%2); a %3 connects to %4")
                .arg(roleName(endpointRole), endpointFor(endpointRole), roleName(role),
                    endpointFor(role)),
            true);
    if (version < kMinimumSupported)
        return Error::make(QStringLiteral("protocol_too_old"),
            QStringLiteral(
                "protocol %1 is older than this hub supports (%2); upgrade cloop on this machine")
                .arg(version)
                .arg(kMinimumSupported),
            true);
    return {};
}

Error protocolError(const QString &message)
{
    return Error::make(QStringLiteral("protocol_error"), message, true);
}

} // namespace

QLatin1StringView endpointFor(PeerRole role)
{
    return role == PeerRole::Forwarder ? kForwarderEndpoint : kExecutorEndpoint;
}

Result<DaemonGreeting> parseDaemonGreeting(const FirstMessage &message, PeerRole endpointRole)
{
    if (message.binary)
        return protocolError(
            QStringLiteral("the first message must be a hello or redeem (text), not binary data"));
    auto parsed = parseControlMessage(message.payload);
    if (!parsed)
        return Error::make(parsed.error().code, parsed.error().message, true);
    if (const auto *hello = std::get_if<Hello>(&*parsed)) {
        if (Status peer = checkPeer(hello->role, hello->protocol, endpointRole); !peer)
            return peer.error();
        return DaemonGreeting { *hello };
    }
    if (const auto *redeem = std::get_if<Redeem>(&*parsed)) {
        if (Status peer = checkPeer(redeem->role, redeem->protocol, endpointRole); !peer)
            return peer.error();
        return DaemonGreeting { *redeem };
    }
    return protocolError(
        QStringLiteral("expected hello or redeem, got %1").arg(controlMessageType(*parsed)));
}

Result<QString> parseSubscription(const FirstMessage &message)
{
    const Error malformed = protocolError(
        QStringLiteral("the first message must be {\"type\": \"subscribe\", \"token\": …}"));
    if (message.binary)
        return malformed;
    QJsonParseError error {};
    const QJsonDocument document = QJsonDocument::fromJson(message.payload, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return malformed;
    const QJsonObject object = document.object();
    if (object.value(QLatin1String("type")).toString() != QLatin1String("subscribe")
        || !object.value(QLatin1String("token")).isString())
        return malformed;
    return object.value(QLatin1String("token")).toString();
}

} // namespace cloop::hub::edge
