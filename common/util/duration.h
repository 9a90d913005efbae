#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QString>

#include <chrono>

namespace cloop::util {

// "90s", "30m", "8h", "7d", or a combination such as "1h30m".
Result<std::chrono::seconds> parseDuration(const QString &text);
QString formatDuration(std::chrono::seconds duration);
// For messages about timeouts: "300 ms", "10 s", "1.5 s".
QString formatMilliseconds(qint64 milliseconds);
// A moment as messages and the CLI write it: "2026-12-06 14:05 UTC"; "-"
// for none.
QString formatUtcTime(const QDateTime &at);

} // namespace cloop::util
