#pragma once

#include <QStringList>

#include <functional>

namespace cloop::testsupport::usb {

// The body of a daemon's *-usbstandin main: with CLOOP_USB_STANDIN=`side`
// ("forwarder" or "agent") it installs the USB stand-in over the fixture
// tree CLOOP_SYSFS_ROOT / CLOOP_DEV_ROOT name (which the test has made) and
// listens on <CLOOP_SYSFS_ROOT>/standin.sock for the test; then it runs the
// real daemon command. Exit 2 when the variable names the other side or
// no fixture tree is given: the stand-in never writes below the real /sys.
int runWithStandIn(int argc, char *argv[], const char *applicationName, const char *side,
    const std::function<int(const QStringList &)> &command);

} // namespace cloop::testsupport::usb
