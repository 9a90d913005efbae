#!/bin/bash
# Inside the QEMU guest of usb-vm.sh --systemd, with a real systemd as PID 1:
# the Debian packages in DEB_DIR installed as an operator installs them.
#
#   guest-packages.sh DEB_DIR
#
# Checks, in order:
#   - the packages install; cloop-hub.service starts by itself, as the user
#     cloop, and its live exposure (systemd-analyze security) is OK or better;
#   - a forwarder of a segment and an executor agent, enrolled on that hub,
#     are installed with their install commands and connect as their units;
#   - the forwarder bound to a project, a run of that project in a podman
#     sandbox of the agent's unit gets the segment as eth1: a DHCP lease
#     from the lab's dnsmasq, and ping both ways;
#   - `systemctl restart` of each unit keeps everything: both reconnect;
#   - remote upgrades of the agent: refused until its operator opts in, an
#     edge target refused on a stable device before any download, a package
#     whose signature does not match kept aside and never installed; N to
#     N+1 while a run streams (the run finishes, its log whole); a broken
#     N+2 rolled back to N+1 by itself, with the hub told why;
#   - the forwarder upgraded N to N+1 while a run holds its segment, which
#     comes back into the running sandbox;
#   - uninstall and package removal leave no cloop unit and no cloop
#     process, and keep the hub's data.
set -euo pipefail

debs=$(realpath "${1:?usage: guest-packages.sh DEB_DIR}")
hub_data=/var/lib/cloop
work=$(mktemp -d /tmp/cloop-vm-packages.XXXXXX)

result() { echo "RESULT: $*"; }
fail() {
    result "FAIL $*"
    for unit in cloop-hub cloop-forward cloop-agent cloop-agent-upgrade cloop-forward-upgrade; do
        echo "----- journal of $unit"
        journalctl -u "$unit" --no-pager -n 40 2>/dev/null || true
    done
    exit 1
}
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}
admin() { cloop "$@" --data "$hub_data"; }
json_connected() {
    admin "$1" list --json | python3 -c '
import json, sys
name = sys.argv[1]
items = json.load(sys.stdin)["items"]
sys.exit(0 if any(i.get("name") == name and i.get("connected") for i in items) else 1)' "$2"
}

# ---------------------------------------------------------------- install
ls "$debs"/*.deb >/dev/null || fail "no packages in $debs"
# A container host forbids package scripts to start services (policy-rc.d
# answering 101); the guest is a machine, whose packages start theirs. It
# goes from the guest's overlay only.
rm -f /usr/sbin/policy-rc.d
# man-db's trigger re-reads every manual page of the host's root through 9p
# after each dpkg call (about 150 s of the first under emulation); the guest
# checks the packages, not the manual index (the manual_pages test reads the
# pages themselves).
rm -f /var/lib/man-db/auto-update

dpkg -i "$debs"/*.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i"; }
result "PASS the five packages install"
wait_for 60 systemctl is-active --quiet cloop-hub || fail "cloop-hub.service did not start"
wait_for 30 test -s "$hub_data/cli.json" || fail "the hub wrote no cli.json"
owner=$(ps -o user= -p "$(systemctl show -p MainPID --value cloop-hub)")
[[ $owner == cloop ]] || fail "the hub runs as $owner, not cloop"
exposure=$(systemd-analyze security cloop-hub.service | sed -n 's/.*exposure level for [^:]*: \([0-9.]*\).*/\1/p')
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "the running hub's exposure is $exposure"
result "PASS cloop-hub.service started by itself as cloop, exposure $exposure"
cloop-hub pin --data "$hub_data" | grep -q '^sha256:' || fail "cloop-hub pin"
# The address its bundles tell daemons to dial, as an operator sets it in a
# drop-in (the guest's own host name resolves to nothing: it has no network).
mkdir -p /etc/systemd/system/cloop-hub.service.d
cat > /etc/systemd/system/cloop-hub.service.d/public-url.conf <<'UNIT'
[Service]
ExecStart=
ExecStart=/usr/bin/cloop-hub serve --data /var/lib/cloop --listen 0.0.0.0:7443 --public-url wss://127.0.0.1:7443
UNIT
systemctl daemon-reload
systemctl restart cloop-hub || fail "restarting the hub with its drop-in"
wait_for 60 systemctl is-active --quiet cloop-hub || fail "cloop-hub.service did not come back"
wait_for 60 sh -c "grep -q 127.0.0.1 $hub_data/cli.json" || fail "the hub did not take its drop-in"

