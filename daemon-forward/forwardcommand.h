#pragma once

#include <QStringList>

namespace cloop::forward {

// `cloop forward [options]` and `cloop-forward [options]`: parses the
// arguments and runs the daemon until it stops. Returns the exit code.
int runForwarderCommand(const QStringList &arguments);

} // namespace cloop::forward
