#pragma once

#include "common/result.h"

#include <QJsonObject>
#include <QString>

namespace cloop::hub::requestfields {

// A string field of a request's JSON body: empty when absent or null, an
// error ("invalid_request") when it is something else, or when `required`
// and missing or blank. Services that check the caller before they read
// the body read it with this; routes read it through ApiCall::text.
Result<QString> text(const QJsonObject &body, QLatin1StringView key, bool required = false);

} // namespace cloop::hub::requestfields
