#pragma once

#include <QString>
#include <QStringList>

namespace cloop::hub {

// The hub's own command line: `serve`, `tls-init`, `pin`. `program` is how
// the person called it ("cloop-hub", or "cloop hub" through the umbrella);
// arguments[0] is the program, arguments[1] the subcommand.
int runHubCommand(const QString &program, const QStringList &arguments);

} // namespace cloop::hub
