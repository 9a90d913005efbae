#include "hub/domain/tokenservice.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/requestfields.h"
#include "hub/storage/database.h"

namespace cloop::hub {

TokenService::TokenService(Database &db, ApiTokenStore &tokens, ProjectStore &projects,
    const AccessPolicy &policy, EventBus &events, const Clock &clock)
    : m_tokens(tokens)
    , m_projects(projects)
    , m_policy(policy)
    , m_events(events)
    , m_clock(clock)
    , m_db(db)
{ }

Result<ApiPrincipal> TokenService::authenticate(const QString &bearer)
{
    return m_tokens.authenticate(bearer);
}

Result<ApiPrincipal> TokenService::principalOf(qint64 tokenId)
{
    return m_tokens.principalOf(tokenId);
}

Result<TokenService::Created> TokenService::create(
    const ApiPrincipal &caller, const QJsonObject &body)
{
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::CreateToken); !allowed)
        return allowed.error();
    auto userName = requestfields::text(body, QLatin1StringView("user"), true);
    if (!userName)
        return userName.error();
    auto label = requestfields::text(body, QLatin1StringView("label"));
    if (!label)
        return label.error();
    auto user = m_projects.findUser(*userName);
    if (!user)
        return user.error();
    auto token = m_tokens.createToken(user->id, label->left(200), caller.actor());
    if (!token)
        return token.error();
    qCInfo(lcHub).noquote() << caller.userName << "created an API token for" << user->name;
    return Created { *token, *user };
}

Result<QList<ApiTokenRecord>> TokenService::list(
    const ApiPrincipal &caller, const QString &userName)
{
    std::optional<qint64> owner = caller.userId;
    if (!userName.isEmpty()) {
        auto user = m_projects.findUser(userName);
        if (!user)
            return user.error();
        if (Status allowed
            = m_policy.require(caller, user->id, AccessPolicy::UserAction::ListTokens);
            !allowed)
            return allowed.error();
        owner = user->id;
    } else if (caller.hubAdmin) {
        owner.reset();
    }
    return m_tokens.list(owner);
}

Result<ApiTokenRecord> TokenService::revoke(const ApiPrincipal &caller, qint64 tokenId)
{
    auto token = m_tokens.find(tokenId);
    if (!token)
        return token.error();
    if (Status allowed
        = m_policy.require(caller, token->userId, AccessPolicy::UserAction::RevokeToken);
        !allowed)
        return allowed.error();
    Database::Transaction transaction(m_db);
    auto revoked = m_tokens.revoke(tokenId, caller.actor());
    if (!revoked)
        return revoked.error();
    m_events.publish(HubEvent { QString(api::hubeventname::kTokenRevoked),
        { { QStringLiteral("token_id"), revoked->id },
            { QStringLiteral("user_id"), revoked->userId } },
        std::nullopt, m_clock.now(), revoked->userId });
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "revoked API token" << tokenId << "of"
                            << revoked->userName;
    return revoked;
}

} // namespace cloop::hub
