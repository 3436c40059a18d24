#!/usr/bin/env bash
# Builds flanneld, Flannel's node daemon, for cnperf's local cluster
# (`cnperf cluster up --cni flannel-vxlan|flannel-host-gw`) with `go build`
# from the Go module proxy at a pinned release (wrapper module in flannel/,
# which says what it changes), into a cache folder keyed by version, as
# scripts/kube-build.sh does for Kubernetes. A binary already in the cache
# is not rebuilt.
#
#   scripts/flannel-build.sh              build flanneld if missing
#   scripts/flannel-build.sh --dir        prints the cache folder, builds nothing
#   scripts/flannel-build.sh --missing    prints "flanneld" when it is not built yet
#
# Environment: CNPERF_CACHE (default /var/cache/cnperf): flanneld lands in
# $CNPERF_CACHE/flannel-<version>/. CNPERF_BUILD_P: packages built in
# parallel (default 1: the machine is shared; scripts/test.sh gives it the
# number of CPUs, at idle priority). Prints the cache folder on the last line.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
version=$(awk '$1 == "github.com/flannel-io/flannel" {print $2}' "$here/flannel/go.mod") # kubelocal.FlannelVersion
[[ -n $version ]] || { echo "flannel-build: no github.com/flannel-io/flannel line in flannel/go.mod" >&2; exit 1; }
out="${CNPERF_CACHE:-/var/cache/cnperf}/flannel-$version"
case ${1:-} in
--dir) echo "$out"; exit 0 ;;
--missing) [[ -x "$out/flanneld" ]] || echo flanneld; exit 0 ;;
"") ;;
*) echo "flannel-build: unknown argument $1 (want --dir, --missing or nothing)" >&2; exit 1 ;;
esac
if [[ -x "$out/flanneld" ]]; then
  echo "flannel-build: flanneld $version cached" >&2
  echo "$out"
  exit 0
fi
idle=()
if command -v chrt >/dev/null && chrt -i 0 true 2>/dev/null; then idle=(chrt -i 0); fi
mkdir -p "$out"
echo "flannel-build: building flanneld $version ..." >&2
start=$(date +%s)
# cgo on: the udp backend's amd64 proxy is C (flannel's Makefile builds so);
# idle priority, one package at a time by default: others measure on this machine
p=${CNPERF_BUILD_P:-1}
(cd "$here/flannel" && CGO_ENABLED=1 GOMAXPROCS=$p "${idle[@]}" nice -n 19 \
  go build -p "$p" -trimpath -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$version" \
  -o "$out/.flanneld.tmp" github.com/flannel-io/flannel)
mv "$out/.flanneld.tmp" "$out/flanneld"
echo "flannel-build: flanneld built in $(($(date +%s) - start)) s" >&2
echo "$out"
