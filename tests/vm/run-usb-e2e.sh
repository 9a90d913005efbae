#!/bin/bash
# The real-kernel USB suite, opt-in: CLOOP_FORWARDER_E2E=1 boots Debian's
# kernel in QEMU (usb-vm.sh) and runs guest-cloop-usb.sh there with the
# programs of BIN_DIR. CLOOP_FORWARDER_USB_BUSID (default 1-1) picks the
# emulated device to forward. Exit 77 (skipped) says why when it cannot
# or should not run.
#
#   run-usb-e2e.sh BIN_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
bin=$(realpath "${1:?usage: run-usb-e2e.sh BIN_DIR}")

skip() { echo "usb e2e skipped: $*"; exit 77; }
[[ ${CLOOP_FORWARDER_E2E:-} == 1 ]] || skip "set CLOOP_FORWARDER_E2E=1 to boot a QEMU guest with a real kernel (about 70 s)"
[[ $(id -u) -eq 0 ]] || skip "needs root (the guest runs the agent's podman sandboxes as root)"
for tool in qemu-system-x86_64 cpio depmod; do
    command -v "$tool" >/dev/null || skip "$tool is missing (scripts/install-deps installs qemu-system-x86, cpio, kmod)"
done
for program in cloop cloop-forward cloop-agent; do
    [[ -x $bin/$program ]] || skip "$bin/$program is not built"
done
share=$(mktemp -d -t cloop-usb-e2e.XXXXXX)
trap 'rm -rf "$share"' EXIT
env_args=()
[[ -n ${CLOOP_FORWARDER_USB_BUSID:-} ]] && env_args=(CLOOP_FORWARDER_USB_BUSID="$CLOOP_FORWARDER_USB_BUSID")
# The guest starts with a clean environment: the bus id goes in by env(1).
# Not exec: the trap removes the share folder afterwards.
status=0
"$here/usb-vm.sh" --quiet --timeout 600 --share "$share" \
    /usr/bin/env "${env_args[@]}" "$here/guest-cloop-usb.sh" "$bin" || status=$?
exit "$status"