# ---------------------------------------------------------------- daemons
# The lab: lab0 on this machine, its far end in a namespace with a DHCP
# server, as in the demonstration.
ip netns add cloop-lab
ip link add lab0 type veth peer name lab1 netns cloop-lab
ip link set lab0 up
ip -n cloop-lab link set lab1 up
ip -n cloop-lab addr add 10.77.0.1/24 dev lab1
ip netns exec cloop-lab dnsmasq --port=0 --interface=lab1 --bind-interfaces --no-resolv --no-hosts \
    --dhcp-range=10.77.0.50,10.77.0.99,255.255.255.0,1h --dhcp-authoritative --leasefile-ro \
    --pid-file="$work/dnsmasq.pid" || fail "the lab's dnsmasq did not start"
admin forward enroll --name seg --interface lab0 --json > "$work/forwarder.json"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bundle"])' "$work/forwarder.json" \
    > "$work/forwarder.bundle"
chmod 0600 "$work/forwarder.bundle"
cloop forward install --token-file "$work/forwarder.bundle" > "$work/forward-install.log" 2>&1 \
    || { cat "$work/forward-install.log"; fail "cloop forward install"; }
[[ ! -e $work/forwarder.bundle ]] || fail "install left the bundle where it was"
! ps -eo args | grep -q 'cloopfwd1\.' || fail "a bundle is on a command line"
wait_for 90 json_connected forward seg || fail "the forwarder's unit did not connect"
[[ ! -e /etc/cloop/forwarder.bundle ]] || fail "the forwarder kept its bundle after redeeming it"
result "PASS cloop forward install: the unit redeemed the bundle and connected"

admin executor enroll --name box --json > "$work/executor.json"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bundle"])' "$work/executor.json" \
    > "$work/agent.bundle"
chmod 0600 "$work/agent.bundle"
# podman's first start in a fresh guest (its storage set up under
# emulation) can outlast the agent's probe of it; warmed up, it answers in
# seconds.
timeout 180 podman info >/dev/null 2>&1 || true
cloop executor agent install --token-file "$work/agent.bundle" \
    > "$work/agent-install.log" 2>&1 || { cat "$work/agent-install.log"; fail "agent install"; }
wait_for 120 json_connected executor box || fail "the agent's unit did not connect"
result "PASS cloop executor agent install: the unit connected"

mkdir -p /srv/packaged
admin project add /srv/packaged >/dev/null || fail "project add"
forwarder_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["forwarder"]["id"])' "$work/forwarder.json")
admin forward bind "$forwarder_id" --project /srv/packaged --ttl 1h --target eth1 >/dev/null \
    || fail "forward bind"
