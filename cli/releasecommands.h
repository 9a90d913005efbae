#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop release keygen|sign|verify …` (arguments[0] is "release"): the
// release key, and the signature beside each package that devices verify
// before they install it.
int runReleaseCommand(const QStringList &arguments);

} // namespace cloop::cli
