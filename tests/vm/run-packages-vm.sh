#!/bin/bash
# The Debian packages on a real systemd, opt-in like the real-kernel suite:
# CLOOP_FORWARDER_E2E=1 builds the packages of BUILD_DIR (CPack), boots the
# QEMU guest with systemd as its init (usb-vm.sh --systemd) and runs
# guest-packages.sh there. Exit 77 (skipped) says why when it cannot run.
#
#   run-packages-vm.sh BUILD_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
build=$(realpath "${1:?usage: run-packages-vm.sh BUILD_DIR}")

skip() { echo "packages vm skipped: $*"; exit 77; }
[[ ${CLOOP_FORWARDER_E2E:-} == 1 ]] || skip "set CLOOP_FORWARDER_E2E=1 to boot a QEMU guest with systemd (about 3 min)"
[[ $(id -u) -eq 0 ]] || skip "needs root (the guest installs packages as root)"
for tool in qemu-system-x86_64 cpio depmod cpack dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || skip "$tool is missing (scripts/install-deps installs it)"
done
[[ -x /lib/systemd/systemd ]] || skip "systemd is not installed (the guest boots this machine's)"
share=$(mktemp -d -t cloop-packages-vm.XXXXXX)
trap 'rm -rf "$share"' EXIT
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$share/debs" >"$share/cpack.log" 2>&1 \
    || { cat "$share/cpack.log"; exit 1; }
rm -rf "$share/debs/_CPack_Packages"
# The guest's systemd mounts its own /tmp, where a checkout may live (CI's
# does): the guest script goes in through the share.
cp "$here/guest-packages.sh" "$share/guest-packages.sh"
status=0
"$here/usb-vm.sh" --systemd --quiet --timeout 900 --share "$share" \
    /bin/bash /share/guest-packages.sh /share/debs || status=$?
grep '^RESULT:\|RESULT: ' "$share/console.log" 2>/dev/null | sed 's/^.*RESULT:/RESULT:/' || true
exit "$status"
