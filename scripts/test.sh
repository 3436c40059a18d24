#!/usr/bin/env bash
# Sets up what is missing and runs every test: formatting, vet, generated
# eBPF objects, unit tests and (as root) the lab's integration tests.
set -euo pipefail
# not root: re-run under sudo where there is one (the lab needs root)
if [ "$(id -u)" != 0 ] && [ -z "${CNPERF_NO_SUDO:-}" ] && command -v sudo >/dev/null; then
	exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || echo "test.sh: not root: the lab's integration tests will be skipped" >&2
./scripts/install-deps.sh
export PATH=$PATH:/usr/local/go/bin
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
if [ -x scripts/check-bpf.sh ]; then
  ./scripts/check-bpf.sh
fi
# The host namespace is snapshotted before the tests and compared after:
# they must leave it as it was (internal/hostsnap; docker's own objects
# and self-moving values are left out).
snapdir=$(mktemp -d "${TMPDIR:-/tmp}/cnperf-hostsnap.XXXXXX")
trap 'rm -rf "$snapdir"' EXIT
if [ "$(id -u)" = 0 ]; then
  go build -o "$snapdir/hostsnap" ./internal/hostsnap/cmd/hostsnap
  "$snapdir/hostsnap" save "$snapdir/before.json"
fi
# Every package, with the race detector. As root this includes the
# bad-input table (cmd/cnperf TestBadInput), the interrupt campaign
# (internal/campaign, 6 trials; -campaign.trials=50 by hand) and the soak
# (internal/soak, 2 minutes; -soak.duration=30m by hand).
go test -race -count=1 -timeout 30m ./...
# the timing assertions the race detector's slowdown voids, without it
go test -count=1 -timeout 10m ./internal/loadgen/ ./internal/workload/load/ ./internal/httpserver/
# A short fuzz of every target (their seed corpora in testdata/fuzz run in
# the go test above): 5 s each.
for target in cmd/cnperf:FuzzRunFlags cmd/cnperf:FuzzModeOpt cmd/cnperf:FuzzReport internal/workload/load:FuzzRateSizeLists; do
  go test -run='^$' -fuzz="^${target#*:}\$" -fuzztime=5s "./${target%%:*}"
done
if [ "$(id -u)" = 0 ]; then
  "$snapdir/hostsnap" compare "$snapdir/before.json"
fi
