#pragma once

#include "common/util/clock.h"

#include "common/result.h"
#include "hub/domain/accesspolicy.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/bindingstore.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/requeststore.h"

#include <QJsonObject>

#include <chrono>
#include <optional>
#include <utility>

namespace cloop::hub {

class Database;
class EventBus;
class ProjectStore;

// Lending a forwarder's device to a project: binding and unbinding by those
// who hold executor.manage, requests by maintainers and their approval by
// another administrator, and expiry. Every change is checked, audited in the
// same transaction, and published on the event bus after it committed.
class BindingService
{
public:
    struct Stores
    {
        Database &db;
        ForwarderStore &forwarders;
        ProjectStore &projects;
        BindingStore &bindings;
        RequestStore &requests;
    };

    static constexpr std::chrono::seconds kDefaultRequestLifetime { 7 * 24 * 3600 };

    BindingService(Stores stores, const AccessPolicy &policy, EventBus &events, const Clock &clock,
        std::chrono::seconds requestLifetime = kDefaultRequestLifetime);

    Result<BindingRecord> bind(const ApiPrincipal &caller, qint64 forwarderId,
        const QString &projectPath, const QJsonObject &terms);
    Result<BindingRecord> unbind(
        const ApiPrincipal &caller, qint64 bindingId, const QString &reason);
    Result<QList<BindingRecord>> bindings(
        const ApiPrincipal &caller, const QString &projectPath, bool includeEnded);

    Result<RequestRecord> request(const ApiPrincipal &caller, qint64 forwarderId,
        const QString &projectPath, const QJsonObject &terms, const QString &reason);
    enum class RequestView
    {
        Inbox,
        Decidable,
        Mine
    };
    Result<QList<RequestRecord>> requests(const ApiPrincipal &caller, RequestView view);
    Result<std::pair<RequestRecord, BindingRecord>> approve(
        const ApiPrincipal &caller, qint64 requestId, const QJsonObject &narrowing);
    Result<RequestRecord> deny(const ApiPrincipal &caller, qint64 requestId, const QString &reason);

    // Ends what is past its time; called by the hub's sweep timer.
    Status expireDue();
    // Inside the revocation's transaction: its bindings end and its pending
    // requests are cancelled; publish() the outcome once that committed.
    struct Ended
    {
        QList<BindingRecord> bindings;
        QList<RequestRecord> requests;
    };
    Result<Ended> endForRevokedForwarder(qint64 forwarderId, const QString &actor);
    void publish(const Ended &ended);

    // What the dispatcher plans a run of the project with, where no person
    // asks: the project's bindings active now, each with its forwarder.
    struct Lent
    {
        BindingRecord binding;
        ForwarderRecord forwarder;
    };
    Result<QList<Lent>> forDispatch(qint64 projectId);

private:
    Status requireUnbound(const ApiPrincipal &caller, qint64 forwarderId);
    Result<RequestRecord> decidableRequest(
        const ApiPrincipal &caller, qint64 requestId, AccessPolicy::ProjectAction action);
    void announceEnded(const BindingRecord &binding);
    void publishBinding(const QString &event, const BindingRecord &binding);
    void publishRequest(const QString &event, const RequestRecord &request);

    Stores m_stores;
    const AccessPolicy &m_policy;
    EventBus &m_events;
    const Clock &m_clock;
    std::chrono::seconds m_requestLifetime;
};

} // namespace cloop::hub
