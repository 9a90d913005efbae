#include "support/usbstandin/standinmain.h"

#include "cloop/buildinfo.h"
#include "common/device/sysfsroot.h"
#include "common/logging.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QCoreApplication>

#include <memory>

namespace cloop::testsupport::usb {

int runWithStandIn(int argc, char *argv[], const char *applicationName, const char *side,
    const std::function<int(const QStringList &)> &command)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QString::fromLatin1(applicationName));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(buildinfo::kVersion));
    logging::installMessagePattern();

    using device::SysfsRoot;
    std::unique_ptr<UsbKernelStandIn> standIn;
    const QString mode = qEnvironmentVariable("CLOOP_USB_STANDIN");
    if (!mode.isEmpty()) {
        // Strict: a test that mixes up the two sides should learn it here,
        // not from a device that never shows up.
        if (mode != QLatin1String(side)) {
            qCritical("CLOOP_USB_STANDIN=%s: %s stands in for the %s's kernel", qPrintable(mode),
                applicationName, side);
            return 2;
        }
        const SysfsRoot roots = SysfsRoot::fromEnvironment();
        if (roots.sysRoot() == u"/") {
            qCritical("CLOOP_USB_STANDIN needs a fixture tree: set CLOOP_SYSFS_ROOT");
            return 2;
        }
        standIn = std::make_unique<UsbKernelStandIn>(roots);
        if (Status listening = standIn->listen(); !listening) {
            qCritical("USB stand-in: %s", qPrintable(listening.error().message));
            return 2;
        }
        SysfsRoot::installKernelStandIn(standIn.get());
    }
    const int exitCode = command(QCoreApplication::arguments());
    SysfsRoot::installKernelStandIn(nullptr);
    return exitCode;
}

} // namespace cloop::testsupport::usb
