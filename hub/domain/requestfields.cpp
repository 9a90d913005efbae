#include "hub/domain/requestfields.h"

#include "common/util/duration.h"

#include <QJsonValue>

namespace cloop::hub::requestfields {

Result<QString> text(const QJsonObject &body, QLatin1StringView key, bool required)
{
    const QJsonValue value = body.value(key);
    if (value.isUndefined() || value.isNull()) {
        if (required)
            return Error::make(
                QStringLiteral("invalid_request"), QStringLiteral("\"%1\" is required").arg(key));
        return QString();
    }
    if (!value.isString())
        return Error::make(
            QStringLiteral("invalid_request"), QStringLiteral("\"%1\" must be a string").arg(key));
    if (required && value.toString().trimmed().isEmpty())
        return Error::make(
            QStringLiteral("invalid_request"), QStringLiteral("\"%1\" must not be empty").arg(key));
    return value.toString();
}

Result<std::chrono::seconds> duration(
    const QJsonObject &body, QLatin1StringView key, std::chrono::seconds fallback)
{
    auto written = text(body, key);
    if (!written)
        return written.error();
    if (written->isEmpty())
        return fallback;
    return util::parseDuration(*written);
}

} // namespace cloop::hub::requestfields