# udhcpc hands the lease to a script, which sets the address. The workload
# pings the lab, then waits while the lab pings it back.
workload='
i=0; while [ ! -e /sys/class/net/eth1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
printf "#!/bin/sh\n[ \"\$1\" = bound ] && ip addr add \$ip/\$mask dev \$interface\nexit 0\n" > /tmp/lease
chmod +x /tmp/lease
udhcpc -i eth1 -n -q -t 20 -T 2 -s /tmp/lease >/dev/null 2>&1 || { echo "no DHCP lease"; exit 5; }
echo "leased $(ip -4 -o addr show eth1 | awk "{print \$4}")"
ping -c 2 -W 5 10.77.0.1 >/dev/null || { echo "the lab does not answer"; exit 6; }
echo "pinged the lab"
sleep 20'
run_id=$(cloop run --data "$hub_data" --project /srv/packaged --no-wait -- sh -c "$workload") || fail "the run was not queued"
# Until the workload has reached the lab, or said it cannot, or the run
# ended without getting that far.
reached_or_ended() {
    admin run logs "$run_id" 2>/dev/null | grep -q -e 'pinged the lab' -e 'no DHCP' -e 'does not answer' \
        || admin run show "$run_id" --json | grep -q '"finished": true'
}
wait_for 300 reached_or_ended || true
admin run logs "$run_id" | grep -q 'pinged the lab' \
    || fail "the sandboxed run did not reach the lab: $(admin run logs "$run_id"; admin run show "$run_id")"
lease=$(admin run logs "$run_id" | sed -n 's/^leased \([0-9.]*\)\/.*/\1/p')
ip netns exec cloop-lab ping -c 3 -W 5 "$lease" >/dev/null || fail "the lab cannot ping the run at $lease"
wait_for 120 sh -c "cloop run show $run_id --data $hub_data --json | grep -q '\"exit_code\": 0'" \
    || fail "the sandboxed run did not succeed: $(admin run logs "$run_id"; admin run show "$run_id")"
result "PASS a bound run in a podman sandbox of the agent's unit got the segment: lease $lease, ping both ways"

# ---------------------------------------------------------------- restarts
for unit in cloop-hub cloop-forward cloop-agent; do
    systemctl restart "$unit" || fail "systemctl restart $unit"
    wait_for 60 systemctl is-active --quiet "$unit" || fail "$unit is not active after its restart"
    wait_for 90 json_connected forward seg || fail "the forwarder is not back after restarting $unit"
    wait_for 90 json_connected executor box || fail "the agent is not back after restarting $unit"
done
result "PASS systemctl restart of each unit: both daemons came back"

# ---------------------------------------------------------------- upgrades
# The releases run-packages-vm.sh made: N (installed), N+1, and N+2 that
# starts and exits, signed with a throwaway key whose public half comes in
# cloop-release-keys.
up=/share/upgrade
# shellcheck disable=SC1091
source "$up/versions"
agent_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["executor"]["id"])' "$work/executor.json")
executor_field() {
    admin executor list --json | python3 -c '
import json, sys
for item in json.load(sys.stdin)["items"]:
    if item["id"] == int(sys.argv[1]):
        print(item.get(sys.argv[2]) if item.get(sys.argv[2]) is not None else "")' "$agent_id" "$1"
}
# The state and message of the device's last word in the audit log.
last_outcome() {
    admin audit --action executor.upgrade.outcome --json | python3 -c '
import json, sys
entries = json.load(sys.stdin)["items"]
print(len(entries), entries[-1]["details"].get("state", "") if entries else "", entries[-1]["details"].get("message", "") if entries else "")'
}
outcomes_reach() { [[ $(last_outcome | cut -d' ' -f1) -ge $1 ]]; }
on_version() { [[ $(executor_field version) == "$1" ]] && json_connected executor box; }
installed() { dpkg-query -W -f '${Version}' cloop-agent; }
elapsed_since() { awk -v s="$1" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }

dpkg -i "$up"/debs/cloop-release-keys_*_all.deb >"$work/keys.log" 2>&1 || { cat "$work/keys.log"; fail "cloop-release-keys"; }
for version in "$N" "$NEXT" "$BROKEN"; do
    cloop-hub release add "$up/debs/cloop-agent_${version}-1_amd64.deb" --data "$hub_data" \
        >>"$work/release.log" 2>&1 || { cat "$work/release.log"; fail "release add $version"; }
