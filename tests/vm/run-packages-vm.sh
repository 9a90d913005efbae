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

# Releases for the upgrade steps, made as whoever builds releases makes them,
# with a release key thrown away afterwards: N, the agent and forwarder
# packages just built; N+1 of both, this checkout built again with the next
# patch number; N+2, the agent's N+1 made into a version that starts and
# exits. All signed.
src=$(realpath "$here/../..")
upgrade=$share/upgrade
mkdir -p "$upgrade/keys" "$upgrade/debs"
"$build/bin/cloop" release keygen --private "$upgrade/release.pem" \
    --public "$upgrade/keys/release.pem" >/dev/null
n_deb=$(ls "$share"/debs/cloop-agent_*_amd64.deb)
n=$(dpkg-deb -f "$n_deb" Version)
n=${n%-*}
[[ $n =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { echo "the agent package is $n, not a release"; exit 1; }
next=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))
broken=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 2))
next_build=$build/upgrade-next
# The same compiler arguments as the build's own: ccache serves what did
# not change, whichever folder it is built in.
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
cmake -S "$src" -B "$next_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCLOOP_BUILD_TESTS=OFF -DCLOOP_VERSION="$next" -DCLOOP_RELEASE_KEYS="$upgrade/keys" \
    "-DCLOOP_PACKAGE_COMPONENTS=agent;forward;keys" >"$share/next.log" 2>&1 \
    && cmake --build "$next_build" --target cloop-agent cloop-forward >>"$share/next.log" 2>&1 \
    && cpack --config "$next_build/CPackConfig.cmake" -G DEB -B "$upgrade/debs" \
        >>"$share/next.log" 2>&1 || { tail -40 "$share/next.log"; exit 1; }
rm -rf "$upgrade/debs/_CPack_Packages"
cp "$n_deb" "$share"/debs/cloop-forward_*_amd64.deb "$upgrade/debs/"
tree=$share/broken-tree
dpkg-deb -R "$upgrade/debs/cloop-agent_${next}-1_amd64.deb" "$tree"
sed -i "s/^Version: .*/Version: ${broken}-1/" "$tree/DEBIAN/control"
printf '#!/bin/sh\necho "cloop-agent %s: this build exits at once" >&2\nexit 1\n' "$broken" \
    > "$tree/usr/bin/cloop-agent"
dpkg-deb --root-owner-group -b "$tree" "$upgrade/debs/cloop-agent_${broken}-1_amd64.deb" >/dev/null
rm -rf "$tree"
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo 0000000000000000000000000000000000000000)
for deb in "$upgrade"/debs/cloop-agent_*.deb "$upgrade"/debs/cloop-forward_*.deb; do
    "$build/bin/cloop" release sign "$deb" --key "$upgrade/release.pem" --channel stable \
        --commit "$commit" >/dev/null
done
rm -f "$upgrade/release.pem"
printf 'N=%s\nNEXT=%s\nBROKEN=%s\n' "$n" "$next" "$broken" > "$upgrade/versions"
# The guest's systemd mounts its own /tmp, where a checkout may live (CI's
# does): the guest script goes in through the share.
cp "$here/guest-packages.sh" "$share/guest-packages.sh"
status=0
# The packages hold the build's programs: a guest core reads with them.
# Two vCPUs and a page cache over the host root (which nothing changes while
# the guest runs) make dpkg, systemd and podman under emulation about twice
# as fast as one vCPU reading every file through 9p each time.
export CLOOP_VM_SMP=${CLOOP_VM_SMP:-2} CLOOP_VM_9P_CACHE=${CLOOP_VM_9P_CACHE:-loose}
CLOOP_VM_CORE_BINARIES=$build/bin "$here/usb-vm.sh" --systemd --quiet --timeout 2400 --share "$share" \
    /bin/bash /share/guest-packages.sh /share/debs || status=$?
grep '^RESULT:\|RESULT: ' "$share/console.log" 2>/dev/null | sed 's/^.*RESULT:/RESULT:/' || true
exit "$status"
