#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop project add|list|grant …`: projects and people's roles in them.
// arguments[0] is "project".
int runProjectCommand(const QStringList &arguments);

} // namespace cloop::cli
