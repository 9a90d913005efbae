#include "hub/server/api/auditroutes.h"

#include "hub/domain/auditservice.h"
#include "hub/storage/database.h"

#include <QJsonArray>

namespace cloop::hub {

void AuditRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/audit"), [this](const ApiCall &call) {
        auto entries = m_service.entries(call.caller, call.queryValue(QStringLiteral("since")),
            call.queryValue(QStringLiteral("action")));
        if (!entries)
            return ApiResponse::fromError(entries.error());
        QJsonArray out;
        for (const AuditEntry &entry : std::as_const(*entries))
            out.append(QJsonObject { { QStringLiteral("id"), entry.id },
                { QStringLiteral("at"), toDbTime(entry.at) },
                { QStringLiteral("actor"), entry.actor },
                { QStringLiteral("action"), entry.action },
                { QStringLiteral("subject"), entry.subject },
                { QStringLiteral("details"), entry.details } });
        return ApiResponse::ok(QJsonObject { { QStringLiteral("entries"), out } });
    });
}

} // namespace cloop::hub
