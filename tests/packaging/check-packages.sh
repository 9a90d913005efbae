#!/usr/bin/env bash
# The Debian packages as an operator gets them: built by CPack from this
# build, checked by lintian (no error, no warning), their maintainer scripts and units
# read, and each unit's exposure scored by systemd against the threshold it
# is held to.
#
#   check-packages.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 \
    || { cat "$work/cpack.log" >&2; exit 1; }
mapfile -t debs < <(ls "$work"/out/*.deb)
names=()
for deb in "${debs[@]}"; do names+=("$(dpkg-deb -f "$deb" Package)"); done
expected="cloop cloop-agent cloop-dashboard cloop-forward cloop-hub"
got=$(printf '%s\n' "${names[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
[[ $got == "$expected" ]] || fail "packages are \"$got\", not \"$expected\""

echo "== lintian"
if ! lintian --fail-on error,warning "${debs[@]}" >"$work/lintian.log" 2>&1; then
    fail "lintian reports errors or warnings"
fi
grep -E '^[EW]:' "$work/lintian.log" || true

root=$work/root
mkdir -p "$root"
for deb in "${debs[@]}"; do
    package=$(dpkg-deb -f "$deb" Package)
    depends=$(dpkg-deb -f "$deb" Depends)
    # Dependencies come from the linked libraries.
    [[ $depends == *libqt6core6* && $depends == *libc6* ]] \
        || fail "$package: Depends does not name its libraries: $depends"
    dpkg-deb -x "$deb" "$root"
    control=$work/control/$package
    mkdir -p "$control"
    dpkg-deb -e "$deb" "$control"
    for script in postinst prerm postrm; do
        [[ -f $control/$script ]] || continue
        [[ -x $control/$script ]] || fail "$package: $script is not executable"
        sh -n "$control/$script" || fail "$package: $script is not valid sh"
        # Removing or purging never deletes data or the users that own it.
        if grep -vE '^[[:space:]]*#' "$control/$script" \
            | grep -E '(^|[;&|[:space:]])(rm|rmdir|deluser|delgroup|userdel|groupdel)([[:space:]]|$)'; then
            fail "$package: $script deletes data or users"
        fi
    done
    [[ -f $root/usr/share/doc/$package/copyright ]] || fail "$package: no copyright file"
    # Each program's manual page, in the section of what it is, with the
    # package's version in its header.
    case $package in
        cloop | cloop-dashboard) manual=usr/share/man/man1/$package.1.gz ;;
        *) manual=usr/share/man/man8/$package.8.gz ;;
    esac
    contents=$(dpkg-deb -c "$deb")
    grep -q "\./$manual\$" <<<"$contents" || fail "$package: no manual page $manual"
    header=$(zcat "$root/$manual" 2>/dev/null | grep '^\.TH ' || true)
    [[ $header == *"\"cloop $(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//')\""* ]] \
        || fail "$package: $manual does not carry the package's version"
done

# The command line's completion for bash and zsh, where each shell looks,
# naming the commands the program has.
cli_root=$root
for completion in usr/share/bash-completion/completions/cloop usr/share/zsh/vendor-completions/_cloop; do
    [[ -f $cli_root/$completion ]] || { fail "cloop: no $completion"; continue; }
    grep -q "complete -o default -F _cloop cloop" "$cli_root/$completion" \
        || fail "cloop: $completion does not complete cloop"
    grep -q "\[forward\]='enroll list test" "$cli_root/$completion" \
        || fail "cloop: $completion does not know cloop forward's commands"
    grep -qE "\[forward\]='[^']*\breenroll\b" "$cli_root/$completion" \
        || fail "cloop: $completion does not know cloop forward reenroll"
done

for unit_package in cloop-hub cloop-forward cloop-agent; do
    grep -q adduser "$work/control/$unit_package/postinst" 2>/dev/null \
        || [[ $unit_package == cloop-forward ]] || fail "$unit_package: postinst makes no user"
done
grep -q 'passwd cloop ' "$work/control/cloop-hub/postinst" || fail "cloop-hub: does not make user cloop"
grep -q 'passwd cloop-run ' "$work/control/cloop-agent/postinst" \
    || fail "cloop-agent: does not make user cloop-run"

echo "== units"
# unit, the most exposure allowed, what its ExecStart runs
while read -r unit limit binary; do
    file=$root/lib/systemd/system/$unit
    [[ -f $file ]] || { fail "$unit is not in its package"; continue; }
    [[ -x $root$binary ]] || fail "$unit runs $binary, which no package installs"
    grep -E '^ExecStart=' "$file" | grep -qE -- '--bundle|cloop(fwd|exe)1\.' \
        && fail "$unit puts a bundle on a command line"
    score=$(systemd-analyze security --offline=yes --root="$root" "$unit" 2>&1 \
        | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
    echo "$unit: exposure $score (at most $limit)"
    [[ -n $score ]] || { fail "$unit: systemd-analyze gave no score"; continue; }
    awk -v s="${score% *}" -v l="$limit" 'BEGIN { exit !(s <= l) }' \
        || fail "$unit: exposure $score is above $limit"
done <<'UNITS'
cloop-hub.service 2.0 /usr/bin/cloop-hub
cloop-forward.service 3.0 /usr/bin/cloop-forward
cloop-agent.service 7.5 /usr/bin/cloop-agent
UNITS
# The hub's own user and no capability at all.
hub_unit=$root/lib/systemd/system/cloop-hub.service
grep -qx 'User=cloop' "$hub_unit" || fail "cloop-hub.service does not run as cloop"
grep -qx 'CapabilityBoundingSet=' "$hub_unit" || fail "cloop-hub.service keeps capabilities"
grep -qx 'CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN' \
    "$root/lib/systemd/system/cloop-forward.service" \
    || fail "cloop-forward.service keeps more than CAP_NET_RAW and CAP_NET_ADMIN"

echo "== desktop"
desktop=$root/usr/share/applications/cloop-dashboard.desktop
[[ -f $desktop ]] || fail "no desktop entry"
grep -qx 'Exec=cloop-dashboard' "$desktop" || fail "the desktop entry runs something else"
[[ -f $root/usr/share/icons/hicolor/scalable/apps/cloop-dashboard.svg ]] || fail "no icon"

if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "packages: ${#debs[@]} built, lintian has no error and no warning, every unit within its exposure"
