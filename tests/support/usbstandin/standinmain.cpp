#include "support/usbstandin/standinmain.h"

#include "cloop/buildinfo.h"
#include "common/device/sysfsroot.h"
#include "common/logging.h"
#include "common/util/eventdispatcher.h"
#include "common/util/relayallocator.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QCoreApplication>

#include <memory>

namespace cloop::testsupport::usb {

namespace {
QString rootFromEnvironment(const char *name)
{
    const QString root = qEnvironmentVariable(name);
    return root.isEmpty() ? QStringLiteral("/") : root;
}
} // namespace

device::SysfsRoot fixtureRootsFromEnvironment()
{
    return device::SysfsRoot(rootFromEnvironment("CLOOP_SYSFS_ROOT"),
        rootFromEnvironment("CLOOP_DEV_ROOT"), rootFromEnvironment("CLOOP_PROC_ROOT"));
}

int runWithStandIn(int argc, char *argv[], const char *applicationName, const char *side,
    const std::function<int(const QStringList &, const device::SysfsRoot &)> &command)
{
    // As the daemons' own mains do.
    util::keepRelayBuffersResident();
    util::installScalableEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QString::fromLatin1(applicationName));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(buildinfo::kVersion));
    logging::installMessagePattern();

    using device::SysfsRoot;
    std::unique_ptr<UsbKernelStandIn> standIn;
    SysfsRoot kernel = fixtureRootsFromEnvironment();
    const QString mode = qEnvironmentVariable("CLOOP_USB_STANDIN");
    if (!mode.isEmpty()) {
        // Strict: a test that mixes up the two sides should learn it here,
        // not from a device that never shows up.
        if (mode != QLatin1String(side)) {
            qCritical("CLOOP_USB_STANDIN=%s: %s stands in for the %s's kernel", qPrintable(mode),
                applicationName, side);
            return 2;
        }
        if (kernel.sysRoot() == u"/") {
            qCritical("CLOOP_USB_STANDIN needs a fixture tree: set CLOOP_SYSFS_ROOT");
            return 2;
        }
        standIn = std::make_unique<UsbKernelStandIn>(kernel);
        if (Status listening = standIn->listen(); !listening) {
            qCritical("USB stand-in: %s", qPrintable(listening.error().message));
            return 2;
        }
        kernel = kernel.withStandIn(standIn.get());
    }
    return command(QCoreApplication::arguments(), kernel);
}

} // namespace cloop::testsupport::usb
