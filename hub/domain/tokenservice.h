#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/projectstore.h"

#include <QJsonObject>

namespace cloop::hub {

class AccessPolicy;
class Database;
class EventBus;

// Users' API tokens: who a bearer is, tokens created by hub administrators
// for anyone, listed and revoked by their owner or a hub administrator. A
// revocation takes effect at once and is published (token.revoked) for the
// token's user only, so that the event stream ends its subscriptions.
class TokenService
{
public:
    TokenService(Database &db, ApiTokenStore &tokens, ProjectStore &projects,
        const AccessPolicy &policy, EventBus &events, const Clock &clock);

    // Who calls with this bearer token (a request, a subscription).
    Result<ApiPrincipal> authenticate(const QString &bearer);
    // Who a token still speaks for, by its id (a subscription's recheck).
    Result<ApiPrincipal> principalOf(qint64 tokenId);

    struct Created
    {
        QString token; // plaintext, shown once
        UserRecord user;
    };
    // {"user", "label"}; read once the caller may create tokens.
    Result<Created> create(const ApiPrincipal &caller, const QJsonObject &body);
    // The tokens of the user named `userName`; without a name, the caller's
    // own, or everybody's for a hub administrator.
    Result<QList<ApiTokenRecord>> list(const ApiPrincipal &caller, const QString &userName);
    Result<ApiTokenRecord> revoke(const ApiPrincipal &caller, qint64 tokenId);

private:
    ApiTokenStore &m_tokens;
    ProjectStore &m_projects;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    const Clock &m_clock;
    Database &m_db;
};

} // namespace cloop::hub
