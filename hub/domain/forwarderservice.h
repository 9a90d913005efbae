#pragma once

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/forwarderstore.h"

#include <QJsonObject>

namespace cloop::hub {

class AccessPolicy;
class BindingService;
class Database;
class EventBus;

// Enrolling and revoking forwarders (hub administrators), and reading them
// (anyone with a role). A revocation ends the forwarder's bindings and
// requests in the same transaction and is published as forwarder.revoked,
// which the gateway answers by dropping the live session. The forwarders
// themselves come in through the same service at their endpoint.
class ForwarderService
{
public:
    ForwarderService(Database &db, ForwarderStore &forwarders, BindingService &bindings,
        const AccessPolicy &policy, EventBus &events);

    // {"name", "usb" | "interface", "token_ttl"}
    Result<NewEnrollment> enroll(const ApiPrincipal &caller, const QJsonObject &body);
    // A new one-time token for a forwarder that never redeemed its first
    // ({"token_ttl"}); the earlier ones stop working.
    Result<NewEnrollment> reissue(
        const ApiPrincipal &caller, qint64 forwarderId, const QJsonObject &body);
    Result<ForwarderRecord> revoke(
        const ApiPrincipal &caller, qint64 forwarderId, const QString &reason);
    Result<QList<ForwarderRecord>> list(const ApiPrincipal &caller);
    Result<ForwarderRecord> find(const ApiPrincipal &caller, qint64 forwarderId);
    // Testing opens the device (promiscuous on a segment): hub administrators only.
    Result<ForwarderRecord> findForTest(const ApiPrincipal &caller, qint64 forwarderId);
    // For a hub administrator asking the forwarder to upgrade.
    Result<ForwarderRecord> findForUpgrade(const ApiPrincipal &caller, qint64 forwarderId);

    // The forwarders' endpoint, where no person asks: a forwarder's first
    // message names its credential, or the token it redeems for one.
    Result<ForwarderRecord> authenticate(const QString &credential);
    Result<RedeemedEnrollment> redeem(const QString &token);
    Status touchLastSeen(qint64 forwarderId);
    // What its hello said of it: version, protocol, update channel.
    Status recordHello(
        qint64 forwarderId, const QString &software, int protocol, const QString &channel);

private:
    Database &m_db;
    ForwarderStore &m_forwarders;
    BindingService &m_bindings;
    const AccessPolicy &m_policy;
    EventBus &m_events;
};

} // namespace cloop::hub
