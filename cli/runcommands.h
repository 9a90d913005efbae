#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop run [options] -- CMD ARGS…`, `cloop run list`, `cloop run cancel ID`.
int runRunCommand(const QStringList &arguments);

} // namespace cloop::cli
