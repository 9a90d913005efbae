#!/bin/bash
# Inside the QEMU guest of usb-vm.sh, against the real kernel's usbip-host
# and vhci_hcd: the real hub, forwarders and agent of BIN_DIR lend the
# emulated USB devices to a podman sandbox.
#
#   guest-cloop-usb.sh BIN_DIR
#
# CLOOP_FORWARDER_USB_BUSID (default 1-1) names the device to forward; the
# emulated usb-storage disk (2-2) is forwarded beside it when it is another
# one, so bulk data crosses the chain too. A device that is itself imported
# over USB/IP is skipped. Checks, in order:
#   - Test reads the device list the forwarder exports;
#   - a run of the bound project gets exactly the devices' nodes, and reads
#     their descriptors inside the sandbox; no driver of the agent's machine
#     takes the imported devices; the disk's first sector, read with bulk
#     transfers through its node alone, is the disk's;
#   - on the forwarder's side each device is bound to usbip-host while lent;
#   - a forwarder restarted while the run holds its device (as an upgrade
#     restarts it): the sandbox loses the node at once, and gets the
#     device back under the number the kernel gives it then, its
#     descriptor read there inside the sandbox;
#   - when the run ends every vhci port this test took is free again, each
#     device is back on its own drivers (the disk readable there again),
#     and no port the test did not take was touched.
set -euo pipefail

bin=$(realpath "${1:?usage: guest-cloop-usb.sh BIN_DIR}")
busid=${CLOOP_FORWARDER_USB_BUSID:-1-1}
disk_busid=2-2
magic=USBIPDISKMAGIC01
work=$(mktemp -d /tmp/cloop-vm-usb.XXXXXX)
pids=()

