#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop hub tls-init|serve …`.
int runHubCommand(const QStringList &arguments);

} // namespace cloop::cli
