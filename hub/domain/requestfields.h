#pragma once

#include "common/result.h"

#include <QJsonObject>
#include <QString>

#include <chrono>

namespace cloop::hub::requestfields {

// A string field of a request's JSON body: empty when absent or null, an
// error ("invalid_request") when it is something else, or when `required`
// and missing or blank. Services that check the caller before they read
// the body read it with this; routes read it through ApiCall::text.
Result<QString> text(const QJsonObject &body, QLatin1StringView key, bool required = false);

// A duration field ("8h", "30m"): `fallback` when absent, an error when it
// is not a duration.
Result<std::chrono::seconds> duration(
    const QJsonObject &body, QLatin1StringView key, std::chrono::seconds fallback);

} // namespace cloop::hub::requestfields
