#include "hub/server/api/bindingroutes.h"

#include "hub/domain/bindingservice.h"
#include "hub/domain/clock.h"
#include "hub/domain/recordjson.h"

#include <QJsonArray>

namespace cloop::hub {

void BindingRoutes::registerIn(ApiRouter &router)
{
    router.add("POST", QStringLiteral("/api/forwarders/{id}/bind"), [this](const ApiCall &call) {
        auto project = call.text(QLatin1StringView("project"), true);
        if (!project)
            return ApiResponse::fromError(project.error());
        auto binding = m_service.bind(call.caller, call.id(), *project, call.body);
        if (!binding)
            return ApiResponse::fromError(binding.error());
        return ApiResponse::ok(bindingJson(*binding, m_clock.now()), 201);
    });

    router.add("GET", QStringLiteral("/api/bindings"), [this](const ApiCall &call) {
        auto bindings = m_service.bindings(call.caller, call.queryValue(QStringLiteral("project")),
            call.queryFlag(QStringLiteral("all")));
        if (!bindings)
            return ApiResponse::fromError(bindings.error());
        QJsonArray out;
        const QDateTime now = m_clock.now();
        for (const BindingRecord &binding : std::as_const(*bindings))
            out.append(bindingJson(binding, now));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("bindings"), out } });
    });

    router.add("POST", QStringLiteral("/api/bindings/{id}/unbind"), [this](const ApiCall &call) {
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto ended = m_service.unbind(call.caller, call.id(), *reason);
        if (!ended)
            return ApiResponse::fromError(ended.error());
        return ApiResponse::ok(bindingJson(*ended, m_clock.now()));
    });

    router.add("POST", QStringLiteral("/api/forwarders/{id}/request"), [this](const ApiCall &call) {
        auto project = call.text(QLatin1StringView("project"), true);
        if (!project)
            return ApiResponse::fromError(project.error());
        auto reason = call.text(QLatin1StringView("reason"));
        if (!reason)
            return ApiResponse::fromError(reason.error());
        auto filed = m_service.request(call.caller, call.id(), *project, call.body, *reason);
        if (!filed)
            return ApiResponse::fromError(filed.error());
        return ApiResponse::ok(requestJson(*filed, m_clock.now()), 201);
    });

    router.add("GET", QStringLiteral("/api/requests"), [this](const ApiCall &call) {
        auto view = BindingService::RequestView::Inbox;
        if (call.queryFlag(QStringLiteral("mine")))
            view = BindingService::RequestView::Mine;
        else if (call.queryFlag(QStringLiteral("all")))
            view = BindingService::RequestView::Decidable;
        auto requests = m_service.requests(call.caller, view);
        if (!requests)
            return ApiResponse::fromError(requests.error());
        QJsonArray out;
        const QDateTime now = m_clock.now();
        for (const RequestRecord &request : std::as_const(*requests))
            out.append(requestJson(request, now));
        return ApiResponse::ok(QJsonObject { { QStringLiteral("requests"), out } });
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
        if (!denied)
            return ApiResponse::fromError(denied.error());
        return ApiResponse::ok(requestJson(*denied, m_clock.now()));
    });
}

} // namespace cloop::hub
