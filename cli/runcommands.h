#pragma once

#include "common/util/subcommands.h"

#include <QStringList>

#include <span>

namespace cloop::cli {

class Command;

// Prints a run's output as it arrives until the run finished, then its end
// state and error; returns its exit code (kExitFailed when it has none).
int waitForRun(Command &command, qint64 runId);

// `cloop run list|show|logs|cancel …`.
std::span<const util::Subcommand> runCommands();
// `cloop run [options] -- CMD ARGS…` or one of runCommands(); arguments[0]
// is "cloop run".
int runRunCommand(const QStringList &arguments);

} // namespace cloop::cli
