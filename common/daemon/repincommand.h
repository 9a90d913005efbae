#pragma once

#include <QString>
#include <QStringList>

namespace cloop::daemon {

// `cloop forward repin` / `cloop executor agent repin`: for a daemon that
// was away while its hub's key was rotated, and so never heard the new pin.
// Replaces the pins in its credential with the one the operator read from
// `cloop hub pin` on the hub; the credential itself, the daemon's identity,
// is kept. `arguments` starts with the command's name.
int runRepinCommand(const QStringList &arguments, const QString &defaultCredentialFile);

} // namespace cloop::daemon
