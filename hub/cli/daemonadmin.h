#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace cloop::cli {

// What differs between administering forwarders and executors.
struct DaemonNoun
{
    const char *noun; // "forwarder"
    const char *family; // "forward": the CLI family, `cloop forward …`
    const char *apiPath; // "/api/forwarders"
};

inline constexpr DaemonNoun kForwarderNoun{"forwarder", "forward", "/api/forwarders"};
inline constexpr DaemonNoun kExecutorNoun{"executor", "executor", "/api/executors"};

// `cloop forward|executor revoke ID [--reason TEXT]`.
int revokeDaemon(const QStringList &arguments, const DaemonNoun &noun);

// The enrollment's one-time command, framed for the person who runs it.
void printEnrollmentCommand(const QJsonObject &answer, const QString &where);

} // namespace cloop::cli
