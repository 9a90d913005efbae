#include "hub/domain/forwarderservice.h"

#include "hub/domain/requestfields.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/eventbus.h"
#include "hub/storage/database.h"

namespace cloop::hub {

ForwarderService::ForwarderService(Database &db, ForwarderStore &forwarders,
    BindingService &bindings, const AccessPolicy &policy, EventBus &events)
    : m_db(db)
    , m_forwarders(forwarders)
    , m_bindings(bindings)
    , m_policy(policy)
    , m_events(events)
{ }

Result<NewEnrollment> ForwarderService::enroll(const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::EnrollForwarder);
        !allowed)
        return allowed.error();
    const QJsonValue name = body.value(QLatin1String("name"));
    if (!name.isString())
        return Error::make(QStringLiteral("invalid_name"), QStringLiteral("\"name\" is required"));
    const QJsonValue usb = body.value(QLatin1String("usb"));
    const QJsonValue iface = body.value(QLatin1String("interface"));
    if (usb.isUndefined() == iface.isUndefined())
        return Error::make(QStringLiteral("invalid_device"),
            QStringLiteral(
                "give exactly one of \"usb\" (VID:PID[:SERIAL]) or \"interface\" (a network "
                "interface name)"));
    auto device = usb.isUndefined() ? protocol::DeviceSpec::parseInterface(iface.toString())
                                    : protocol::DeviceSpec::parseUsb(usb.toString());
    if (!device)
        return device.error();
    auto ttl = requestfields::duration(
        body, QLatin1StringView("token_ttl"), ForwarderStore::kDefaultTokenTtl);
    if (!ttl)
        return ttl.error();
    Database::Transaction transaction(m_db);
    auto enrollment = m_forwarders.enroll(name.toString(), *device, caller.actor(), *ttl);
    if (!enrollment)
        return enrollment.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kForwarderEnrolled),
        { { QStringLiteral("id"), enrollment->forwarder.id },
            { QStringLiteral("name"), enrollment->forwarder.name },
            { QStringLiteral("device"), enrollment->forwarder.device.describe() } },
        std::nullopt });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "enrolled forwarder" << enrollment->forwarder.id
                            << enrollment->forwarder.name
                            << enrollment->forwarder.device.describe();
    return enrollment;
}

Result<NewEnrollment> ForwarderService::reissue(
    const ApiPrincipal &caller, qint64 forwarderId, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::EnrollForwarder);
        !allowed)
        return allowed.error();
    auto ttl = requestfields::duration(
        body, QLatin1StringView("token_ttl"), ForwarderStore::kDefaultTokenTtl);
    if (!ttl)
        return ttl.error();
    auto enrollment = m_forwarders.reissue(forwarderId, caller.actor(), *ttl);
    if (!enrollment)
        return enrollment.error();
    qCInfo(lcHub).noquote() << caller.userName << "issued a new enrollment token for forwarder"
                            << forwarderId << enrollment->forwarder.name;
    return enrollment;
}

Result<ForwarderRecord> ForwarderService::revoke(
    const ApiPrincipal &caller, qint64 forwarderId, const QString &reason)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::RevokeForwarder);
        !allowed)
        return allowed.error();
    const QString actor = caller.actor();
    Database::Transaction transaction(m_db);
    auto revoked = m_forwarders.revoke(forwarderId, actor, reason);
    if (!revoked)
        return revoked.error();
    auto ended = m_bindings.endForRevokedForwarder(forwarderId, actor);
    if (!ended)
        return ended.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kForwarderRevoked),
        { { QStringLiteral("id"), forwarderId }, { QStringLiteral("name"), revoked->name },
            { QStringLiteral("by"), caller.userName }, { QStringLiteral("reason"), reason } },
        std::nullopt });
    m_bindings.publish(*ended);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();

    qCInfo(lcHub).noquote() << caller.userName << "revoked forwarder" << forwarderId
                            << revoked->name << "-" << ended->bindings.size() << "binding(s) ended,"
                            << ended->requests.size() << "request(s) cancelled";
    return revoked;
}

Result<QList<ForwarderRecord>> ForwarderService::list(const ApiPrincipal &caller)
{
    return m_policy.ifAllowed(
        caller, AccessPolicy::HubAction::ListForwarders, [&] { return m_forwarders.list(); });
}

Result<ForwarderRecord> ForwarderService::find(const ApiPrincipal &caller, qint64 forwarderId)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::ReadForwarder,
        [&] { return m_forwarders.find(forwarderId); });
}

Result<ForwarderRecord> ForwarderService::findForTest(
    const ApiPrincipal &caller, qint64 forwarderId)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::TestForwarder,
        [&] { return m_forwarders.find(forwarderId); });
}

Result<ForwarderRecord> ForwarderService::findForUpgrade(
    const ApiPrincipal &caller, qint64 forwarderId)
{
    return m_policy.ifAllowed(caller, AccessPolicy::HubAction::UpgradeDevice,
        [&] { return m_forwarders.find(forwarderId); });
}

Result<ForwarderRecord> ForwarderService::authenticate(const QString &credential)
{
    return m_forwarders.authenticate(credential);
}

Result<RedeemedEnrollment> ForwarderService::redeem(const QString &token)
{
    return m_forwarders.redeem(token);
}

Status ForwarderService::recordHello(
    qint64 forwarderId, const QString &software, int protocol, const QString &channel)
{
    return m_forwarders.recordHello(forwarderId, software, protocol, channel);
}

Status ForwarderService::touchLastSeen(qint64 forwarderId)
{
    return m_forwarders.touchLastSeen(forwarderId);
}

} // namespace cloop::hub
