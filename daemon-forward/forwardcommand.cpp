#include "daemon-forward/forwardcommand.h"

#include "common/daemon/daemoncommandline.h"
#include "common/daemon/repincommand.h"
#include "daemon-forward/forwarderdaemon.h"

namespace cloop::forward {

int runForwarderCommand(const QStringList &arguments, const device::SysfsRoot &kernel)
{
    if (arguments.value(1) == QLatin1String("repin"))
        return daemon::runRepinCommand(
            QStringList { arguments.value(0) + QLatin1String(" repin") } + arguments.mid(2),
            QStringLiteral("forwarder.json"));
    daemon::DaemonCommandLine commandLine(QStringLiteral("cloop forward"),
        QStringLiteral("Carries one enrolled device to the cloop hub over an outbound tunnel.\n"
                       "First start: cloop forward --token-file FILE, FILE holding the bundle "
                       "cloopfwd1.… (mode 0600; deleted once redeemed).\n"
                       "Afterwards: cloop forward"),
        QStringLiteral("~/.cloop/forwarder.json"));
    if (auto done = commandLine.parse(arguments))
        return *done;
    ForwarderDaemon forwarder(commandLine.connection(), kernel);
    if (Status prepared = forwarder.prepare(); !prepared)
        return commandLine.usageError(prepared.error().message);
    return daemon::runUntilFinished(forwarder);
}

} // namespace cloop::forward