done
[[ $(executor_field offered_version) == "$BROKEN" ]] || fail "the hub does not show the skew: $(executor_field offered_version)"
[[ $(executor_field channel) == stable ]] || fail "the agent reports channel $(executor_field channel)"
result "PASS releases $N, $NEXT and $BROKEN offered; the agent runs $N and is shown $BROKEN offered"

if out=$(admin executor upgrade "$agent_id" --target "$NEXT" 2>&1); then
    fail "a device installed without --remote-upgrade took an upgrade: $out"
fi
grep -q -- '--remote-upgrade' <<<"$out" || fail "the refusal does not name --remote-upgrade: $out"
cloop executor agent install --upgrade --remote-upgrade >"$work/opt-in.log" 2>&1 \
    || { cat "$work/opt-in.log"; fail "install --upgrade --remote-upgrade"; }
systemctl is-enabled --quiet cloop-agent-upgrade.path || fail "the helper's path unit is not enabled"
wait_for 120 on_version "$N" || fail "the agent did not come back after opting in"
if out=$(admin executor upgrade "$agent_id" --target edge:6e750e9 2>&1); then
    fail "a stable device took an edge target: $out"
fi
grep -q 'does not follow the edge channel' <<<"$out" || fail "the edge refusal says: $out"
[[ -z $(ls -A /var/lib/cloop-agent/upgrade/staging 2>/dev/null) ]] || fail "something was fetched for an edge target"
result "PASS refused without --remote-upgrade, and an edge target on a stable device before any download"

# A hub whose copy of N+1 was changed after it was signed: the device
# fetches it, keeps it aside and installs nothing.
offered_copy=$(ls "$hub_data"/releases/cloop-agent_"${NEXT}"*.deb)
cp "$offered_copy" "$work/good.deb"
# One byte changed in the middle: the same size as listed, another digest.
size=$(stat -c %s "$offered_copy")
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xFF]))' \
    "$offered_copy" $((size / 2))
before=$(last_outcome | cut -d' ' -f1)
admin executor upgrade "$agent_id" --target "$NEXT" >/dev/null || fail "the agent did not take the upgrade request"
wait_for 300 outcomes_reach $((before + 1)) || fail "no outcome of the tampered upgrade"
[[ $(last_outcome | cut -d' ' -f2) == failed ]] || fail "a tampered package gave: $(last_outcome)"
[[ $(installed) == "${N}-1" ]] || fail "a tampered package was installed: $(installed)"
[[ -f /var/lib/cloop-agent/upgrade/rejected/cloop-agent_${NEXT}.deb ]] || fail "the tampered package was not kept aside"
cp "$work/good.deb" "$offered_copy"
wait_for 120 on_version "$N" || fail "the agent is not back on $N after the refused package"
result "PASS a package whose signature does not match is kept aside and never installed"

# N -> N+1 while a run streams its output.
streaming='i=1; while [ $i -le 12 ]; do echo "line $i"; i=$((i+1)); sleep 1; done'
run_id=$(cloop run --data "$hub_data" --project /srv/packaged --no-wait -- sh -c "$streaming") \
    || fail "the streaming run was not queued"
wait_for 300 sh -c "cloop run logs $run_id --data $hub_data | grep -q 'line 1'" || fail "the streaming run did not start"
before=$(last_outcome | cut -d' ' -f1)
started=$(date +%s.%N)
out=$(admin executor upgrade "$agent_id" --target "$NEXT" 2>&1) || fail "upgrade to $NEXT: $out"
grep -q 'finishes its 1 run' <<<"$out" || fail "the agent did not drain its run first: $out"
wait_for 600 on_version "$NEXT" || fail "the agent did not come back on $NEXT"
upgraded_in=$(elapsed_since "$started")
wait_for 120 outcomes_reach $((before + 1)) || fail "no outcome of the upgrade to $NEXT"
[[ $(last_outcome | cut -d' ' -f2) == upgraded ]] || fail "the upgrade to $NEXT gave: $(last_outcome)"
[[ $(installed) == "${NEXT}-1" ]] || fail "dpkg says $(installed) after the upgrade to $NEXT"
admin run show "$run_id" --json | grep -q '"exit_code": 0' || fail "the streaming run did not succeed: $(admin run show "$run_id")"
lines=$(admin run logs "$run_id" | grep -c '^line ')
[[ $lines -eq 12 ]] || fail "the streaming run's log has $lines of its 12 lines"
result "PASS upgraded $N -> $NEXT in ${upgraded_in} s from the command (after its run's remaining output); the streaming run finished with its whole log"

