#pragma once

#include <QStringList>

namespace cloop::cli {

// The `cloop` umbrella command line. arguments[0] is the program name.
int run(const QStringList &arguments);

} // namespace cloop::cli
