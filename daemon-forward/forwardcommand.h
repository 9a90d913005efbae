#pragma once

#include "common/device/sysfsroot.h"

#include <QStringList>

namespace cloop::forward {

// `cloop forward [options]` and `cloop-forward [options]`: parses the
// arguments and runs the daemon until it stops, on the kernel the caller's
// main chose (this machine's, or a test program's stand-in). Returns the
// exit code.
int runForwarderCommand(const QStringList &arguments, const device::SysfsRoot &kernel);

} // namespace cloop::forward
