#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"
#include "hub/storage/bindingstore.h"

#include <QJsonObject>

namespace cloop::hub::bindingterms {

inline constexpr std::chrono::seconds kDefaultTtl { 24 * 3600 };
inline constexpr std::chrono::seconds kMaxTtl { 90 * 24 * 3600 };
inline constexpr QLatin1StringView kDefaultTarget { "fwd0" };

// Reads {"ttl", "virtual_executor", "target", "address"} for a forwarder
// carrying `device`: durations, names and CIDR addresses are checked, and a
// target or address on a USB forwarder is refused.
Result<BindingTerms> fromJson(const QJsonObject &body, const protocol::DeviceSpec &device);

Result<std::chrono::seconds> parseTtl(const QJsonValue &value, std::chrono::seconds fallback);
Status validateVirtualExecutor(const QString &name);

} // namespace cloop::hub::bindingterms
