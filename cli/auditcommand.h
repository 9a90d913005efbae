#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop audit [--since TIME|DURATION] [--action NAME] [--json]`: the hub's
// audit log (hub administrators). arguments[0] is the program name.
int runAuditCommand(const QStringList &arguments);

} // namespace cloop::cli
