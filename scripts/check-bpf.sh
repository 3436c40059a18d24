#!/bin/sh
# check-bpf.sh: regenerate every bpf2go object in the module and fail if any
# differs from the committed one, so the committed .o files are exactly what
# their C sources compile to. Needs clang and the libbpf headers
# (apt-get install clang llvm libbpf-dev); `go build` itself needs neither.
set -eu
cd "$(dirname "$0")/.."
command -v clang >/dev/null || { echo "check-bpf: needs clang to regenerate BPF objects; install it (apt-get install clang llvm libbpf-dev)" >&2; exit 1; }
[ -f /usr/include/bpf/bpf_helpers.h ] || { echo "check-bpf: needs the libbpf headers; install them (apt-get install libbpf-dev)" >&2; exit 1; }
pkgs=$(grep -rl --include='*.go' '^//go:generate .*bpf2go' . | xargs -n1 dirname | sort -u)
[ -n "$pkgs" ] || { echo "check-bpf: no bpf2go packages found" >&2; exit 1; }
status=0
for d in $pkgs; do
	echo "check-bpf: regenerating $d"
	(cd "$d" && go generate ./) || { echo "check-bpf: go generate failed in $d" >&2; status=1; continue; }
	changed=$(git status --porcelain --untracked-files=all -- "$d" | grep -E '_bpf(el|eb)\.(go|o)$' || true)
	if [ -n "$changed" ]; then
		echo "check-bpf: generated files in $d differ from the committed ones (or are not committed):" >&2
		echo "$changed" >&2
		status=1
	fi
done
[ $status -eq 0 ] && echo "check-bpf: all bpf2go objects match their sources"
exit $status
