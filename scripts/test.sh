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
go test -race -count=1 -timeout 30m ./...
# the timing assertions the race detector's slowdown voids, without it
go test -count=1 -timeout 10m ./internal/loadgen/ ./internal/workload/load/ ./internal/httpserver/
