#!/usr/bin/env bash
# Sets up what is missing, builds cnperf and runs the default comparison on
# the local lab. Extra arguments go to `cnperf run`.
set -euo pipefail
# not root: re-run under sudo where there is one (the lab needs root)
if [ "$(id -u)" != 0 ] && [ -z "${CNPERF_NO_SUDO:-}" ] && command -v sudo >/dev/null; then
	exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run.sh: the lab creates network namespaces; run it as root (sudo $0)" >&2; exit 1; }
./scripts/install-deps.sh
export PATH=$PATH:/usr/local/go/bin
mkdir -p bin
go build -o bin/cnperf ./cmd/cnperf
exec ./bin/cnperf run "$@"
