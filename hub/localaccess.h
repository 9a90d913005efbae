#pragma once

#include "common/result.h"

#include <QString>
#include <QUrl>

namespace cloop::hub {

// What the CLI on the hub's own machine needs to administer it with no
// flags: the hub's URL, its key pin and an administrator token. Written by
// the hub into its data folder (cli.json, mode 0600).
struct LocalAccess
{
    QUrl url;
    QString pin;
    QString token;
    QUrl metrics; // http://127.0.0.1:PORT/metrics; empty when the hub serves none
    qint64 pid = 0; // the hub process, which `cloop hub key` tells to reload

    static QString fileName() { return QStringLiteral("cli.json"); }
    static Result<LocalAccess> load(const QString &dataDir);
    Status save(const QString &dataDir) const;
};

// ~/.cloop/hub, or $CLOOP_HUB_DATA.
QString defaultHubDataDir();

} // namespace cloop::hub
