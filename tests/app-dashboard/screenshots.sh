#!/usr/bin/env bash
# Saves a screenshot of every dashboard screen and dialog to docs/screenshots/,
# in the light and the dark palette: the window test clicks through a real
# hub under Xvfb (the xcb platform, as on a desktop) and grabs each screen.
#
#   tests/app-dashboard/screenshots.sh [BUILD_DIR, default build-full]
#
# Look at every picture after a change to the dashboard: cramped or
# unreadable screens are bugs.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-full}
[[ -x $build/bin/tst_dashboardwindow ]] || { echo "screenshots: build $build first (tst_dashboardwindow)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "screenshots: xvfb-run is missing (scripts/install-deps installs xvfb)" >&2; exit 1; }
out=docs/screenshots
mkdir -p "$out"
rm -f "$out"/*.png
for theme in "" dark; do
    CLOOP_SCREENSHOT_DIR=$PWD/$out CLOOP_SCREENSHOT_THEME=$theme CLOOP_BINARY_DIR=$PWD/$build/bin \
        QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" \
        "$build/bin/tst_dashboardwindow" -silent
done
echo "screenshots: $(ls "$out"/*.png | wc -l) pictures in $out"
