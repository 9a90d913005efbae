#!/bin/bash
# Guest script for usb-vm.sh: proves that the VM harness gives a real kernel
# USB/IP stack, using only the stock usbip tools. Run it as
#   tests/vm/usb-vm.sh tests/vm/guest-usbip-selftest.sh [--usbip-only] [QT_PROGRAM]
#
# It exports both emulated devices (usb-kbd, usb-storage) with usbip-host,
# imports them again over 127.0.0.1 through vhci_hcd, reads the disk's magic
# through vhci, then detaches, unbinds and checks that the original drivers
# took the devices back. Exit status 0 means all of that worked.
#
# Also measured, for information only (they never fail the script): how long
# a Qt 6 program of the host takes to start in the guest (QT_PROGRAM, default
# the repository's build/bin/cloop), and whether podman can run a container
# there. --usbip-only skips them (they take most of the run time).

# Predicates below are called through wait_for, which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail

repo=$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)
usbip_only=0
if [ "${1:-}" = --usbip-only ]; then usbip_only=1; shift; fi
qt_program=${1:-$repo/build/bin/cloop}

magic=USBIPDISKMAGIC01
failures=0
# Microseconds, in bash arithmetic: every extra process costs tens of
# milliseconds under TCG.
usec() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
t_begin=$(usec)

log() {
    local d=$(( $(usec) - t_begin ))
    printf '[%3d.%02d] %s\n' $((d / 1000000)) $((d % 1000000 / 10000)) "$*"
}
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
ms_since() { echo $(( ($(usec) - $1) / 1000 )); }

# Polls CONDITION (a shell command) every 0.1 s for up to SECONDS.
wait_for() {
    local seconds=$1; shift
    local i=0
    until "$@"; do
        i=$((i + 1))
        [ $i -lt $((seconds * 10)) ] || return 1
        sleep 0.1
    done
}

is_vhci() { readlink -f "/sys/bus/usb/devices/$1" | grep -q vhci_hcd; }

# Bus ids of the non-root-hub devices on the emulated (non-vhci) controller.
emulated_devices() {
    local d b
    for d in /sys/bus/usb/devices/*; do
        b=${d##*/}
        case $b in usb*|*:*) continue ;; esac
        is_vhci "$b" || echo "$b"
    done
}

vhci_devices() {
    local d b
    for d in /sys/bus/usb/devices/*; do
        b=${d##*/}
        case $b in usb*|*:*) continue ;; esac
        if is_vhci "$b"; then echo "$b"; fi
    done
}

# "interface=driver ..." for one device; the fingerprint of who owns it.
drivers_of() {
    local i out=''
    for i in "/sys/bus/usb/devices/$1/$1":*; do
        [ -e "$i" ] || continue
        if [ -e "$i/driver" ]; then
            out+="${i##*/}=$(basename "$(readlink "$i/driver")") "
        else
            out+="${i##*/}=none "
        fi
    done
    echo "${out% }"
}

drivers_are() { [ "$(drivers_of "$1")" = "$2" ]; }

device_driver() {
    if [ -e "/sys/bus/usb/devices/$1/driver" ]; then
        basename "$(readlink "/sys/bus/usb/devices/$1/driver")"
    else
        echo none
    fi
}

# Name of the first sd disk whose sysfs path does (ON=vhci) or does not
# (ON=direct) run through vhci_hcd.
disk_on() {
    local s
    for s in /sys/block/sd*; do
        [ -e "$s" ] || continue
        if readlink -f "$s" | grep -q vhci_hcd; then
            [ "$1" = vhci ] || continue
        else
            [ "$1" = direct ] || continue
        fi
        echo "${s##*/}"
        return 0
    done
    return 1
}

# 0CA8 is port 3240, 0A is LISTEN.
usbipd_listening() { grep -qi ':0CA8 00000000:0000 0A' /proc/net/tcp 2>/dev/null; }

count_is() { [ "$("$2" | wc -l)" = "$1" ]; }

