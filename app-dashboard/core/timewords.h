#pragma once

#include <QDateTime>
#include <QString>

namespace cloop::dashboard {

// A moment as every screen writes it: local time with its zone, and only as
// much date as it needs — "14:05 UTC" today, "Sat 5 Dec 14:05 UTC" this
// year, "5 Dec 2025 14:05 UTC" before. Empty for an invalid time.
QString describeMoment(const QDateTime &at, const QDateTime &now);
// The same with the full date always, for tables that sort by it.
QString describeInstant(const QDateTime &at);
// A length of time as every screen writes it: "45 s", "59 min", "1 h",
// "7 h 59 min", "24 h", "3 days 4 h", "7 days" — hours up to two days,
// days after.
QString describeDuration(qint64 seconds);
// "7 h 59 min left" until `until`, "expired" once it passed.
QString describeTimeLeft(const QDateTime &until, const QDateTime &now);

} // namespace cloop::dashboard
