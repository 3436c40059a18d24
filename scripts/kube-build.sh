#!/usr/bin/env bash
# Builds the Kubernetes components of cnperf's local cluster with `go build`
# from the k8s.io/kubernetes module (wrapper module in kube/, pinned release,
# staging modules replaced by their published v0.x versions) into a cache
# folder keyed by version. A binary already in the cache is not rebuilt.
#
#   scripts/kube-build.sh [binary...]     default: all of them
#   scripts/kube-build.sh --dir           prints the cache folder, builds nothing
#   scripts/kube-build.sh --missing       prints the binaries not in it yet
#
# Environment:
#   CNPERF_CACHE   cache root (default /var/cache/cnperf); binaries land in
#                  $CNPERF_CACHE/kube-<version>/
#   KUBE_BUILD_P   packages built in parallel (default 1: the machine is shared)
#
# The build runs at the lowest CPU priority (SCHED_IDLE where chrt exists,
# and nice 19). Cut short (a time budget, Ctrl-C), it leaves no binary, but
# go's build cache keeps every package compiled so far: the next run
# resumes there.
#
# Prints the cache folder on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mod="$here/kube"
version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}
  $1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2}' "$mod/go.mod")
if [[ -z "$version" ]]; then
  echo "kube-build: no 'require k8s.io/kubernetes vX' line in $mod/go.mod" >&2
  exit 1
fi
out="${CNPERF_CACHE:-/var/cache/cnperf}/kube-$version"
all=(kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)
case ${1:-} in
--dir)
  echo "$out"
  exit 0
  ;;
--missing)
  m=()
  for b in "${all[@]}"; do [[ -x "$out/$b" ]] || m+=("$b"); done
  echo "${m[*]:-}"
  exit 0
  ;;
esac
bins=("$@")
((${#bins[@]})) || bins=("${all[@]}")
for b in "${bins[@]}"; do
  [[ " ${all[*]} " == *" $b "* ]] || { echo "kube-build: unknown binary $b (want one of: ${all[*]})" >&2; exit 1; }
done

# The version the binaries report (kubelet's node status, /version): what the
# release build's hack/lib/version.sh stamps, minus the git commit.
# buildDate is the release's commit time from the module proxy, so that a
# rebuild gives the same binary.
minor=${version#v1.}; minor=${minor%%.*}
date=$(cd "$mod" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
ld="-s -w"
for kv in "gitVersion=$version" gitMajor=1 "gitMinor=$minor" gitTreeState=clean "buildDate=$date"; do
  ld+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

idle=()
if command -v chrt >/dev/null && chrt -i 0 true 2>/dev/null; then idle=(chrt -i 0); fi
mkdir -p "$out"
cd "$mod"
for b in "${bins[@]}"; do
  if [[ -x "$out/$b" ]]; then
    echo "kube-build: $b $version cached" >&2
    continue
  fi
  echo "kube-build: building $b $version ..." >&2
  start=$(date +%s)
  # idle priority and one package at a time: others measure on this machine.
  CGO_ENABLED=0 GOMAXPROCS=${KUBE_BUILD_P:-1} "${idle[@]}" nice -n 19 \
    go build -p "${KUBE_BUILD_P:-1}" -trimpath -tags selinux,notest,grpcnotrace \
    -ldflags "$ld" -o "$out/.$b.tmp" "k8s.io/kubernetes/cmd/$b"
  mv "$out/.$b.tmp" "$out/$b"
  echo "kube-build: $b built in $(( $(date +%s) - start )) s" >&2
done
echo "$out"
