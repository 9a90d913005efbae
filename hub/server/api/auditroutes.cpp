#include "hub/server/api/auditroutes.h"

#include "hub/domain/auditservice.h"
#include "hub/storage/database.h"

namespace cloop::hub {

void AuditRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", QStringLiteral("/api/audit"), [this](const ApiCall &call) {
        return ApiResponse::listOf(
            m_service.entries(call.caller, call.queryValue(QStringLiteral("since")),
                call.queryValue(QStringLiteral("action"))),
            QLatin1StringView("entries"), [](const AuditEntry &entry) {
                QJsonObject json { { QStringLiteral("id"), entry.id },
                    { QStringLiteral("at"), toDbTime(entry.at) },
                    { QStringLiteral("actor"), entry.actor },
                    { QStringLiteral("action"), entry.action },
                    { QStringLiteral("subject"), entry.subject },
                    { QStringLiteral("details"), entry.details } };
                if (!entry.subjectName.isEmpty())
                    json.insert(QStringLiteral("subject_name"), entry.subjectName);
                if (!entry.actorName.isEmpty())
                    json.insert(QStringLiteral("actor_name"), entry.actorName);
                return json;
            });
    });
}

} // namespace cloop::hub