result() { echo "RESULT: $*"; }
fail() {
    result "FAIL $*"
    for log in "$work"/*.log; do
        echo "----- $(basename "$log")"
        tail -n 40 "$log"
    done
    exit 1
}
cleanup() {
    local pid _
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # Bounded: a daemon that does not stop within 15 s is killed, so the
    # guest always powers off.
    for _ in $(seq 75); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        ((alive)) || break
        sleep 0.2
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# wait_for SECONDS COMMAND...: until the command succeeds.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}

device_dir() { echo "/sys/bus/usb/devices/$1"; }
driver_of() { local link=$1/driver; [[ -L $link ]] && basename "$(readlink -f "$link")" || echo none; }
imported() { readlink -f "$(device_dir "$1")" | grep -q '/devices/platform/vhci_hcd\.'; }
# "hs 0000 006 …" lines of every vhci port that is not free.
used_ports() { awk '$1 ~ /^(hs|ss)$/ && $3 != "004" { print $2 }' /sys/devices/platform/vhci_hcd.0/status* | sort; }
# The block device whose path runs through (or not through) vhci_hcd.
disk_on() {
    local want=$1 block
    for block in /sys/block/sd*; do
        [[ -e $block ]] || continue
        if readlink -f "$block" | grep -q vhci_hcd; then
            [[ $want == vhci ]] && basename "$block"
        else
            [[ $want == local ]] && basename "$block"
        fi
    done
    return 0
}

[[ -e $(device_dir "$busid") ]] || fail "no USB device $busid in this guest"
if imported "$busid"; then
    result "SKIP $busid is itself imported over USB/IP; it is never forwarded"
    exit 0
fi
devices=("$busid")
if [[ $disk_busid != "$busid" && -e $(device_dir "$disk_busid") ]] && ! imported "$disk_busid"; then
    devices+=("$disk_busid")
fi
declare -A original_driver ids
for id in "${devices[@]}"; do
    dir=$(device_dir "$id")
    ids[$id]=$(cat "$dir/idVendor"):$(cat "$dir/idProduct")
    for interface in "$dir/$id":*; do
        original_driver[$interface]=$(driver_of "$interface")
    done
done
ports_before=$(used_ports)
echo "forwarding $(for id in "${devices[@]}"; do printf '%s (%s) ' "$id" "${ids[$id]}"; done); vhci ports in use before: ${ports_before:-none}"

export CLOOP_HUB_DATA=$work/hub
export HOME=$work/admin
mkdir -p "$HOME"
cloop() { "$bin/cloop" "$@"; }

cloop hub tls-init >/dev/null
"$bin/cloop" hub serve --listen 127.0.0.1:0 >"$work/hub.log" 2>&1 &
pids+=($!)
wait_for 30 grep -q '"url": "wss://127.0.0.1:[1-9]' "$CLOOP_HUB_DATA/cli.json" 2>/dev/null || fail "the hub did not start"

project=/srv/projects/vm
cloop project add "$project" >/dev/null
forwarder_ids=()
declare -A forwarder_pid
for id in "${devices[@]}"; do
    name=vm-${id//[^0-9]/}
    bundle=$(cloop forward enroll --name "$name" --usb "${ids[$id]}" | grep -o 'cloopfwd1\.[A-Za-z0-9_-]*' | head -n1)
    forwarder_id=$(cloop forward list --json | grep -B3 "\"name\": \"$name\"" | grep -o '"id": [0-9]*' | grep -o '[0-9]*$' | head -n1)
    mkdir -p "$work/$name"
    HOME=$work/$name "$bin/cloop-forward" --bundle "$bundle" >"$work/$name.log" 2>&1 &
    pids+=($!)
    forwarder_pid[$id]=$!
    wait_for 60 grep -q "is present as $id" "$work/$name.log" || fail "forwarder $name did not find $id"
    forwarder_ids+=("$forwarder_id")
    # The Test reads the USB/IP device list through the hub, lending nothing.
    wait_for 30 sh -c "'$bin/cloop' forward test $forwarder_id >'$work/test-$name.txt' 2>&1" ||
        fail "the Test of $name failed: $(cat "$work/test-$name.txt")"
    grep -q "exports $id  ${ids[$id]}" "$work/test-$name.txt" || fail "the Test of $name: $(cat "$work/test-$name.txt")"
    [[ $(driver_of "$(device_dir "$id")") == usb ]] || fail "the Test lent $id to $(driver_of "$(device_dir "$id")")"
    cloop forward bind "$forwarder_id" --project "$project" --ttl 1h >/dev/null
done
echo "Test: $(grep exports "$work"/test-*.txt | sed 's/.*exports/exports/' | tr '\n' ';')"

# podman's first start in a fresh guest (storage set up under emulation) can
# outlast the agent's probe of it; warmed up, it answers in seconds.
timeout 120 podman info >/dev/null 2>&1 || true
executor_bundle=$(cloop executor enroll --name vm-agent --json | grep -o 'cloopexe1\.[A-Za-z0-9_-]*' | head -n1)
mkdir -p "$work/agent"
HOME=$work/agent "$bin/cloop-agent" --bundle "$executor_bundle" >"$work/agent.log" 2>&1 &
pids+=($!)
wait_for 120 grep -q "connected to the hub as executor" "$work/agent.log" || fail "the agent did not connect"
grep -q "usb: yes" "$work/agent.log" || fail "the agent cannot attach USB devices: $(grep -o 'usb: [^,]*' "$work/agent.log")"

# The workload: the nodes it was given, and each device's descriptor read
# through its node; then, whenever its nodes change, the new list and the
# descriptor read through each.
workload='nodes() { for n in /dev/bus/usb/*/*; do [ -c "$n" ] && printf "%s " "$n"; done; }
for n in $(nodes); do echo "node $n"; done
for entry in $(echo "$CLOOP_FORWARDED_DEVICES" | tr , " "); do
    n=${entry#*=usb:}
    echo "descriptor $n $(od -An -tx1 -N18 "$n" | tr -s " \n" " ")"
done
echo ready
last=$(nodes)
while sleep 0.2; do
    now=$(nodes)
    [ "$now" = "$last" ] && continue
    echo "nodes now: [$now]"
    for n in $now; do echo "descriptor-again $n $(od -An -tx1 -N18 "$n" | tr -s " \n" " ")"; done
    last=$now
done'
run_id=$(cloop run --project "$project" --no-wait -- sh -c "$workload")
wait_for 180 sh -c "'$bin/cloop' run logs $run_id | grep -q ready" ||
    fail "the run never got its devices: $(cloop run logs "$run_id"; cloop run show "$run_id")"
cloop run logs "$run_id" >"$work/run.txt"
cat "$work/run.txt"
[[ $(grep -c '^node ' "$work/run.txt") -eq ${#devices[@]} ]] || fail "the sandbox has other nodes than the forwarded devices"
for id in "${devices[@]}"; do
    vid=${ids[$id]%:*}
    pid=${ids[$id]#*:}
    # idVendor and idProduct, little-endian at bytes 8..11 of the descriptor.
    grep -q "descriptor .* 12 01 .* ${vid:2:2} ${vid:0:2} ${pid:2:2} ${pid:0:2} " "$work/run.txt" ||
        fail "no descriptor of ${ids[$id]} read in the sandbox"
    dir=$(device_dir "$id")
    [[ $(driver_of "$dir") == usbip-host && $(cat "$dir/usbip_status") == 2 ]] ||
        fail "$id is not lent to usbip-host on the forwarder's side ($(driver_of "$dir"))"
done
lent_ports=$(comm -13 <(echo "$ports_before") <(used_ports))
[[ $(echo "$lent_ports" | grep -c .) -eq ${#devices[@]} ]] || fail "vhci ports in use: $(used_ports | tr '\n' ' ')"
# The agent's machine keeps its own drivers off the imported devices: they
# are the sandbox's alone (no usbhid, no usb-storage, no sd disk here).
for imported_device in /sys/bus/usb/devices/*; do
    name=$(basename "$imported_device")
    [[ $name == *:* ]] && continue
    readlink -f "$imported_device" | grep -q '/devices/platform/vhci_hcd\.' || continue
    for interface in "$imported_device/$name":*; do
        [[ -e $interface ]] || continue
        [[ $(driver_of "$interface") == none ]] || fail "$(basename "$interface") was taken by $(driver_of "$interface") on the agent's machine"
        [[ $(cat "$interface/authorized") == 1 ]] || fail "$(basename "$interface") is not claimable"
    done
done
[[ -z $(disk_on vhci) ]] || fail "the agent's machine made a disk of the imported device: $(disk_on vhci)"
echo "no driver of the agent's machine took the imported devices"
if [[ ${#devices[@]} -gt 1 ]]; then
    # Bulk transfers through the node alone, as the sandbox's program would
    # make them: the disk's first sector, read through forwarder, hub and agent.
    disk_vid=${ids[$disk_busid]%:*}
    disk_node=$(grep "^descriptor .* ${disk_vid:2:2} ${disk_vid:0:2} " "$work/run.txt" | awk '{ print $2 }')
    sector=$(python3 "$(dirname "$(realpath "$0")")/usbfs-read-sector.py" "$disk_node") ||
        fail "the disk could not be read through $disk_node"
    [[ $sector == "$magic" ]] || fail "the disk read through the chain is not the disk: $sector"
    echo "the disk's first sector read through $disk_node (usbfs, bulk-only transport): $sector"
    # Forwarder and agent share this guest: the imported copy of the disk
    # (same vendor and product) must never be taken for the device itself.
    disk_log=$work/vm-${disk_busid//[^0-9]/}.log
    wait_for 10 grep -q "passed over USB device [0-9-]* (itself imported over USB/IP" "$disk_log" ||
        fail "the forwarder did not pass over the imported copy of the disk"
    grep -o "passed over USB device .*" "$disk_log" | head -n1
fi
result "PASS lent: ${#devices[@]} device(s) on vhci ports $(echo "$lent_ports" | tr '\n' ' ')"

# The first device's forwarder restarts while the run holds the device.
back_id=${devices[0]}
back_name=vm-${back_id//[^0-9]/}
back_vid=${ids[$back_id]%:*}
back_pid=${ids[$back_id]#*:}
old_node=$(grep "^descriptor .* ${back_vid:2:2} ${back_vid:0:2} ${back_pid:2:2} ${back_pid:0:2} " "$work/run.txt" | awk '{ print $2 }' | head -n1)
[[ -n $old_node ]] || fail "no node of $back_id in the run's log"
restarted_at=$SECONDS
kill -TERM "${forwarder_pid[$back_id]}"
wait "${forwarder_pid[$back_id]}" 2>/dev/null || true
wait_for 60 grep -q "lost fwd-$back_name" "$work/agent.log" || fail "the agent did not see $back_id go"
# shellcheck disable=SC2016
wait_for 30 sh -c "'$bin/cloop' run logs $run_id | grep '^nodes now: ' | tail -n1 | grep -vq '$old_node '" ||
    fail "the sandbox kept $old_node after its device went: $(cloop run logs "$run_id" | tail -n 5)"
echo "the sandbox lost $old_node with its forwarder"
HOME=$work/$back_name "$bin/cloop-forward" >>"$work/$back_name.log" 2>&1 &
pids+=($!)
wait_for 120 grep -q "has fwd-$back_name back as /dev/bus/usb/" "$work/agent.log" ||
    fail "the running sandbox did not get $back_id back: $(grep -h "fwd-$back_name" "$work"/*.log | tail -n 5)"
new_node=$(grep -o "has fwd-$back_name back as /dev/bus/usb/[0-9]*/[0-9]*" "$work/agent.log" | tail -n1 | awk '{ print $NF }')
wait_for 30 sh -c "'$bin/cloop' run logs $run_id | grep -q '^descriptor-again $new_node .* 12 01 .* ${back_vid:2:2} ${back_vid:0:2} ${back_pid:2:2} ${back_pid:0:2} '" ||
    fail "the sandbox could not read $back_id through $new_node: $(cloop run logs "$run_id" | tail -n 5)"
# A workload that kept the path it first had opens the same device there.
wait_for 30 sh -c "'$bin/cloop' run logs $run_id | grep -q '^descriptor-again $old_node .* 12 01 .* ${back_vid:2:2} ${back_vid:0:2} ${back_pid:2:2} ${back_pid:0:2} '" ||
    fail "the sandbox could not read $back_id through its first path $old_node: $(cloop run logs "$run_id" | tail -n 5)"
[[ $(cloop run show "$run_id" --json | grep -o '"state": "[a-z]*"') == '"state": "running"' ]] ||
    fail "the run did not go on: $(cloop run show "$run_id")"
dir=$(device_dir "$back_id")
[[ $(driver_of "$dir") == usbip-host ]] || fail "$back_id is not lent to usbip-host again ($(driver_of "$dir"))"
result "PASS given back: $back_id was $old_node, is $new_node in the running sandbox and still $old_node there, read through both $((SECONDS - restarted_at)) s after its forwarder stopped"

cloop run cancel "$run_id" >/dev/null
wait_for 30 sh -c "[ \"\$(awk '\$1 ~ /^(hs|ss)\$/ && \$3 != \"004\" { print \$2 }' /sys/devices/platform/vhci_hcd.0/status* | sort)\" = \"$ports_before\" ]" ||
    fail "vhci ports still in use after the run: $(used_ports | tr '\n' ' ') (before: ${ports_before:-none})"
for id in "${devices[@]}"; do
    dir=$(device_dir "$id")
    wait_for 30 sh -c "[ \"\$(basename \"\$(readlink -f $dir/driver)\")\" = usb ]" || fail "$id is not back on the usb driver"
    for interface in "$dir/$id":*; do
        wait_for 30 sh -c "[ \"\$(basename \"\$(readlink -f $interface/driver 2>/dev/null)\" 2>/dev/null)\" = \"${original_driver[$interface]}\" ]" ||
            fail "$(basename "$interface") is on $(driver_of "$interface"), not ${original_driver[$interface]}"
    done
done
if [[ ${#devices[@]} -gt 1 ]]; then
    wait_for 30 sh -c '[ -n "$(for b in /sys/block/sd*; do readlink -f $b | grep -qv vhci_hcd && echo y; done)" ]' ||
        fail "the disk did not come back on its own controller"
    local_disk=$(disk_on local | head -n1)
    [[ $(head -c 16 "/dev/$local_disk") == "$magic" ]] || fail "the disk given back does not read as before"
fi
if grep -q '"usb"' "$work/agent/.cloop/work/attachments.json" 2>/dev/null; then
    fail "the agent still records a USB attachment"
fi
grep -h "given back to its driver\|detached:" "$work"/*.log | sed 's/^[^ ]* [^ ]* //'
result "PASS detached: every port taken is free, ${devices[*]} back on their drivers, other ports untouched"
