#include "common/logging.h"

Q_LOGGING_CATEGORY(lcTunnel, "cloop.tunnel", QtInfoMsg)
Q_LOGGING_CATEGORY(lcNet, "cloop.net", QtInfoMsg)
Q_LOGGING_CATEGORY(lcIdentity, "cloop.identity", QtInfoMsg)
Q_LOGGING_CATEGORY(lcUpgrade, "cloop.upgrade", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDaemon, "cloop.daemon", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHub, "cloop.hub", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHubDb, "cloop.hub.db", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHubApi, "cloop.hub.api", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHubGateway, "cloop.hub.gateway", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHubCluster, "cloop.hub.cluster", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHubEdge, "cloop.hub.edge", QtInfoMsg)
Q_LOGGING_CATEGORY(lcForward, "cloop.forward", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDevice, "cloop.device", QtInfoMsg)
Q_LOGGING_CATEGORY(lcCli, "cloop.cli", QtWarningMsg)

namespace cloop::logging {

void installMessagePattern()
{
    qSetMessagePattern(QStringLiteral(
        "%{time yyyy-MM-ddThh:mm:ss.zzz} "
        "%{if-debug}debug%{endif}%{if-info}info%{endif}%{if-warning}warning%{endif}"
        "%{if-critical}error%{endif}%{if-fatal}fatal%{endif} %{category}: %{message}"));
}

} // namespace cloop::logging
