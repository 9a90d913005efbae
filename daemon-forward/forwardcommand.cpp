#include "daemon-forward/forwardcommand.h"

#include "common/daemon/daemoncommandline.h"
#include "common/daemon/serviceinstall.h"
#include "daemon-forward/forwarderdaemon.h"

namespace cloop::forward {

namespace {
const daemon::ServiceSpec kService { QStringLiteral("cloop forward"),
    QStringLiteral("cloop-forward.service"), identity::EnrollmentBundle::Kind::Forwarder,
    QStringLiteral("forwarder.bundle"), QStringLiteral("forwarder.json"),
    QStringLiteral("CLOOP_FORWARD_OPTIONS"), QStringLiteral("cloop-forward"),
    QStringLiteral("/var/lib/cloop-forward/upgrade") };
} // namespace

int runForwarderCommand(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    if (auto done = daemon::runServiceSubcommand(kService, arguments))
        return *done;
    daemon::DaemonCommandLine commandLine(QStringLiteral("cloop forward"),
        QStringLiteral("Carries one enrolled device to the cloop hub over an outbound tunnel.\n"
                       "First start: cloop forward --token-file FILE, FILE holding the bundle "
                       "cloopfwd1.… (mode 0600; deleted once redeemed).\n"
                       "Afterwards: cloop forward"),
        QStringLiteral("~/.cloop/forwarder.json"));
    if (auto done = commandLine.parse(arguments))
        return *done;
    auto upgrade = commandLine.upgrade(
        QStringLiteral("cloop forward"), QProcessEnvironment::systemEnvironment());
    if (!upgrade)
        return commandLine.usageError(upgrade.error().message);
    ForwarderDaemon forwarder(commandLine.connection(), kernel, *upgrade);
    if (Status prepared = forwarder.prepare(); !prepared)
        return commandLine.usageError(prepared.error().message);
    return daemon::runUntilFinished(forwarder);
}

} // namespace cloop::forward
