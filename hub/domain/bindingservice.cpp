#include "hub/domain/bindingservice.h"

#include "common/api/hubeventname.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "common/util/duration.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/bindingterms.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/recordjson.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"

namespace cloop::hub {

namespace {

Status requireReason(const QString &reason, const QString &what)
{
    if (reason.trimmed().isEmpty())
        return Error::make(
            QStringLiteral("invalid_request"), QStringLiteral("%1 needs a reason").arg(what));
    if (reason.size() > 2000)
        return Error::make(QStringLiteral("invalid_request"),
            QStringLiteral("the reason is longer than 2000 characters"));
    return {};
}

// What unbinding and requesting both ask first: the caller's right in the
// project, then a reason to write in the audit log.
Status requireWithReason(const AccessPolicy &policy, const ApiPrincipal &caller, qint64 projectId,
    AccessPolicy::ProjectAction action, const QString &reason, const QString &what)
{
    if (Status allowed = policy.require(caller, projectId, action); !allowed)
        return allowed;
    return requireReason(reason, what);
}

// A forwarder that exists and may still be lent.
Result<ForwarderRecord> lendableForwarder(ForwarderStore &forwarders, qint64 forwarderId)
{
    auto forwarder = forwarders.find(forwarderId);
    if (!forwarder)
        return forwarder.error();
    if (forwarder->isRevoked())
        return Error::make(QStringLiteral("forwarder_revoked"),
            QStringLiteral("forwarder %1 (%2) was revoked; it cannot be bound")
                .arg(forwarderId)
                .arg(forwarder->name));
    return forwarder;
}

} // namespace

BindingService::BindingService(Stores stores, const AccessPolicy &policy, EventBus &events,
    const Clock &clock, std::chrono::seconds requestLifetime)
    : m_stores(stores)
    , m_policy(policy)
    , m_events(events)
    , m_clock(clock)
    , m_requestLifetime(requestLifetime)
{ }

void BindingService::publishBinding(const QString &event, const BindingRecord &binding)
{
    m_events.publish(
        HubEvent { event, bindingJson(binding, m_clock.now()), binding.projectId, m_clock.now() });
}

void BindingService::announceEnded(const BindingRecord &binding)
{
    // In the change that ended it: the devices it lent go back, and whoever
    // waits for one hears so.
    if (Status released = m_stores.bindings.releaseDevices(binding.id); !released)
        qCWarning(lcHub).noquote()
            << "binding" << binding.id
            << "ended, but its lent devices stay recorded:" << released.error().message;
    publishBinding(QString(api::hubeventname::kBindingEnded), binding);
}

void BindingService::publishRequest(const QString &event, const RequestRecord &request)
{
    m_events.publish(
        HubEvent { event, requestJson(request, m_clock.now()), request.projectId, m_clock.now() });
}

Result<BindingRecord> BindingService::bind(const ApiPrincipal &caller, qint64 forwarderId,
    const QString &projectPath, const QJsonObject &termsJson)
{
    auto project = m_stores.projects.findProject(projectPath);
    if (!project)
        return project.error();
    if (Status allowed = m_policy.require(caller, project->id, AccessPolicy::ProjectAction::Bind);
        !allowed)
        return allowed.error();
    auto forwarder = lendableForwarder(m_stores.forwarders, forwarderId);
    if (!forwarder)
        return forwarder.error();
    auto terms = bindingterms::fromJson(termsJson, forwarder->device);
    if (!terms)
        return terms.error();
    Database::Transaction transaction(m_stores.db);
    if (Status free = requireUnbound(caller, forwarderId); !free)
        return free.error();
    auto binding = m_stores.bindings.create(
        forwarderId, project->id, *terms, caller.actor(), m_clock.now(), std::nullopt);
    if (!binding)
        return binding.error();
    publishBinding(QString(api::hubeventname::kBindingCreated), *binding);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "bound forwarder" << forwarderId << "to"
                            << projectPath << "until" << toDbTime(binding->expiresAt);
    return binding;
}

Result<BindingRecord> BindingService::unbind(
    const ApiPrincipal &caller, qint64 bindingId, const QString &reason)
{
    auto binding = m_stores.bindings.find(bindingId);
    if (!binding)
        return binding.error();
    if (Status allowed = requireWithReason(m_policy, caller, binding->projectId,
            AccessPolicy::ProjectAction::Unbind, reason, QStringLiteral("unbinding"));
        !allowed)
        return allowed.error();
    // A binding past its time is recorded as expired (by the hub), and the
    // unbind then finds it ended.
    if (Status swept = expireDue(); !swept)
        return swept.error();
    Database::Transaction transaction(m_stores.db);
    auto ended = m_stores.bindings.end(
        bindingId, BindingRecord::State::Unbound, caller.actor(), reason, m_clock.now());
    if (!ended)
        return ended.error();
    announceEnded(*ended);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return ended;
}

Status BindingService::requireUnbound(const ApiPrincipal &caller, qint64 forwarderId)
{
    // Whatever expired is ended (and announced) first, so that it does not
    // stand in the way and its end is not swept silently by the creation.
    if (Status swept = expireDue(); !swept)
        return swept;
    auto existing = m_stores.bindings.activeForForwarder(forwarderId, m_clock.now());
    if (!existing)
        return existing.error();
    if (!*existing)
        return {};
    const BindingRecord &binding = **existing;
    // Where it is bound is told only to those who may see that project.
    if (!m_policy.maySeeProject(caller, binding.projectId))
        return Error::make(QStringLiteral("already_bound"),
            QStringLiteral("forwarder %1 (%2) is lent to another project; a forwarder serves one "
                           "binding at a time")
                .arg(forwarderId)
                .arg(binding.forwarderName));
    return Error::make(QStringLiteral("already_bound"),
        QStringLiteral(
            "forwarder %1 (%2) is already bound to %3 until %4 (binding %5); unbind it first")
            .arg(forwarderId)
            .arg(binding.forwarderName, binding.projectPath, util::formatUtcTime(binding.expiresAt))
            .arg(binding.id));
}

Result<QList<BindingRecord>> BindingService::bindings(
    const ApiPrincipal &caller, const QString &projectPath, bool includeEnded)
{
    const QDateTime now = m_clock.now();
    if (!projectPath.isEmpty()) {
        auto project = m_stores.projects.findProject(projectPath);
        if (!project)
            return project.error();
        if (Status allowed
            = m_policy.require(caller, project->id, AccessPolicy::ProjectAction::ListBindings);
            !allowed)
            return allowed.error();
        return m_stores.bindings.list(now, project->id, includeEnded);
    }
    if (Status allowed = m_policy.require(caller, AccessPolicy::HubAction::ListBindings); !allowed)
        return allowed.error();
    auto visible = m_policy.visibleProjects(caller);
    if (!visible)
        return visible.error();
    auto all = m_stores.bindings.list(now, std::nullopt, includeEnded);
    if (!all || !*visible)
        return all;
    QList<BindingRecord> mine;
    for (const BindingRecord &binding : std::as_const(*all)) {
        if ((*visible)->contains(binding.projectId))
            mine.append(binding);
    }
    return mine;
}

Result<RequestRecord> BindingService::request(const ApiPrincipal &caller, qint64 forwarderId,
    const QString &projectPath, const QJsonObject &termsJson, const QString &reason)
{
    auto project = m_stores.projects.findProject(projectPath);
    if (!project)
        return project.error();
    if (Status allowed = requireWithReason(m_policy, caller, project->id,
            AccessPolicy::ProjectAction::RequestBinding, reason,
            QStringLiteral("a binding request"));
        !allowed)
        return allowed.error();
    auto forwarder = lendableForwarder(m_stores.forwarders, forwarderId);
    if (!forwarder)
        return forwarder.error();
    auto terms = bindingterms::fromJson(termsJson, forwarder->device);
    if (!terms)
        return terms.error();
    Database::Transaction transaction(m_stores.db);
    auto filed = m_stores.requests.file(
        forwarderId, project->id, caller.userId, reason, *terms, m_clock.now(), m_requestLifetime);
    if (!filed)
        return filed.error();
    publishRequest(QString(api::hubeventname::kRequestFiled), *filed);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "requested forwarder" << forwarderId << "for"
                            << projectPath;
    return filed;
}

Result<QList<RequestRecord>> BindingService::requests(const ApiPrincipal &caller, RequestView view)
{
    RequestStore::Filter filter;
    if (view == RequestView::Mine) {
        filter.pendingOnly = false;
        filter.requesterId = caller.userId;
        return m_stores.requests.list(filter, m_clock.now());
    }
    auto manageable = m_policy.manageableProjects(caller);
    if (!manageable)
        return manageable.error();
    if (*manageable)
        filter.projectIds = **manageable;
    if (view == RequestView::Inbox) {
        // Never one's own: somebody else has to decide it (AccessPolicy::requireDecider).
        filter.excludeRequesterId = caller.userId;
    } else {
        filter.pendingOnly = false;
    }
    return m_stores.requests.list(filter, m_clock.now());
}

Result<RequestRecord> BindingService::decidableRequest(
    const ApiPrincipal &caller, qint64 requestId, AccessPolicy::ProjectAction action)
{
    auto request = m_stores.requests.find(requestId);
    if (!request)
        return request.error();
    if (Status allowed = m_policy.requireDecider(caller, *request, action); !allowed)
        return allowed.error();
    if (request->state != RequestRecord::State::Pending)
        return Error::make(QStringLiteral("already_decided"),
            QStringLiteral("request %1 was already %2%3")
                .arg(requestId)
                .arg(requestStateName(request->state),
                    request->decidedBy.isEmpty()
                        ? QString()
                        : QStringLiteral(" by %1").arg(request->decidedBy)));
    if (request->expiresAt <= m_clock.now())
        return Error::make(QStringLiteral("already_decided"),
            QStringLiteral("request %1 expired at %2 before anyone decided it")
                .arg(requestId)
                .arg(util::formatUtcTime(request->expiresAt)));
    return request;
}

Result<std::pair<RequestRecord, BindingRecord>> BindingService::approve(
    const ApiPrincipal &caller, qint64 requestId, const QJsonObject &narrowing)
{
    auto request = decidableRequest(caller, requestId, AccessPolicy::ProjectAction::ApproveRequest);
    if (!request)
        return request.error();

    // An approval may narrow what was asked, never widen it.
    BindingTerms terms = request->terms;
    auto ttl = bindingterms::parseTtl(narrowing.value(QLatin1String("ttl")), request->terms.ttl);
    if (!ttl)
        return ttl.error();
    if (*ttl > request->terms.ttl)
        return Error::make(QStringLiteral("cannot_widen"),
            QStringLiteral(
                "the request asked for %1; an approval may shorten that, not lengthen it to %2")
                .arg(util::formatDuration(request->terms.ttl), util::formatDuration(*ttl)));
    terms.ttl = *ttl;
    const QJsonValue executor = narrowing.value(QLatin1String("virtual_executor"));
    if (!executor.isUndefined() && !executor.isNull()) {
        const QString name = executor.toString();
        if (Status valid = bindingterms::validateVirtualExecutor(name); !valid || name.isEmpty())
            return valid ? Error::make(
                       QStringLiteral("invalid_name"), QStringLiteral("an empty virtual executor"))
                         : valid.error();
        if (!request->terms.virtualExecutor.isEmpty() && name != request->terms.virtualExecutor)
            return Error::make(QStringLiteral("cannot_widen"),
                QStringLiteral(
                    "the request is for virtual executor %1; an approval cannot move it to %2")
                    .arg(request->terms.virtualExecutor, name));
        terms.virtualExecutor = name;
    }
    for (const char *key : { "target", "address", "project" }) {
        if (narrowing.contains(QLatin1String(key)))
            return Error::make(QStringLiteral("cannot_widen"),
                QStringLiteral(
                    "an approval can narrow the TTL and the virtual executor only, not \"%1\"")
                    .arg(QLatin1String(key)));
    }

    if (Status free = requireUnbound(caller, request->forwarderId); !free)
        return free.error();
    const QDateTime now = m_clock.now();
    const QString actor = caller.actor();
    Database::Transaction transaction(m_stores.db);
    // The guarded state change comes first: of racing deciders, one passes.
    auto decided = m_stores.requests.decide(
        requestId, RequestRecord::State::Approved, actor, QString(), std::nullopt, now);
    if (!decided)
        return decided.error();
    if (decided->expiresAt <= now)
        return Error::make(QStringLiteral("already_decided"),
            QStringLiteral("request %1 expired at %2")
                .arg(requestId)
                .arg(util::formatUtcTime(decided->expiresAt)));
    if (auto forwarder = lendableForwarder(m_stores.forwarders, request->forwarderId); !forwarder)
        return forwarder.error();
    // The binding's time counts from now, the approval, not from the request.
    auto binding = m_stores.bindings.create(
        request->forwarderId, request->projectId, terms, actor, now, requestId);
    if (!binding)
        return binding.error();
    auto attached = m_stores.db.query(
        QStringLiteral("UPDATE binding_requests SET binding_id = ? WHERE id = ?"),
        { binding->id, requestId });
    if (!attached)
        return attached.error();
    auto final = m_stores.requests.find(requestId);
    if (!final)
        return final.error();
    publishRequest(QString(api::hubeventname::kRequestDecided), *final);
    publishBinding(QString(api::hubeventname::kBindingCreated), *binding);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    qCInfo(lcHub).noquote() << caller.userName << "approved request" << requestId << "of"
                            << request->requesterName;
    return std::make_pair(*final, *binding);
}

Result<RequestRecord> BindingService::deny(
    const ApiPrincipal &caller, qint64 requestId, const QString &reason)
{
    auto request = decidableRequest(caller, requestId, AccessPolicy::ProjectAction::DenyRequest);
    if (!request)
        return request.error();
    if (Status given = requireReason(reason, QStringLiteral("denying a request")); !given)
        return given.error();
    const QDateTime now = m_clock.now();
    if (request->state == RequestRecord::State::Pending && request->expiresAt <= now)
        return Error::make(QStringLiteral("already_decided"),
            QStringLiteral("request %1 expired at %2")
                .arg(requestId)
                .arg(util::formatUtcTime(request->expiresAt)));
    Database::Transaction transaction(m_stores.db);
    auto denied = m_stores.requests.decide(
        requestId, RequestRecord::State::Denied, caller.actor(), reason, std::nullopt, now);
    if (!denied)
        return denied.error();
    publishRequest(QString(api::hubeventname::kRequestDecided), *denied);
    if (Status committed = transaction.commit(); !committed)
        return committed.error();
    return denied;
}

Status BindingService::expireDue()
{
    const QDateTime now = m_clock.now();
    Database::Transaction transaction(m_stores.db);
    auto bindings = m_stores.bindings.expireDue(now);
    if (!bindings)
        return bindings.error();
    for (const BindingRecord &binding : std::as_const(*bindings)) {
        qCInfo(lcHub).noquote() << "binding" << binding.id << "of forwarder" << binding.forwarderId
                                << "to" << binding.projectPath << "expired";
        announceEnded(binding);
    }
    auto requests = m_stores.requests.expireDue(now);
    if (!requests)
        return requests.error();
    for (const RequestRecord &request : std::as_const(*requests))
        publishRequest(QString(api::hubeventname::kRequestDecided), request);
    return transaction.commit();
}

Result<BindingService::Ended> BindingService::endForRevokedForwarder(
    qint64 forwarderId, const QString &actor)
{
    const QDateTime now = m_clock.now();
    Ended ended;
    auto expired = m_stores.bindings.expireDue(now);
    if (!expired)
        return expired.error();
    ended.bindings = *expired;
    auto bindings = m_stores.bindings.endAllOfForwarder(
        forwarderId, actor, QStringLiteral("the forwarder was revoked"), now);
    if (!bindings)
        return bindings.error();
    ended.bindings += *bindings;
    auto requests = m_stores.requests.cancelAllOfForwarder(
        forwarderId, actor, QStringLiteral("the forwarder was revoked"), now);
    if (!requests)
        return requests.error();
    ended.requests = *requests;
    return ended;
}

void BindingService::publish(const Ended &ended)
{
    for (const BindingRecord &binding : ended.bindings)
        announceEnded(binding);
    for (const RequestRecord &request : ended.requests)
        publishRequest(QString(api::hubeventname::kRequestDecided), request);
}

Result<QList<BindingService::Lent>> BindingService::forDispatch(qint64 projectId)
{
    const QDateTime now = m_clock.now();
    auto bindings = m_stores.bindings.list(now, projectId, false);
    if (!bindings)
        return bindings.error();
    QList<Lent> lent;
    for (const BindingRecord &binding : std::as_const(*bindings)) {
        if (!binding.isActiveAt(now))
            continue;
        // A forwarder that cannot be read lends nothing this time.
        if (auto forwarder = m_stores.forwarders.find(binding.forwarderId))
            lent.append(Lent { binding, *forwarder });
    }
    return lent;
}

} // namespace cloop::hub
