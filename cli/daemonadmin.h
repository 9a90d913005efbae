#pragma once

#include "common/api/enrolleddaemon.h"

#include <QDateTime>
#include <QString>
#include <QStringList>

namespace cloop::cli {

// What differs between administering forwarders and executors.
struct DaemonNoun
{
    const char *noun; // "forwarder"
    const char *family; // "forward": the CLI family, `cloop forward …`
    const char *apiPath; // "/api/forwarders"
    const char *daemon; // "forward": the daemon, `cloop forward`
    const char *withArticle; // "a forwarder"
};

inline constexpr DaemonNoun kForwarderNoun { "forwarder", "forward", "/api/forwarders", "forward",
    "a forwarder" };
inline constexpr DaemonNoun kExecutorNoun { "executor", "executor", "/api/executors",
    "executor agent", "an executor" };

// `cloop forward|executor revoke ID [--reason TEXT]`.
int revokeDaemon(const QStringList &arguments, const DaemonNoun &noun);

// `cloop forward|executor reenroll ID [--token-ttl 24h]`: a new one-time
// bundle for a daemon that never redeemed its first; the earlier bundles
// stop working. `where` says which machine runs the printed command.
// Daemon: api::Forwarder or api::Executor.
template <typename Daemon>
int reenrollDaemon(const QStringList &arguments, const DaemonNoun &noun, const QString &where);

// `cloop forward|executor upgrade ID [--target T]`: the device is asked,
// and says whether it takes the target (its own settings decide).
int upgradeDaemon(const QStringList &arguments, const DaemonNoun &noun);

// A list's VERSION cell: the version, and the skew at a glance ("0.3.0,
// 0.4.0 offered"), or where its upgrade stands.
QString softwareCell(const api::EnrolledDaemon &daemon);
// A list's STATE cell: "upgrading" while the device drains or installs.
QString stateCell(const api::EnrolledDaemon &daemon);

// The enrollment's one-time start, framed for the person who runs it: the
// bundle goes into a file only they can read and the daemon starts with
// --token-file, never with the bundle on its command line, which every
// local user can read (/proc/PID/cmdline).
void printEnrollmentCommand(const QString &bundle, const QDateTime &tokenExpiresAt,
    const QString &where, const DaemonNoun &noun);

} // namespace cloop::cli
