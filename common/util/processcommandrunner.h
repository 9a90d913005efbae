#pragma once

#include "common/util/commandrunner.h"

namespace cloop::util {

// CommandRunner on QProcess. run() blocks the calling thread (at most the
// timeout plus a second to reap a killed child), so it belongs in probes
// done once at start-up or on a worker thread, never in a busy event loop.
class ProcessCommandRunner final : public CommandRunner
{
public:
    // Output beyond this is an error: the tools asked here answer in kilobytes.
    static constexpr qsizetype kMaxOutputBytes = 4 * 1024 * 1024;

    QString findExecutable(const QString &nameOrPath) const override;
    Result<CommandOutput> run(const QString &program, const QStringList &arguments,
        std::chrono::milliseconds timeout) override;
};

} // namespace cloop::util
