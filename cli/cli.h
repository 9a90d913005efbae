#pragma once

#include "common/device/sysfsroot.h"

#include <QStringList>

namespace cloop::cli {

// The `cloop` umbrella command line. arguments[0] is the program name;
// `kernel` is what the forwarder and agent daemons it runs work on.
int run(const QStringList &arguments, const device::SysfsRoot &kernel);

} // namespace cloop::cli
