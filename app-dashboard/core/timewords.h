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

} // namespace cloop::dashboard
