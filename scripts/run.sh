#!/usr/bin/env bash
# Sets up what is missing, builds cnperf and runs the default comparison on
# the local lab. Extra arguments go to `cnperf run`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run.sh: the lab creates network namespaces; run it as root (sudo $0)" >&2; exit 1; }
./scripts/install-deps.sh
export PATH=$PATH:/usr/local/go/bin
mkdir -p bin
go build -o bin/cnperf ./cmd/cnperf
exec ./bin/cnperf run "$@"
