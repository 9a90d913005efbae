#pragma once

#include <QStringList>

namespace cloop::agent {

// `cloop executor agent [options]` and `cloop-agent [options]`: parses the
// arguments, detects this machine's capabilities and runs the agent until it
// stops. Returns the exit code.
int runAgentCommand(const QStringList &arguments);

} // namespace cloop::agent