# N+1 -> N+2, which starts and exits: the helper rolls back by itself.
before=$(last_outcome | cut -d' ' -f1)
started=$(date +%s.%N)
admin executor upgrade "$agent_id" --target "$BROKEN" >/dev/null || fail "the upgrade to $BROKEN was refused"
wait_for 900 outcomes_reach $((before + 1)) || fail "no outcome of the upgrade to $BROKEN"
rolled_back_in=$(elapsed_since "$started")
outcome=$(last_outcome)
[[ $(cut -d' ' -f2 <<<"$outcome") == rolled_back ]] || fail "the broken upgrade gave: $outcome"
grep -q 'did not come back connected' <<<"$outcome" || fail "the hub is not told why: $outcome"
[[ $(installed) == "${NEXT}-1" ]] || fail "dpkg says $(installed) after the rollback"
wait_for 120 on_version "$NEXT" || fail "the agent is not back on $NEXT after the rollback"
result "PASS $BROKEN did not come back and was rolled back to $NEXT in ${rolled_back_in} s, and the hub says why"

# ---------------------------------------------------------------- forwarder upgrade
# N -> N+1 of the forwarder while a run holds its segment: the segment goes
# with the old forwarder and comes back into the running sandbox.
for version in "$N" "$NEXT"; do
    cloop-hub release add "$up/debs/cloop-forward_${version}-1_amd64.deb" --data "$hub_data" \
        >>"$work/release.log" 2>&1 || { cat "$work/release.log"; fail "release add cloop-forward $version"; }
done
forwarder_field() {
    admin forward list --json | python3 -c '
import json, sys
for item in json.load(sys.stdin)["items"]:
    if item["id"] == int(sys.argv[1]):
        print(item.get(sys.argv[2]) if item.get(sys.argv[2]) is not None else "")' "$forwarder_id" "$1"
}
forwarder_on() { [[ $(forwarder_field version) == "$1" ]] && json_connected forward seg; }
forwarder_outcome() {
    admin audit --action forwarder.upgrade.outcome --json | python3 -c '
import json, sys
entries = json.load(sys.stdin)["items"]
print(len(entries), entries[-1]["details"].get("state", "") if entries else "", entries[-1]["details"].get("message", "") if entries else "")'
}
[[ $(forwarder_field offered_version) == "$NEXT" ]] || fail "the hub does not offer the forwarder $NEXT: $(forwarder_field offered_version)"
cloop forward install --upgrade --remote-upgrade >"$work/forward-opt-in.log" 2>&1 \
    || { cat "$work/forward-opt-in.log"; fail "cloop forward install --upgrade --remote-upgrade"; }
systemctl is-enabled --quiet cloop-forward-upgrade.path || fail "the forwarder helper's path unit is not enabled"
wait_for 120 forwarder_on "$N" || fail "the forwarder did not come back after opting in"
# Says each time eth1 appears and goes, for as long as the run lives
# (bounded); the segment should stay through the forwarder's upgrade.
watching='s=down; t=0
while [ $t -lt 6000 ]; do
  if [ -e /sys/class/net/eth1 ]; then [ $s = up ] || { echo "eth1 attached"; s=up; }
  else [ $s = up ] && { echo "eth1 detached"; s=down; }; fi
  sleep 0.1; t=$((t+1))
