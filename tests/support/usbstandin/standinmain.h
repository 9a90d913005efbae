#pragma once

#include "common/device/sysfsroot.h"

#include <QStringList>

#include <functional>

namespace cloop::testsupport::usb {

// The fixture tree a test points a stand-in build at: CLOOP_SYSFS_ROOT,
// CLOOP_DEV_ROOT and CLOOP_PROC_ROOT when set (each names the folder that
// stands for "/"), "/" otherwise. Only the stand-in builds read these: a
// production program's kernel is always its machine's.
device::SysfsRoot fixtureRootsFromEnvironment();

// The body of a daemon's *-usbstandin main: with CLOOP_USB_STANDIN=`side`
// ("forwarder" or "agent") it installs the USB stand-in over the fixture
// tree CLOOP_SYSFS_ROOT / CLOOP_DEV_ROOT name (which the test has made) and
// listens on <CLOOP_SYSFS_ROOT>/standin.sock for the test; then it runs the
// real daemon command. Exit 2 when the variable names the other side or
// no fixture tree is given: the stand-in never writes below the real /sys.
int runWithStandIn(int argc, char *argv[], const char *applicationName, const char *side,
    const std::function<int(const QStringList &, const device::SysfsRoot &)> &command);

} // namespace cloop::testsupport::usb
