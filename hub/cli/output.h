#pragma once

#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace cloop::cli {

// Exit codes of the CLI's admin commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1; // the hub refused or could not be reached
inline constexpr int kExitUsage = 2;

void printLine(const QString &line);
void printJson(const QJsonValue &value);
// "cloop <command>: <message>" on stderr; returns the exit code to use.
int fail(const QString &command, const QString &message, int exitCode = kExitFailed);

// A plain text table with a header row, columns padded to their widest cell.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

} // namespace cloop::cli
