#!/bin/bash
# Runs a script of this host inside a throwaway QEMU (TCG) guest that boots
# Debian's stock kernel, has emulated USB devices (xhci + usb-kbd +
# usb-storage) and uses the host's own root filesystem, so host programs run
# there unchanged against a real kernel with usbip-host and vhci_hcd.
#
# The host root is exported read-only over virtio-9p and becomes the lower
# layer of an overlayfs whose upper layer is a tmpfs: the guest can write
# anywhere, nothing reaches the host except through /share.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: usb-vm.sh [options] GUEST_SCRIPT [ARGS...]

Boots Debian's kernel in QEMU (TCG) with an xhci controller, a usb-kbd and a
usb-storage disk (16 MiB, first bytes "USBIPDISKMAGIC01"), on the host's own
root filesystem, and runs GUEST_SCRIPT ARGS there as root. GUEST_SCRIPT is run
directly when executable (its #! line applies), else with /bin/sh.

options:
  --cache DIR    kernel cache (default: $CLOOP_VM_CACHE, else
                 ${XDG_CACHE_HOME:-$HOME/.cache}/cloop-vm)
  --timeout S    kill the guest after S seconds (default 300)
  --share DIR    host folder mounted read-write at /share in the guest
                 (default: a fresh temporary folder, removed afterwards)
  --quiet        print the guest console only if the run fails
  --systemd      boot the host's systemd as the guest's init and run
                 GUEST_SCRIPT as the oneshot unit cloop-vm-test.service,
                 after basic.target; the guest powers off when it ends
  -h, --help     this text

The guest sees the host's files at the same paths, read-only underneath and
copy-on-write on top; /run and /var/lib/containers are fresh tmpfs. Results
meant for the host must be written to /share. In the guest, CLOOP_VM=1 and
CLOOP_VM_SHARE=/share are set; the full module tree of the guest kernel is
available, so modprobe and module autoloading work. There is no network
other than loopback.

Exit status: the guest script's; 124 if the guest timed out; 125 if the
harness failed or the guest did not finish.

environment (tuning): CLOOP_VM_MEM (MiB, default 1024), CLOOP_VM_SMP
(default 1), CLOOP_VM_9P_CACHE (cache mode of the root mount: mmap (default),
loose or none); CLOOP_VM_CORE_BINARIES, a folder of this host's builds of
programs the guest installed itself (a package's /usr/bin/cloop), whose
cores are then read with them.
EOF
}

die() { echo "usb-vm: $*" >&2; exit 125; }
note() { echo "usb-vm: $*" >&2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t_start=$(now)
timeout_s=300
share=
quiet=0
init_system=shell
cache=${CLOOP_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloop-vm}
mem=${CLOOP_VM_MEM:-1024}
smp=${CLOOP_VM_SMP:-1}
root_cache=${CLOOP_VM_9P_CACHE:-mmap}

while [ $# -gt 0 ]; do
    case $1 in
        --cache) [ $# -ge 2 ] || die "--cache needs a value"; cache=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; timeout_s=$2; shift 2 ;;
        --share) [ $# -ge 2 ] || die "--share needs a value"; share=$2; shift 2 ;;
        --quiet) quiet=1; shift ;;
        --systemd) init_system=systemd; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { usage >&2; exit 125; }
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"

# The guest resolves the script through the host root, so it needs the
# physical path: a symlink in it could point outside the guest's view.
script=$(realpath -e -- "$1") || die "no such guest script: $1"
[ -f "$script" ] || die "not a file: $script"
shift
case $script in
    /run/*|/var/lib/containers/*) die "$script is hidden in the guest (fresh tmpfs there); move it elsewhere" ;;
esac

for tool in qemu-system-x86_64 busybox cpio xz depmod modprobe dpkg-deb apt-get apt-cache flock timeout realpath; do
    command -v "$tool" >/dev/null || die "missing $tool (apt-get install qemu-system-x86 busybox-static cpio kmod)"
done
busybox=$(command -v busybox)
# The initramfs has no libc: only busybox-static can run there.
if ldd "$busybox" >/dev/null 2>&1; then
    die "$busybox is dynamically linked; install busybox-static"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cloop-vm.XXXXXX")
own_share=0
if [ -z "$share" ]; then
    share=$work/share
    own_share=1
fi
mkdir -p "$share"
share=$(realpath -e "$share")

runner_pid=''
tail_pid=''
unpack_tmp=''
# shellcheck disable=SC2317  # only reached through the trap
cleanup() {
    local rc=$? qpid=''
    trap - EXIT INT TERM
    set +e
    # Read before stopping qemu: it deletes its pid file when it exits.
    [ -s "$work/qemu.pid" ] && qpid=$(tr -dc 0-9 < "$work/qemu.pid" 2>/dev/null)
    if [ -n "$runner_pid" ] && kill -0 "$runner_pid" 2>/dev/null; then
        # timeout(1) passes the TERM on to its qemu.
        kill -TERM "$runner_pid" 2>/dev/null
        for _ in $(seq 30); do
            kill -0 "$runner_pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    if [ -n "$qpid" ] && [ "$(cat "/proc/$qpid/comm" 2>/dev/null)" = qemu-system-x86 ]; then
        kill -KILL "$qpid" 2>/dev/null
    fi
    [ -z "$tail_pid" ] || kill "$tail_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work" ${unpack_tmp:+"$unpack_tmp"}
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- kernel
t0=$(now)
mkdir -p "$cache"
cache=$(realpath -e "$cache")
exec 9>"$cache/.lock"
# Two runs sharing a cache must not unpack into each other.
flock 9

# Each apt-cache call costs about a second here, so the answer is kept until
# the package lists change.
kpkg='' kpver=''
resolved=$cache/.resolved
lists=/var/lib/apt/lists
if [ -s "$resolved" ] && [ -d "$lists" ] \
    && [ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -newer "$resolved" -print -quit 2>/dev/null)" ]; then
    read -r kpkg kpver < "$resolved" || true
fi
if [ -z "$kpkg" ] || [ -z "$kpver" ]; then
    # The metapackage pins the exact image package: "Depends: linux-image-X (= V)".
    read -r kpkg kpver < <(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null | awk '
        /^Depends:/ {
            for (i = 2; i <= NF; i++) if ($i ~ /^linux-image-[0-9]/) {
                p = $i; sub(/,$/, "", p); v = ""
                if ($(i + 1) == "(=") { v = $(i + 2); sub(/[),]+$/, "", v) }
                print p, v; exit
            }
        }') || true
    if [ -n "$kpkg" ] && [ -z "$kpver" ]; then
        kpver=$(apt-cache show --no-all-versions "$kpkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }') || true
    fi
    if [ -n "$kpkg" ] && [ -n "$kpver" ]; then
        echo "$kpkg $kpver" > "$resolved"
    fi
fi
kernel_state=cached
if [ -n "$kpkg" ] && [ -n "$kpver" ]; then
    ktree=$cache/${kpkg}_${kpver//:/%3a}
    if [ ! -d "$ktree" ]; then
        kernel_state=downloaded
        unpack_tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
        if ! (cd "$unpack_tmp" && apt-get download -q "$kpkg=$kpver") >"$unpack_tmp/apt.log" 2>&1; then
            cat "$unpack_tmp/apt.log" >&2
            die "apt-get download $kpkg=$kpver failed"
        fi
        dpkg-deb -x "$unpack_tmp"/"${kpkg}"_*.deb "$unpack_tmp/tree"
        krel=$(ls "$unpack_tmp/tree/lib/modules")
        depmod -b "$unpack_tmp/tree" "$krel"
        # Only a finished tree gets the final name, so an interrupted unpack is
        # never mistaken for a cached kernel.
        mv "$unpack_tmp/tree" "$ktree"
        rm -rf "$unpack_tmp"
        unpack_tmp=
    fi
else
    # No apt lists (offline or before apt-get update): fall back to the
    # newest kernel that an earlier run unpacked.
    ktree=$(find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-*' -printf '%T@ %p\n' \
        | sort -rn | head -n 1 | cut -d' ' -f2-) || true
    [ -n "$ktree" ] || die "cannot resolve linux-image-amd64 (run apt-get update) and no cached kernel in $cache"
    note "apt-cache could not resolve linux-image-amd64; using cached $(basename "$ktree")"
fi
krel=$(ls "$ktree/lib/modules")
[ "$(printf '%s\n' "$krel" | wc -l)" = 1 ] || die "expected one kernel in $ktree/lib/modules"
vmlinuz=$ktree/boot/vmlinuz-$krel
[ -f "$vmlinuz" ] || die "no kernel image $vmlinuz"
# Under TCG, the kernel's self-decompression takes about 4 s of every boot.
# The uncompressed ELF boots directly through its PVH entry point instead.
vmlinux=$ktree/boot/vmlinux-$krel
if [ ! -e "$vmlinux" ] && [ ! -e "$vmlinux.none" ]; then
    off=$(LC_ALL=C grep -obUaP -m1 '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1) || true
    # Through a file, not a pipe: xz stops reading at the end of the stream
    # and the SIGPIPE of the writer would fail the pipeline.
    if [ -n "$off" ] && tail -c +"$((off + 1))" "$vmlinuz" > "$vmlinux.xz" \
        && xz -dc --single-stream "$vmlinux.xz" > "$vmlinux.tmp" 2>/dev/null \
        && [ "$(od -An -tx1 -N4 "$vmlinux.tmp" | tr -d ' ')" = 7f454c46 ]; then
        mv "$vmlinux.tmp" "$vmlinux"
    else
        rm -f "$vmlinux.tmp"
        touch "$vmlinux.none"
    fi
    rm -f "$vmlinux.xz"
fi
[ -e "$vmlinux" ] || vmlinux=$vmlinuz
flock -u 9
t_kernel=$(secs "$t0" "$(now)")

# ---------------------------------------------------------------- initramfs
t0=$(now)
ir=$work/initramfs
mkdir -p "$ir"/bin "$ir"/dev "$ir"/proc "$ir"/sys "$ir"/etc "$ir"/lib/modules \
    "$ir"/lower "$ir"/upper "$ir"/newroot
cp "$busybox" "$ir/bin/busybox"

# xhci comes first so that the emulated devices sit on buses 1 and 2 and
# vhci_hcd's buses come after them; virtio/9p next so that the root can be
# mounted while USB enumerates.
modules=(xhci-pci virtio_pci 9pnet_virtio 9p overlay usbhid hid-generic
         usb-storage sd_mod usbip-host vhci-hcd)
for m in "${modules[@]}"; do
    modprobe -d "$ktree" -S "$krel" --show-depends "$m" || die "module $m not found in $krel"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$work/modpaths"
: > "$ir/etc/modules"
while read -r p; do
    cp "$p" "$ir/lib/modules/"
    basename "$p" >> "$ir/etc/modules"
done < "$work/modpaths"

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
    echo "KREL=$(q "$krel")"
    echo "KTREE=$(q "$ktree")"
    echo "ROOT_CACHE=$(q "$root_cache")"
    echo "USB_DEVICES=2"
    echo "INIT_SYSTEM=$(q "$init_system")"
} > "$ir/etc/cloop-vm.conf"

cat > "$ir/init" <<'EOF'
#!/bin/busybox sh
# Stage 1 runs from the initramfs and builds the guest's root out of the
# host's; stage 2 runs as PID 1 on that root and runs the guest script.
BB=/run/cloop-vm/busybox
msg() { echo "cloop-vm: $*"; }
halt() {
    if [ -x "$BB" ]; then "$BB" sync; else /bin/busybox sync; fi
    if [ -x "$BB" ]; then "$BB" poweroff -f; else /bin/busybox poweroff -f; fi
    sleep 5
    echo o > /proc/sysrq-trigger
}
fail() { msg "FATAL: $*"; halt; }
uptime_s() { read -r u _ < /proc/uptime; echo "$u"; }

usb_devices() {
    # Non-root-hub devices whose interfaces all have a driver.
    n=0
    for d in /sys/bus/usb/devices/*-*; do
        case ${d##*/} in *:*) continue ;; esac
        [ -e "$d" ] || continue
        ok=1
        for i in "$d"/*:*; do [ -e "$i/driver" ] || ok=0; done
        [ $ok = 1 ] && n=$((n + 1))
    done
    echo $n
}

if [ "$1" != stage2 ] && [ "$1" != script ]; then
    /bin/busybox --install -s /bin
    export PATH=/bin
    . /etc/cloop-vm.conf
    mount -t proc proc /proc
    mount -t sysfs sysfs /sys
    mount -t devtmpfs devtmpfs /dev
    # udev would normally add these; bash's process substitution needs /dev/fd.
    ln -s /proc/self/fd /dev/fd
    ln -s /proc/self/fd/0 /dev/stdin
    ln -s /proc/self/fd/1 /dev/stdout
    ln -s /proc/self/fd/2 /dev/stderr
    t_init=$(uptime_s)
    while read -r m; do
        # The pclmul crc helpers need a CPU feature TCG may lack; the
        # generic ones stand in.
        insmod "/lib/modules/$m" 2>/dev/null || case $m in
            *pclmul*) ;;
            *) msg "insmod $m failed" ;;
        esac
    done < /etc/modules
    t_mod=$(uptime_s)

    # cache=mmap (default; CLOOP_VM_9P_CACHE): mmapped pages (programs,
    # libraries) are cached while read() and metadata go to the host, so
    # the view follows a host tree that others keep rebuilding. Measured
    # under TCG: exec-heavy work is as fast as with cache=loose, bulk reads
    # are 5-8x faster (loose reads page by page), cache=none starts a Qt
    # program about 1.5x slower. msize 512000 is the transport's maximum
    # (default 128 KiB); it made no measurable difference.
    mount -t 9p -o "trans=virtio,version=9p2000.L,ro,msize=512000,cache=$ROOT_CACHE" hostroot /lower \
        || fail "cannot mount the host root (9p tag hostroot)"
    mount -t tmpfs -o mode=0755 upper /upper || fail "tmpfs"
    mkdir /upper/data /upper/work
    mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work root /newroot \
        || fail "cannot mount the overlay root"
    t_root=$(uptime_s)

    # Nodes whose first open loads their module (net/tun, fuse, loop-control,
    # uinput, ...), as systemd-tmpfiles would create them from modules.devname.
    while read -r mod name node; do
        case $mod in ''|'#'*) continue ;; esac
        [ -e "/dev/$name" ] && continue
        case $name in */*) mkdir -p "/dev/${name%/*}" ;; esac
        majmin=${node#?}
        mknod -m 0600 "/dev/$name" "${node%"$majmin"}" "${majmin%:*}" "${majmin#*:}"
    done < "/lower$KTREE/lib/modules/$KREL/modules.devname"

    # Host runtime state (sockets, pid files, podman's state) and the host's
    # container storage would mislead programs in the guest.
    mkdir -p /newroot/run /newroot/var/lib/containers
    mount -t tmpfs -o mode=0755,nosuid,nodev run /newroot/run
    mount -t tmpfs -o mode=0700 containers /newroot/var/lib/containers
    if [ -d /newroot/var/run ] && [ ! -L /newroot/var/run ]; then
        mount --bind /newroot/run /newroot/var/run
    fi
    mkdir -p /newroot/run/lock /newroot/run/cloop-vm

    i=0
    while [ "$(usb_devices)" -lt "$USB_DEVICES" ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ "$(usb_devices)" -ge "$USB_DEVICES" ] || msg "only $(usb_devices) of $USB_DEVICES USB devices enumerated"
    msg "guest uptime: init ${t_init}s, modules ${t_mod}s, root ${t_root}s, USB $(uptime_s)s"

    for d in proc sys dev; do
        mkdir -p "/newroot/$d"
        mount --move "/$d" "/newroot/$d"
    done
    mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/dev/mqueue
    mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
    mount -t tmpfs -o mode=1777,nosuid,nodev shm /newroot/dev/shm
    mount -t mqueue mqueue /newroot/dev/mqueue 2>/dev/null
    mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup || msg "cannot mount cgroup2"

    mkdir -p /newroot/share
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share /newroot/share \
        || fail "cannot mount the share (9p tag share)"

    # The guest kernel's whole module tree, for modprobe and autoloading;
    # taken from /lower since the cache may live under a masked folder.
    mkdir -p "/newroot/lib/modules/$KREL"
    mount --bind "/lower$KTREE/lib/modules/$KREL" "/newroot/lib/modules/$KREL" \
        || msg "cannot bind the module tree"

    ip link set lo up
    hostname cloop-vm

    cp /bin/busybox /newroot/run/cloop-vm/busybox
    cp /init /newroot/run/cloop-vm/init
    if [ "$INIT_SYSTEM" = systemd ]; then
        # The guest script as a oneshot unit of a target of its own: the
        # host's enabled services (multi-user.target) stay off.
        mkdir -p /newroot/etc/systemd/system
        cat > /newroot/etc/systemd/system/cloop-vm.target <<'UNIT'
[Unit]
Description=cloop VM test
Requires=basic.target cloop-vm-test.service
After=basic.target cloop-vm-test.service
AllowIsolate=yes
UNIT
        cat > /newroot/etc/systemd/system/cloop-vm-test.service <<'UNIT'
[Unit]
Description=cloop VM guest script
After=basic.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
ExecStart=/run/cloop-vm/busybox sh /run/cloop-vm/init script
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
UNIT
        rm -f /newroot/etc/machine-id
        tr -d - < /newroot/proc/sys/kernel/random/uuid > /newroot/etc/machine-id
        exec switch_root /newroot /lib/systemd/systemd --unit=cloop-vm.target \
            --log-target=console --show-status=false
    fi
    # switch_root rather than chroot: the overlay then is the real root
    # mount, so mountinfo and mount propagation on / look as on a normal
    # system, and the initramfs memory is freed. (runc and module
    # autoloading were also seen to work under a plain chroot.)
    exec switch_root /newroot "$BB" sh /run/cloop-vm/init stage2
    fail "switch_root failed"
fi

cd /
# The guest script, timed, its status in the share. PID 1 in stage 2 has no
# busybox applet links; the script gets the host's tools through PATH.
uptime_s > /share/.cloop-vm/t-script-start
# A program of the guest that crashes leaves its core in the share, where
# the host reads its backtrace after the guest is gone.
mkdir -p /share/.cloop-vm/cores
echo '/share/.cloop-vm/cores/core.%e.%p' > /proc/sys/kernel/core_pattern
(
    ulimit -c unlimited
    . /share/.cloop-vm/argv
    [ -x "$1" ] || set -- /bin/sh "$@"
    exec "$BB" env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8 \
        CLOOP_VM=1 CLOOP_VM_SHARE=/share "$@"
) < /dev/null
status=$?
uptime_s > /share/.cloop-vm/t-script-end
echo "$status" > /share/exit-status
# Under systemd this is the guest script's unit: it succeeds whatever the
# script said, and the unit's action powers the guest off.
[ "$1" = script ] && exit 0
halt
EOF
chmod 0755 "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$work/initrd.gz"
t_initrd=$(secs "$t0" "$(now)")

# ---------------------------------------------------------------- run
mkdir -p "$share/.cloop-vm"
rm -rf "$share/exit-status" "$share/.cloop-vm/t-script-start" "$share/.cloop-vm/t-script-end" \
    "$share/.cloop-vm/cores"
# Script and arguments go through a file: the kernel command line would mangle
# spaces and quotes and is limited in length.
{
    printf 'set --'
    for a in "$script" "$@"; do printf ' %s' "$(q "$a")"; done
    printf '\n'
} > "$share/.cloop-vm/argv"

printf 'USBIPDISKMAGIC01' > "$work/disk.img"
truncate -s 16M "$work/disk.img"

console=$work/console.log
: > "$console"
t0=$(now)
# -nodefaults: no default NIC, so the guest has no network but loopback.
timeout -k 10 "$timeout_s" qemu-system-x86_64 \
    -accel tcg -cpu max -m "$mem" -smp "$smp" \
    -nodefaults -no-user-config -display none -no-reboot \
    -pidfile "$work/qemu.pid" \
    -chardev file,id=con,path="$console" -serial chardev:con \
    -kernel "$vmlinux" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
    -device qemu-xhci,id=xhci \
    -device usb-kbd,bus=xhci.0 \
    -drive if=none,id=usbdisk,file="$work/disk.img",format=raw \
    -device usb-storage,bus=xhci.0,drive=usbdisk \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$share",mount_tag=share,security_model=none,multidevs=remap \
    </dev/null >"$work/qemu.out" 2>&1 &
runner_pid=$!
if [ $quiet = 0 ]; then
    tail -n +1 -f --pid="$runner_pid" "$console" | tr -d '\r' &
    tail_pid=$!
fi
qemu_rc=0
wait "$runner_pid" || qemu_rc=$?
runner_pid=''
[ -z "$tail_pid" ] || wait "$tail_pid" || true
tail_pid=''
t_qemu=$(secs "$t0" "$(now)")
tr -d '\r' < "$console" > "$share/console.log"

status=125
if [ -s "$share/exit-status" ]; then
    status=$(tr -dc 0-9 < "$share/exit-status")
    [ -n "$status" ] || status=125
elif [ $qemu_rc = 124 ]; then
    note "the guest timed out after ${timeout_s}s"
    status=124
else
    note "the guest did not finish (qemu exit status $qemu_rc)"
fi
if [ -s "$work/qemu.out" ]; then
    note "qemu said:"
    sed 's/^/  /' "$work/qemu.out" >&2
fi
if [ $quiet = 1 ] && [ "$status" != 0 ]; then
    cat "$share/console.log"
fi
# The guest runs this machine's binaries, so their cores read here.
for core in "$share"/.cloop-vm/cores/core.*; do
    [ -e "$core" ] || continue
    program=$(file -b "$core" | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p")
    note "a guest program dumped core: $core (${program:-unknown program})"
    # A program only the guest had (it installed a package) is this host's
    # build of the same source.
    if [ -n "$program" ] && [ ! -x "$program" ] && [ -n "${CLOOP_VM_CORE_BINARIES:-}" ] \
        && [ -x "$CLOOP_VM_CORE_BINARIES/${program##*/}" ]; then
        program=$CLOOP_VM_CORE_BINARIES/${program##*/}
    fi
    if [ -n "$program" ] && [ -x "$program" ] && command -v gdb >/dev/null; then
        gdb -q -batch -ex 'thread apply all bt' "$program" "$core" 2>&1 | sed 's/^/  /' >&2
    fi
    # A crash of one of ours fails the run even when the script got past it.
    case ${program##*/} in cloop*) [ "$status" != 0 ] || status=125 ;; esac
done

boot='?'; run='?'
if [ -s "$share/.cloop-vm/t-script-start" ]; then
    boot=$(cat "$share/.cloop-vm/t-script-start")
    boot=$(secs 0 "$boot")
    if [ -s "$share/.cloop-vm/t-script-end" ]; then
        run=$(secs "$(cat "$share/.cloop-vm/t-script-start")" "$(cat "$share/.cloop-vm/t-script-end")")
    fi
fi
note "kernel $krel: $kernel_state (${t_kernel}s); initramfs ${t_initrd}s ($(wc -l < "$ir/etc/modules") modules, $(( $(stat -c %s "$work/initrd.gz") / 1024 )) KiB)"
note "guest: boot-to-script ${boot}s (guest uptime), script ${run}s; qemu ${t_qemu}s; total $(secs "$t_start" "$(now)")s"
note "exit status: $status"
[ $own_share = 1 ] || note "console saved to $share/console.log"
exit "$status"
