#pragma once

#include "common/util/subcommands.h"

#include <QString>
#include <QStringList>

#include <span>

namespace cloop::hub {

// The hub's own command line: `serve`, `tls-init`, `pin`. `program` is how
// the person called it ("cloop-hub", or "cloop hub" through the umbrella);
// arguments[0] is the program, arguments[1] the subcommand.
int runHubCommand(const QString &program, const QStringList &arguments);
// Its subcommands, for the umbrella's overview.
std::span<const util::Subcommand> hubCommands();

} // namespace cloop::hub
