// cloop-forward for tests on kernels without USB: the real forwarder, with
// the USB stand-in (usbip-host and a simulated device) answering its
// writes to the fixture /sys when CLOOP_USB_STANDIN=forwarder.

#include "daemon-forward/forwardcommand.h"
#include "support/usbstandin/standinmain.h"

int main(int argc, char *argv[])
{
    return cloop::testsupport::usb::runWithStandIn(
        argc, argv, "cloop-forward", "forwarder", cloop::forward::runForwarderCommand);
}
