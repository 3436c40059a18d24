#!/usr/bin/env bash
# Builds Cilium for cnperf's local cluster (`cnperf cluster up --cni
# cilium`) with `go build` from the Go module proxy at a pinned release
# (wrapper module in cilium/, which says what it changes), into a cache
# folder keyed by version, as scripts/kube-build.sh does for Kubernetes:
# cilium-agent, cilium-cni and cilium-dbg, and the datapath's C sources
# (bpf/), which the agent compiles with clang when it starts, under lib/bpf
# (the agent's --lib-dir is lib/). No operator: cnperf's cluster runs
# Cilium with Kubernetes IPAM (each node's podCIDR) and applies the CRDs
# from the module's own YAML (lib/crds), see docs/kubernetes.md.
# A binary already in the cache is not rebuilt; a build cut short leaves no
# binary, and go's build cache keeps what it compiled, so the next run
# resumes there.
#
#   scripts/cilium-build.sh              build what is missing
#   scripts/cilium-build.sh --dir        prints the cache folder, builds nothing
#   scripts/cilium-build.sh --missing    prints what is not built yet
#
# Environment: CNPERF_CACHE (default /var/cache/cnperf): Cilium lands in
# $CNPERF_CACHE/cilium-<version>/; CILIUM_BUILD_P packages built in
# parallel (default: all cores). Prints the cache folder on the last line.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mod="$here/cilium"
version=$(awk '$1 == "github.com/cilium/cilium" && $2 ~ /^v/ {print $2}' "$mod/go.mod") # kubelocal.CiliumVersion
[[ -n $version ]] || { echo "cilium-build: no github.com/cilium/cilium line in cilium/go.mod" >&2; exit 1; }
out="${CNPERF_CACHE:-/var/cache/cnperf}/cilium-$version"
# binary name -> package
declare -A pkgs=(
  [cilium-agent]=github.com/cilium/cilium/daemon
  [cilium-cni]=github.com/cilium/cilium/plugins/cilium-cni
  [cilium-dbg]=github.com/cilium/cilium/cilium-dbg
)
order=(cilium-agent cilium-cni cilium-dbg)
missing() {
  local m=()
  for b in "${order[@]}"; do [[ -x "$out/$b" ]] || m+=("$b"); done
  [[ -f "$out/lib/bpf/bpf_lxc.c" && -d "$out/lib/crds" ]] || m+=(bpf)
  echo "${m[*]:-}"
}
case ${1:-} in
--dir) echo "$out"; exit 0 ;;
--missing) missing; exit 0 ;;
"") ;;
*) echo "cilium-build: unknown argument $1 (want --dir, --missing or nothing)" >&2; exit 1 ;;
esac
export PATH=$PATH:/usr/local/go/bin
mkdir -p "$out"
cd "$mod"
src=$(go list -m -f '{{.Dir}}' github.com/cilium/cilium)
if [[ ! -f "$out/lib/bpf/bpf_lxc.c" || ! -d "$out/lib/crds" ]]; then
  rm -rf "$out/.lib.tmp"
  mkdir -p "$out/.lib.tmp/crds"
  cp -r "$src/bpf" "$out/.lib.tmp/bpf"
  cp "$src"/pkg/k8s/apis/cilium.io/client/crds/v2/*.yaml "$src"/pkg/k8s/apis/cilium.io/client/crds/v2alpha1/*.yaml "$out/.lib.tmp/crds/"
  chmod -R u+w "$out/.lib.tmp"
  rm -rf "$out/lib"
  mv "$out/.lib.tmp" "$out/lib"
fi
idle=()
if command -v chrt >/dev/null && chrt -i 0 true 2>/dev/null; then idle=(chrt -i 0); fi
p=${CILIUM_BUILD_P:-$(nproc)}
for b in "${order[@]}"; do
  if [[ -x "$out/$b" ]]; then
    echo "cilium-build: $b $version cached" >&2
    continue
  fi
  echo "cilium-build: building $b $version ..." >&2
  start=$(date +%s)
  # as Cilium's Makefile.defs: static, osusergo, the version stamped
  CGO_ENABLED=0 GOMAXPROCS=$p "${idle[@]}" nice -n 19 \
    go build -p "$p" -trimpath -tags osusergo \
    -ldflags "-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=${version#v} cnperf-build'" \
    -o "$out/.$b.tmp" "${pkgs[$b]}"
  mv "$out/.$b.tmp" "$out/$b"
  echo "cilium-build: $b built in $(($(date +%s) - start)) s" >&2
done
echo "$out"
