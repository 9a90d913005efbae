#!/bin/bash
# The manual pages of resources/man against the programs of BIN_DIR: groff
# reads each without a warning, and each page names every option its
# program's --help lists (and the umbrella's page every command), so a page
# cannot fall behind its program.
#
#   check-manpages.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$(realpath "$1")
pages=$(realpath "$2")/resources/man
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# A page as plain text: roff's escaped hyphens and font changes undone.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g' "$1"; }
# The long options of a --help text, but for the ones every program has.
options_of() {
    grep -oE '^ +(-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*' |
        grep -vxE -- '--help|--help-all|--version' | sort -u
}

# check PAGE HELP_COMMAND...: every option of that help is on the page.
check() {
    local page=$1
    shift
    local help text missing=()
    text=$(plain "$pages/$page")
    help=$(env -u DISPLAY -u WAYLAND_DISPLAY "$@" --help 2>&1) || { fail "$* --help failed: $help"; return; }
    while read -r option; do
        [[ -n $option ]] || continue
        grep -qE -- "(^|[^a-z-])$option([^a-z-]|$)" <<<"$text" || missing+=("$option")
    done < <(options_of <<<"$help")
    ((${#missing[@]} == 0)) || fail "$page does not name ${missing[*]} of '$*'"
}

for page in "$pages"/*.[18]; do
    warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1 || true)
    [[ -z $warnings ]] || fail "groff warns on $(basename "$page"): $warnings"
    grep -q '^\.SH NAME' "$page" && grep -q '^\.SH SYNOPSIS' "$page" \
        || fail "$(basename "$page") lacks NAME or SYNOPSIS"
done

for command in serve tls-init pin backup restore key "release add" "release list"; do
    read -ra words <<<"$command"
    check cloop-hub.8 "$bin/cloop-hub" "${words[@]}"
done
for program in forward agent; do
    check "cloop-$program.8" "$bin/cloop-$program"
    for command in install uninstall repin "install --upgrade"; do
        read -ra words <<<"$command"
        check "cloop-$program.8" "$bin/cloop-$program" "${words[@]}"
    done
done
check cloop-dashboard.1 "$bin/cloop-dashboard"

# The umbrella's page names each command its help lists ("hub serve",
# "forward bind", "audit" …).
missing=()
text=$(plain "$pages/cloop.1")
while read -r command; do
    grep -qF -- "$command" <<<"$text" || missing+=("$command")
done < <("$bin/cloop" --help | sed -nE 's/^  ([a-z]+( [a-z][a-z-]+)?)( .*|$)/\1/p' | sort -u)
((${#missing[@]} == 0)) || fail "cloop.1 does not name: ${missing[*]}"

if ((failures)); then
    echo "manual pages: $failures failure(s)" >&2
    exit 1
fi
echo "manual pages: $(ls "$pages" | wc -l) pages, every option and command named, groff silent"
