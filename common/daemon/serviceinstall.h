#pragma once

#include "common/identity/enrollmentbundle.h"

#include <QCommandLineOption>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::daemon {

// What `install` and `uninstall` know of one daemon's service.
struct ServiceSpec
{
    QString command; // "cloop forward"
    QString unit; // "cloop-forward.service"
    identity::EnrollmentBundle::Kind bundleKind = identity::EnrollmentBundle::Kind::Forwarder;
    QString bundleFile; // "forwarder.bundle", in /etc/cloop
    QString credentialFile; // "forwarder.json", in /etc/cloop
    // The unit's variable its drop-in sets to the daemon's own options.
    QString optionsVariable; // "CLOOP_FORWARD_OPTIONS"
    QString package; // "cloop-forward": what an upgrade installs
    QString upgradeFolder; // "/var/lib/cloop-forward/upgrade", as its unit says
};

// `… install --token-file FILE [options]`, as root: the bundle checked and
// moved to /etc/cloop (0600, root's; the service redeems and deletes it on
// its first start), the daemon's options in a drop-in of its unit (never
// the bundle: a command line is readable by every local user), the unit
// enabled and started, and where to follow its log. `daemonOptions` are
// the daemon's own options install passes on (an agent's --work-root).
//
// --root DIR prepares a system image instead: the same files under DIR,
// the unit enabled there (systemctl --root), nothing started.
int runInstallCommand(const ServiceSpec &spec, const QStringList &arguments,
    const QList<QCommandLineOption> &daemonOptions = {});

// `… uninstall [--purge]`: the unit stopped and disabled, the drop-in gone;
// the credential stays unless --purge.
int runUninstallCommand(const ServiceSpec &spec, const QStringList &arguments);

// `… install --upgrade …`, as root: the device's upgrade settings (its
// channel, whether the hub may ask), an upgrade its operator asks for now,
// or (--apply-request, from the path unit) the request the daemon filed.
int runUpgradeCommand(const ServiceSpec &spec, const QStringList &arguments);

// The exit code of `install`, `uninstall` or `repin` when `arguments`
// (the daemon's name first) names one; none for the daemon itself.
// Whether `word` is one of the daemon's own: install, uninstall, repin.
bool isServiceSubcommand(const QString &word);

std::optional<int> runServiceSubcommand(const ServiceSpec &spec, const QStringList &arguments,
    const QList<QCommandLineOption> &daemonOptions = {});

} // namespace cloop::daemon
