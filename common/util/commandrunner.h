#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <chrono>

namespace cloop::util {

// What a finished command left behind. A command that could not be found,
// started or finished in time is an Error instead.
struct CommandOutput
{
    int exitCode = 0;
    QByteArray standardOutput;
    QByteArray standardError;
};

// How the daemons run the host's tools (podman, nft, ip, ...) when they only
// want their answer. An interface so that tests can give canned answers without
// the tools installed; ProcessCommandRunner is the real one.
class CommandRunner
{
public:
    virtual ~CommandRunner() = default;

    // The full path of an executable: a bare name is looked up in PATH and
    // then in the system's sbin/bin folders (a service's PATH often lacks
    // sbin); an absolute path is returned when it is an executable file.
    // Empty when there is none.
    virtual QString findExecutable(const QString &nameOrPath) const = 0;

    // Runs `program` with `arguments` and no input, and waits at most
    // `timeout` for it to finish (killing it after that).
    virtual Result<CommandOutput> run(
        const QString &program, const QStringList &arguments, std::chrono::milliseconds timeout)
        = 0;
};

} // namespace cloop::util