done'
run_id=$(cloop run --data "$hub_data" --project /srv/packaged --no-wait -- sh -c "$watching") \
    || fail "the watching run was not queued"
wait_for 300 sh -c "cloop run logs $run_id --data $hub_data | grep -q 'eth1 attached'" \
    || fail "the watching run did not get the segment: $(admin run logs "$run_id"; admin run show "$run_id")"
started=$(date +%s.%N)
out=$(admin forward upgrade "$forwarder_id" --target "$NEXT" 2>&1) || fail "forwarder upgrade to $NEXT: $out"
wait_for 600 forwarder_on "$NEXT" || fail "the forwarder did not come back on $NEXT: $(forwarder_outcome)"
forwarder_upgraded_in=$(elapsed_since "$started")
# The hub joins the new forwarder's stream to the interface the sandbox kept.
wait_for 120 sh -c "cloop audit --data $hub_data --action run.device_reattach --json | grep -q '\"run:$run_id\"'" \
    || fail "the running sandbox's segment was not re-attached: $(admin audit --action run.device_reattach; admin run logs "$run_id")"
segment_back_in=$(elapsed_since "$started")
if admin run logs "$run_id" | grep -q 'eth1 detached'; then
    fail "the segment left the sandbox during the upgrade: $(admin run logs "$run_id")"
fi
[[ $(admin run logs "$run_id" | grep -c 'eth1 attached') == 1 ]] || fail "eth1 came and went: $(admin run logs "$run_id")"
[[ $(admin run show "$run_id" --json | grep -o '"state": "[a-z]*"') == '"state": "running"' ]] \
    || fail "the watching run did not go on: $(admin run show "$run_id")"
admin run cancel "$run_id" >/dev/null || fail "the watching run could not be cancelled"
forwarder_upgraded() { [[ $(forwarder_outcome | cut -d' ' -f2) == upgraded ]]; }
wait_for 120 forwarder_upgraded || fail "no upgraded outcome of the forwarder: $(forwarder_outcome)"
[[ $(dpkg-query -W -f '${Version}' cloop-forward) == "${NEXT}-1" ]] || fail "dpkg says cloop-forward $(dpkg-query -W -f '${Version}' cloop-forward)"
result "PASS forwarder upgraded $N -> $NEXT in ${forwarder_upgraded_in} s from the command; the running sandbox kept eth1, its stream re-joined ${segment_back_in} s after it"

# ---------------------------------------------------------------- removal
cloop forward uninstall >/dev/null || fail "cloop forward uninstall"
cloop executor agent uninstall >/dev/null || fail "cloop executor agent uninstall"
[[ -f /etc/cloop/forwarder.json && -f /etc/cloop/agent.json ]] || fail "uninstall dropped a credential"
dpkg -r cloop-dashboard cloop cloop-agent cloop-forward cloop-hub cloop-release-keys > "$work/remove.log" 2>&1 \
    || { cat "$work/remove.log"; fail "dpkg -r"; }
# The drop-in is the operator's own file, which no package removes.
rm -rf /etc/systemd/system/cloop-hub.service.d
systemctl daemon-reload
units=$(systemctl list-unit-files --no-legend 'cloop-*' | grep -v 'cloop-vm' || true)
[[ -z $units ]] || fail "unit files are left: $units"
running=$(systemctl list-units --no-legend --state=active,activating,failed 'cloop-*' \
    | grep -v 'cloop-vm' || true)
[[ -z $running ]] || fail "units are left: $running"
procs=$(pgrep -a -f '/usr/bin/cloop' || true)
[[ -z $procs ]] || fail "processes are left: $procs"
kill "$(cat "$work/dnsmasq.pid")" 2>/dev/null || true
ip netns delete cloop-lab
[[ -f $hub_data/hub.db ]] || fail "removing the hub deleted its database"
getent passwd cloop >/dev/null || fail "removing the hub deleted its user"
result "PASS uninstall and removal leave no unit and no process, and keep the data"
