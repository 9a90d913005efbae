#pragma once

#include "hub/storage/bindingstore.h"
#include "hub/storage/projectstore.h"
#include "hub/storage/requeststore.h"
#include "hub/storage/runstore.h"

#include <QJsonObject>

namespace cloop::hub {

// The JSON the admin API and the event stream show for each record, in one
// place so both say the same thing (see docs/api.md).
QJsonObject bindingJson(const BindingRecord &binding, const QDateTime &now);
QJsonObject requestJson(const RequestRecord &request, const QDateTime &now);
QJsonObject projectJson(const ProjectRecord &project);
QJsonObject userJson(const UserRecord &user);
QJsonObject runJson(const RunRecord &run);

// A time as the API writes it, or null when there is none.
QJsonValue timeOrNull(const QDateTime &time);
// What a forwarder or an executor is doing, as the API names it.
QString daemonStateName(bool revoked, bool enrolled, bool connected);

} // namespace cloop::hub
