#pragma once

#include "hub/cli/adminclient.h"

#include <QCommandLineOption>
#include <QCommandLineParser>

namespace cloop::cli {

// The options every admin command shares: on the hub's own machine none are
// needed (the hub's data folder says where and who); elsewhere --hub with
// the token in $CLOOP_TOKEN.
class EndpointOptions
{
public:
    void addTo(QCommandLineParser &parser);
    Result<AdminEndpoint> resolve(const QCommandLineParser &parser) const;

private:
    QCommandLineOption m_hub{QStringLiteral("hub"), QStringLiteral("Hub URL (wss://HOST:PORT)."), QStringLiteral("URL")};
    QCommandLineOption m_data{QStringLiteral("data"),
                              QStringLiteral("The hub's data folder on this machine (default ~/.cloop/hub)."),
                              QStringLiteral("DIR")};
    QCommandLineOption m_pin{QStringLiteral("pin"), QStringLiteral("The hub's key pin, sha256:… (with --hub)."),
                             QStringLiteral("PIN")};
    QCommandLineOption m_ca{QStringLiteral("ca"), QStringLiteral("Also trust this PEM CA for the hub."),
                            QStringLiteral("FILE")};
};

} // namespace cloop::cli