usbip_part() {
    if ! command -v usbip >/dev/null || ! command -v usbipd >/dev/null; then
        fail "usbip/usbipd not installed (apt-get install usbip)"
        return
    fi
    log "kernel $(uname -r); emulated USB devices: $(emulated_devices | tr '\n' ' ')"
    local -a bus
    mapfile -t bus < <(emulated_devices)
    if [ ${#bus[@]} != 2 ]; then
        fail "expected 2 emulated USB devices, found ${#bus[@]}: ${bus[*]:-}"
        return
    fi
    local -A before
    local b
    for b in "${bus[@]}"; do
        before[$b]=$(drivers_of "$b")
        log "device $b $(cat "/sys/bus/usb/devices/$b/idVendor"):$(cat "/sys/bus/usb/devices/$b/idProduct") $(cat "/sys/bus/usb/devices/$b/product" 2>/dev/null || true): ${before[$b]}"
    done

    usbipd -D --pid=/run/usbipd.pid
    wait_for 10 usbipd_listening || { fail "usbipd does not listen on 3240"; return; }
    log "usbipd listening (pid $(cat /run/usbipd.pid))"

    for b in "${bus[@]}"; do
        usbip bind -b "$b" || { fail "usbip bind -b $b"; return; }
        [ "$(device_driver "$b")" = usbip-host ] || fail "$b is not on usbip-host after bind"
    done
    local exported
    exported=$(usbip list -r 127.0.0.1 2>&1) || true
    printf '    %s\n' "${exported//$'\n'/$'\n'    }"
    for b in "${bus[@]}"; do
        grep -q "^ *$b: " <<< "$exported" || fail "usbip list -r 127.0.0.1 does not offer $b"
    done
    log "bound and offered by usbipd: ${bus[*]}"

    for b in "${bus[@]}"; do
        usbip attach -r 127.0.0.1 -b "$b" || { fail "usbip attach -b $b"; return; }
    done
    wait_for 10 count_is 2 vhci_devices || { fail "vhci shows $(vhci_devices | wc -l) devices, want 2"; return; }
    log "attached: vhci devices $(vhci_devices | tr '\n' ' ')"
    usbip port | sed 's/^/    /'

    local disk
    if wait_for 15 disk_on vhci >/dev/null; then
        disk=$(disk_on vhci)
        wait_for 5 test -b "/dev/$disk" || true
        local got
        got=$(head -c 16 "/dev/$disk" 2>/dev/null || true)
        if [ "$got" = "$magic" ]; then
            log "read $magic from /dev/$disk through vhci_hcd"
        else
            fail "/dev/$disk (vhci) starts with '$got', want $magic"
        fi
    else
        fail "no disk appeared behind vhci_hcd"
    fi
    local v
    for v in $(vhci_devices); do
        log "vhci device $v: $(drivers_of "$v")"
    done

    local port
    for port in $(usbip port | sed -n 's/^Port \([0-9]*\): <Port in Use>.*/\1/p'); do
        usbip detach -p "$port" || fail "usbip detach -p $port"
    done
    wait_for 10 count_is 0 vhci_devices || fail "vhci still has devices after detach"
    log "detached"

    for b in "${bus[@]}"; do
        usbip unbind -b "$b" || fail "usbip unbind -b $b"
    done
    for b in "${bus[@]}"; do
        if wait_for 10 drivers_are "$b" "${before[$b]}"; then
            log "device $b back on: ${before[$b]}"
        else
            fail "device $b has '$(drivers_of "$b")' after unbind, want '${before[$b]}'"
        fi
    done
    # Back on usb-storage, the disk must read the same bytes directly.
    local direct=''
    if wait_for 15 disk_on direct >/dev/null; then direct=$(disk_on direct); fi
    if [ -n "$direct" ] && wait_for 5 test -b "/dev/$direct" \
        && [ "$(head -c 16 "/dev/$direct")" = "$magic" ]; then
        log "read $magic from /dev/$direct on the original controller"
    else
        fail "the disk did not come back on the original controller"
    fi

    kill "$(cat /run/usbipd.pid)" 2>/dev/null || true
}

qt_part() {
    local prog=$qt_program
    local -a args=(--version)
    if [ ! -x "$prog" ]; then
        prog=$(command -v qmake6 || true)
        args=(-v)
    fi
    if [ -z "$prog" ]; then
        log "INFO qt: no Qt program found (looked for $qt_program, qmake6)"
        return
    fi
    local run t out
    for run in cold warm warm; do
        t=$(usec)
        if out=$(QT_QPA_PLATFORM=offscreen "$prog" "${args[@]}" 2>&1); then
            log "INFO qt: $prog ${args[*]} ($run): $(ms_since "$t") ms -> $(echo "$out" | head -n 1)"
        else
            log "INFO qt: $prog ${args[*]} ($run) failed after $(ms_since "$t") ms: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
            return
        fi
    done
}

podman_part() {
    if ! command -v podman >/dev/null; then
        log "INFO podman: not installed"
        return
    fi
    local -a p=(podman --root /tmp/pr --runroot /run/pr --storage-driver vfs --cgroup-manager cgroupfs)
    local -a run=(run --rm --network none --ulimit nofile=4096:4096 --ulimit nproc=1024:1024)
    local rootfs t out
    rootfs=$(mktemp -d)
    mkdir -p "$rootfs/bin"
    cp "$(command -v busybox || echo /bin/busybox)" "$rootfs/bin/busybox" 2>/dev/null || {
        log "INFO podman: no busybox to build the test image"
        return
    }
    for a in sh true ls cat; do ln -s busybox "$rootfs/bin/$a"; done
    t=$(usec)
    if ! out=$(tar -C "$rootfs" -c . | "${p[@]}" import - cloop-test:vm 2>&1); then
        log "INFO podman: import failed after $(ms_since "$t") ms: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
        return
    fi
    log "INFO podman: image imported in $(ms_since "$t") ms"
    # The default runtime first (crun if installed, else runc); runc again
    # explicitly when the default failed or is not runc.
    local runtime i default_ok=0
    for runtime in default runc; do
        local -a rt=()
        if [ $runtime = runc ]; then
            if [ $default_ok = 1 ] && ! command -v crun >/dev/null; then break; fi
            command -v runc >/dev/null || { log "INFO podman: runc not installed"; break; }
            rt=(--runtime runc)
        fi
        for i in 1 2; do
            t=$(usec)
            if out=$("${p[@]}" "${rt[@]}" "${run[@]}" cloop-test:vm true 2>&1); then
                log "INFO podman run ($runtime runtime, run $i): ok in $(ms_since "$t") ms"
                [ $runtime != default ] || default_ok=1
            else
                log "INFO podman run ($runtime runtime, run $i): FAILED after $(ms_since "$t") ms: $(echo "$out" | tail -n 5 | tr '\n' ' ')"
                break
            fi
        done
    done
    rm -rf "$rootfs"
}

usbip_part
if [ $usbip_only = 0 ]; then
    qt_part
    podman_part
fi

if [ $failures = 0 ]; then
    log "RESULT: PASS"
    exit 0
fi
log "RESULT: FAIL ($failures failures)"
exit 1
