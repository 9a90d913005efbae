#pragma once

#include <QStringList>

namespace cloop::cli {

class Command;

// Prints a run's output as it arrives until the run finished, then its end
// state and error; returns its exit code (kExitFailed when it has none).
int waitForRun(Command &command, qint64 runId);

// `cloop run [options] -- CMD ARGS…`, `cloop run list`, `cloop run cancel ID`.
int runRunCommand(const QStringList &arguments);

} // namespace cloop::cli
