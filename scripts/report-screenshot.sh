#!/usr/bin/env bash
# Renders a run file's HTML report and screenshots it in headless Chromium
# (networking off), as the README's images were made:
#   scripts/report-screenshot.sh docs/examples/default.json docs/img/report-default.png
set -euo pipefail
run=${1:?usage: $0 RUN.json OUT.png [HEIGHT [WIDTH]]}
out=${2:?usage: $0 RUN.json OUT.png [HEIGHT [WIDTH]]}
height=${3:-1800}
width=${4:-1366}
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/cnperf report "$run" --html "$tmp/report.html" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$tmp/profile" --host-resolver-rules='MAP * ~NOTFOUND' --proxy-server=127.0.0.1:9 \
  --window-size="$width","$height" --virtual-time-budget=10000 --screenshot="$out" "file://$tmp/report.html" 2>/dev/null
echo "wrote $out"
