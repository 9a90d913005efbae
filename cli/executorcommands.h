#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop executor enroll|list|revoke|agent …`.
int runExecutorCommand(const QStringList &arguments);

} // namespace cloop::cli
