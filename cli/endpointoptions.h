#pragma once

#include "cli/adminclient.h"
#include "common/util/commandline.h"

#include <QCommandLineOption>
#include <QCommandLineParser>

namespace cloop::cli {

// The options every admin command shares, and where the hub and the token
// come from:
//   --data DIR   that hub's own administration file (DIR/cli.json);
//   --hub URL    the token in $CLOOP_TOKEN, else a stored login for that
//                hub (the current context first);
//   --context NAME  that stored login (`cloop context list`);
//   none         the current context (`cloop login`, `cloop context use`)
//                if there is one, else the hub on this machine (~/.cloop/hub
//                or $CLOOP_HUB_DATA).
// --pin and --ca override what the chosen source says.
class EndpointOptions
{
public:
    void addTo(util::CommandLine &commandLine);
    Result<AdminEndpoint> resolve(const QCommandLineParser &parser) const;

private:
    QCommandLineOption m_hub { QStringLiteral("hub"), QStringLiteral("Hub URL (wss://HOST:PORT)."),
        QStringLiteral("URL") };
    QCommandLineOption m_data { QStringLiteral("data"),
        QStringLiteral("The hub's data folder on this machine (default ~/.cloop/hub)."),
        QStringLiteral("DIR") };
    QCommandLineOption m_context { QStringLiteral("context"),
        QStringLiteral("A stored login, by name, instead of the current one (cloop context list)."),
        QStringLiteral("NAME") };
    QCommandLineOption m_pin { QStringLiteral("pin"),
        QStringLiteral("The hub's key pin, sha256:… (with --hub)."), QStringLiteral("PIN") };
    QCommandLineOption m_ca { QStringLiteral("ca"),
        QStringLiteral("Also trust this PEM CA for the hub."), QStringLiteral("FILE") };
};

// How to trust a hub: its pin(s), if any, and an extra CA file, if any.
Result<net::HubTrust> makeHubTrust(const QString &pin, const QString &caFile);

} // namespace cloop::cli
