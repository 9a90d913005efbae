#pragma once

#include "common/device/sysfsroot.h"

#include <QStringList>

namespace cloop::agent {

// `cloop executor agent [options]` and `cloop-agent [options]`: parses the
// arguments, detects this machine's capabilities and runs the agent until it
// stops, on the kernel the caller's main chose. Returns the exit code.
int runAgentCommand(const QStringList &arguments, const device::SysfsRoot &kernel);

} // namespace cloop::agent
