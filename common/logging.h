#pragma once

#include <QLoggingCategory>

// One category per module; enable with QT_LOGGING_RULES="cloop.tunnel.debug=true".
Q_DECLARE_LOGGING_CATEGORY(lcTunnel)
Q_DECLARE_LOGGING_CATEGORY(lcNet)
Q_DECLARE_LOGGING_CATEGORY(lcIdentity)
Q_DECLARE_LOGGING_CATEGORY(lcUpgrade)
Q_DECLARE_LOGGING_CATEGORY(lcDaemon)
Q_DECLARE_LOGGING_CATEGORY(lcHub)
Q_DECLARE_LOGGING_CATEGORY(lcHubDb)
Q_DECLARE_LOGGING_CATEGORY(lcHubApi)
Q_DECLARE_LOGGING_CATEGORY(lcHubGateway)
Q_DECLARE_LOGGING_CATEGORY(lcHubCluster)
Q_DECLARE_LOGGING_CATEGORY(lcHubEdge)
Q_DECLARE_LOGGING_CATEGORY(lcForward)
Q_DECLARE_LOGGING_CATEGORY(lcDevice)
Q_DECLARE_LOGGING_CATEGORY(lcCli)

namespace cloop::logging {
// Daemons print "time level category: message" so journald and a terminal
// both read well; called once from each main().
void installMessagePattern();
} // namespace cloop::logging
