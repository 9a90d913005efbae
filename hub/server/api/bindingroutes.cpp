#include "hub/server/api/bindingroutes.h"

#include "common/util/clock.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/recordjson.h"

#include <QJsonArray>

namespace cloop::hub {

namespace {
// How records show when the answer is made: one past its time as expired.
auto bindingsAt(const QDateTime &now)
{
    return [now](const BindingRecord &binding) { return bindingJson(binding, now); };
}

auto requestsAt(const QDateTime &now)
{
    return [now](const RequestRecord &request) { return requestJson(request, now); };
}
} // namespace

void BindingRoutes::registerIn(ApiRouter &router)
{
    router.add("POST", QStringLiteral("/api/forwarders/{id}/bind"), [this](const ApiCall &call) {
        auto project = call.text(QLatin1StringView("project"), true);
        if (!project)
            return ApiResponse::fromError(project.error());
        auto binding = m_service.bind(call.caller, call.id(), *project, call.body);
        return ApiResponse::of(binding, bindingsAt(m_clock.now()), 201);
    });

    router.add("GET", QStringLiteral("/api/bindings"), [this](const ApiCall &call) {
        auto bindings = m_service.bindings(call.caller, call.queryValue(QStringLiteral("project")),
            call.queryFlag(QStringLiteral("all")));
        return ApiResponse::listOf(
            bindings, QLatin1StringView("bindings"), bindingsAt(m_clock.now()));
    });

    router.add("POST", QStringLiteral("/api/bindings/{id}/unbind"), [this](const ApiCall &call) {
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto ended = m_service.unbind(call.caller, call.id(), *reason);
        return ApiResponse::of(ended, bindingsAt(m_clock.now()));
    });

    router.add("POST", QStringLiteral("/api/forwarders/{id}/request"), [this](const ApiCall &call) {
        auto project = call.text(QLatin1StringView("project"), true);
        if (!project)
            return ApiResponse::fromError(project.error());
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto filed = m_service.request(call.caller, call.id(), *project, call.body, *reason);
        return ApiResponse::of(filed, requestsAt(m_clock.now()), 201);
    });

    router.add("GET", QStringLiteral("/api/requests"), [this](const ApiCall &call) {
        auto view = BindingService::RequestView::Inbox;
        if (call.queryFlag(QStringLiteral("mine")))
            view = BindingService::RequestView::Mine;
        else if (call.queryFlag(QStringLiteral("all")))
            view = BindingService::RequestView::Decidable;
        auto requests = m_service.requests(call.caller, view);
        return ApiResponse::listOf(
            requests, QLatin1StringView("requests"), requestsAt(m_clock.now()));
    });

    router.add("POST", QStringLiteral("/api/requests/{id}/approve"), [this](const ApiCall &call) {
        auto approved = m_service.approve(call.caller, call.id(), call.body);
        if (!approved)
            return ApiResponse::fromError(approved.error());
        const QDateTime now = m_clock.now();
        return ApiResponse::ok(
            QJsonObject { { QStringLiteral("request"), requestJson(approved->first, now) },
                { QStringLiteral("binding"), bindingJson(approved->second, now) } });
    });

    router.add("POST", QStringLiteral("/api/requests/{id}/deny"), [this](const ApiCall &call) {
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto denied = m_service.deny(call.caller, call.id(), *reason);
        return ApiResponse::of(denied, requestsAt(m_clock.now()));
    });
}

} // namespace cloop::hub
