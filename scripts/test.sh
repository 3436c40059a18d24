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
# The local Kubernetes cluster's integration test (issue 15; cmd/cnperf
# TestLocalKubernetesCluster: `cnperf cluster up --nodes 2`, tcp_rr,
# tcp_stream and tcp_crr through a ClusterIP same-node and cross-node,
# down, nothing left; TestLocalKubernetesClusterFlannel: the same cluster
# on real Flannel). Its
# binaries take about an hour to build cold on 2 CPUs, so each run spends
# at most CNPERF_KUBE_BUILD_BUDGET seconds (default 600; 0: none) building
# the missing ones into their version-keyed cache (scripts/kube-build.sh):
# go's build cache keeps what a cut-short build compiled, so every run
# gets further and a machine that keeps its caches gets there. The test
# runs once all of them are there.
if [ "$(id -u)" = 0 ]; then
  kube_dir=$(scripts/kube-build.sh --dir)
  kube_missing=$(scripts/kube-build.sh --missing)
  kube_budget=${CNPERF_KUBE_BUILD_BUDGET:-600}
  if [ -n "$kube_missing" ] && [ "$kube_budget" -gt 0 ]; then
    echo "test.sh: building the Kubernetes binaries missing from $kube_dir ($kube_missing) for at most ${kube_budget}s" >&2
    kube_start=$(date +%s)
    KUBE_BUILD_P=${KUBE_BUILD_P:-$(nproc)} timeout "$kube_budget" scripts/kube-build.sh >/dev/null ||
      echo "test.sh: kube-build.sh stopped after $(($(date +%s) - kube_start))s (budget ${kube_budget}s); the next run resumes it" >&2
    kube_missing=$(scripts/kube-build.sh --missing)
  fi
  if [ -z "$kube_missing" ]; then
    # on real Flannel too once flanneld is built (scripts/flannel-build.sh,
    # minutes: it spends what is left of the budget)
    if [ -n "$(scripts/flannel-build.sh --missing)" ] && [ "$kube_budget" -gt 0 ]; then
      timeout "$kube_budget" scripts/flannel-build.sh >/dev/null || true
    fi
    if [ -n "$(scripts/flannel-build.sh --missing)" ]; then
      echo "test.sh: the Flannel integration test did not run: $(scripts/flannel-build.sh --dir) lacks flanneld; build it with scripts/flannel-build.sh" >&2
    fi
    CNPERF_KUBE_LOCAL=1 go test -count=1 -timeout 40m -v -run '^TestLocalKubernetesCluster(Flannel)?$' ./cmd/cnperf/
  else
    echo "test.sh: the Kubernetes integration test did not run: $kube_dir lacks $kube_missing; build them with scripts/kube-build.sh (about an hour cold on 2 CPUs) or give CI a larger CNPERF_KUBE_BUILD_BUDGET (each run resumes the build)" >&2
  fi
fi
if [ "$(id -u)" = 0 ]; then
  "$snapdir/hostsnap" compare "$snapdir/before.json"
fi
