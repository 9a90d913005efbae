#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop login`, `cloop logout` and `cloop whoami`: who the command line
// is to a hub. arguments[0] is the program name.
int runLoginCommand(const QStringList &arguments);
int runLogoutCommand(const QStringList &arguments);
int runWhoamiCommand(const QStringList &arguments);

} // namespace cloop::cli
