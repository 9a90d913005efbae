// cloop-agent for tests on kernels without USB: the real agent, with the
// USB stand-in (vhci_hcd) answering its writes to the fixture /sys when
// CLOOP_USB_STANDIN=agent.

#include "daemon-agent/agentcommand.h"
#include "support/usbstandin/standinmain.h"

int main(int argc, char *argv[])
{
    return cloop::testsupport::usb::runWithStandIn(
        argc, argv, "cloop-agent", "agent", cloop::agent::runAgentCommand);
}
