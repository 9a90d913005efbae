#pragma once

#include "common/api/enrolleddaemon.h"

#include <QDateTime>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace cloop::cli {

// Exit codes of the CLI's admin commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1; // the hub refused or could not be reached
inline constexpr int kExitUsage = 2;

void printLine(const QString &line);
// A line about what is going on, on stderr: stdout stays the output's own.
void printNote(const QString &line);
void printJson(const QJsonValue &value);
// "cloop <command>: <message>" on stderr; returns the exit code to use.
int fail(const QString &command, const QString &message, int exitCode = kExitFailed);

// "cloop <command>: warning: <message>" on stderr.
void warn(const QString &command, const QString &message);

// Times as a person reads them, always in UTC: "2026-11-29 17:34 UTC";
// an empty or unreadable ISO 8601 text becomes "-".
QString formatTime(const QDateTime &time);
// How far away a time is: "in 8h", "5m ago", "now".
QString formatDistance(const QDateTime &time);
// "2026-11-30 01:34 UTC (in 8h)", "-" for an invalid time.
QString formatTimeAndDistance(const QDateTime &time);
// A daemon's last sign of life: "now" while connected, else how long ago.
QString formatLastSeen(const api::EnrolledDaemon &daemon);

// A plain text table with a header row, columns padded to their widest cell.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);
// One record as "label:  value" lines, the values aligned.
QString formatFields(const QList<std::pair<QString, QString>> &fields);

} // namespace cloop::cli
