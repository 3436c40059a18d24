#!/usr/bin/env bash
# Sets up what is missing and runs every test, in stages, and ends with one
# table, printed last: each stage, its time, and PASS, FAIL or
# SKIPPED(reason). Exits 1 if a stage failed. Nothing is skipped for time:
# the cluster tests wait for their binaries to be built.
#
#   format/vet        gofmt -l, go vet ./...
#   bpf objects       every eBPF object regenerated from its C source and
#                     compared with the committed one (scripts/check-bpf.sh)
#   unit              every test that does not need root, every package, in
#                     parallel: with the race detector in the packages that
#                     start goroutines of their own (race_pkgs below), without
#                     it in the rest, and the timing assertions the race
#                     detector voids again without it
#   root integration  exactly the tests the unit stage deferred (they call
#                     testutil.NeedRoot; CNPERF_TEST_DEFER_ROOT), as root:
#                     networks built in the kernel, the bad-input table, the
#                     interrupt campaign, the soak... The race detector only
#                     in race_pkgs: elsewhere it slows kernel-bound work and
#                     watches no goroutine of the package's own
#   fuzz              each fuzz target for CNPERF_FUZZTIME (default 5s); their
#                     seed corpora ran in the unit stage
#   cluster builds    Kubernetes, flanneld and (once scripts/cilium-build.sh
#                     exists) Cilium, into their version-keyed caches under
#                     CNPERF_CACHE (/var/cache/cnperf): started first, in the
#                     background at idle priority, so they use what the
#                     stages above leave of the CPUs
#   cluster tests     `cnperf cluster up` on the bridge CNI, real Flannel and
#                     real Cilium (cmd/cnperf TestLocalKubernetesCluster*)
#   host snapshot     the host's own network namespace before and after:
#                     unchanged (internal/hostsnap)
#
# A test skipped for another reason than root (a kernel feature this
# machine lacks) is listed with its reason above the table.
#
# Environment:
#   CNPERF_TEST_STAGES  which stages to run, a comma-separated list of
#                       fmt,bpf,unit,root,fuzz,cluster,snap (default: all;
#                       the others show as SKIPPED(not selected))
#   CNPERF_FUZZTIME     fuzzing time per target (default 5s)
#   CNPERF_TEST_TIMES   a file to keep every package's and test's time in
#                       (tab-separated: stage, then internal/testsum's lines)
#   CNPERF_BUILD_P      packages the cluster builds compile at once (default:
#                       the number of CPUs; they run at idle priority)
set -uo pipefail
# not root: re-run under sudo where there is one (the lab needs root)
if [ "$(id -u)" != 0 ] && [ -z "${CNPERF_NO_SUDO:-}" ] && command -v sudo >/dev/null; then
	exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.." || exit 1
root=false
[ "$(id -u)" = 0 ] && root=true
$root || echo "test.sh: not root: the root integration and cluster tests and the host snapshot will be skipped" >&2
./scripts/install-deps.sh || { echo "test.sh: scripts/install-deps.sh failed" >&2; exit 1; }
export PATH=$PATH:/usr/local/go/bin
begin=$(date +%s)

# not cnperf-*: the host snapshot watches /tmp/cnperf* for what the tests
# leave, and this folder holds the snapshot itself
work=$(mktemp -d "${TMPDIR:-/tmp}/testsh.XXXXXX")
build_pid=
cleanup() {
	# the background builds have a process group of their own (set -m)
	if [ -n "$build_pid" ] && kill -0 "$build_pid" 2>/dev/null; then
		kill -TERM -- "-$build_pid" 2>/dev/null
		wait "$build_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The packages whose own code starts goroutines (`grep -E '\bgo (func|[a-zA-Z_.]+\()'`
# on their non-test files), plus sched and kubelocal, whose concurrency is
# in callbacks and timers: their tests run with the race detector.
# backend/kubernetes too, although its race build compiles client-go and its
# fake clientset again (cold only; the build cache keeps it): its watchers
# are goroutines of its own. Not the docker and lab backends: they start no
# goroutine, and their root tests spend minutes waiting on the kernel and
# the Docker engine, which the race build only slows.
race_pkgs=(
	./internal/agent/ ./internal/sched/ ./internal/loadgen/ ./internal/kubelocal/ ./internal/progress/
	./internal/backend/kubernetes/ ./internal/backend/backendtest/ ./internal/dockerengine/
	./internal/lab/ ./internal/tund/ ./internal/httpserver/ ./internal/speed/ ./internal/measure/
	./internal/workload/alltoall/ ./internal/workload/stream/ ./internal/workload/rr/
	./internal/experiment/neighbours/ ./internal/experiment/alltoall/
)

declare -A took result
note=
want() { [[ ",${CNPERF_TEST_STAGES:-fmt,bpf,unit,root,fuzz,cluster,snap}," == *",$1,"* ]]; }
# stage KEY TITLE FUNCTION: runs FUNCTION and records its time and result:
# FAIL if it returns non-zero, else what it put in $note (SKIPPED(...) or
# a remark after PASS).
stage() {
	local key=$1 title=$2 fn=$3 t0 rc
	if ! want "$key"; then
		result[$title]="SKIPPED(not selected: CNPERF_TEST_STAGES)"
		return
	fi
	printf '\n=== test.sh: %s\n' "$title"
	t0=$(date +%s)
	note=
	"$fn"
	rc=$?
	took[$title]=$(($(date +%s) - t0))
	case $rc:$note in
	0:SKIPPED*) result[$title]=$note ;;
	0:*) result[$title]="PASS${note:+ ($note)}" ;;
	*) result[$title]="FAIL${note:+ ($note)}" ;;
	esac
}

# gotest STAGE ARGS...: go test -json ARGS, printed as plain go test would
# (internal/testsum), every package's and test's time and every skip kept
# in $work/STAGE.rec.
gotest() {
	local rec=$work/$1.rec
	shift
	go test -json -vet=off "$@" 2>&1 | "$work/testsum" -record "$rec"
}
# slowest STAGE: one line naming the stage's slowest packages.
slowest() {
	[ -s "$work/$1.rec" ] || return 0
	echo "test.sh: slowest packages: $(awk -F'\t' '$1 == "package" {printf "%s %ss\n", $2, $4}' "$work/$1.rec" |
		sort -k2 -rn | head -5 | sed 's|github.com/cnperf/cnperf/||' | paste -sd, | sed 's/,/, /g')"
}

# --- the cluster builds, first, in the background ---------------------------
builds=(kube flannel)
[ -x scripts/cilium-build.sh ] && builds+=(cilium)
cluster_builds() {
	local b t0 rc
	for b in "${builds[@]}"; do
		t0=$(date +%s)
		CNPERF_BUILD_P=${CNPERF_BUILD_P:-$(nproc)} KUBE_BUILD_P=${CNPERF_BUILD_P:-$(nproc)} CILIUM_BUILD_P=${CNPERF_BUILD_P:-$(nproc)} \
			"scripts/$b-build.sh" >"$work/$b-build.out" 2>"$work/$b-build.log"
		rc=$?
		echo "$rc $(($(date +%s) - t0))" >"$work/$b-build.done"
	done
}
if want cluster && $root; then
	go build -o "$work/testsum" ./internal/testsum # before the builds take the CPUs
	builds_t0=$(date +%s)
	set -m
	cluster_builds &
	build_pid=$!
	set +m
	echo "test.sh: building ${builds[*]} in the background (logs in $work/*-build.log)"
fi
# wait_build B: waits until scripts/B-build.sh has ended; non-zero if it failed.
wait_build() {
	while [ ! -e "$work/$1-build.done" ]; do
		kill -0 "$build_pid" 2>/dev/null || return 1
		sleep 2
	done
	read -r rc _ <"$work/$1-build.done"
	return "$rc"
}

[ -x "$work/testsum" ] || go build -o "$work/testsum" ./internal/testsum || exit 1

snap_before=0
if want snap && $root; then
	t0=$(date +%s)
	go build -o "$work/hostsnap" ./internal/hostsnap/cmd/hostsnap &&
		"$work/hostsnap" save "$work/before.json"
	snap_before=$(($(date +%s) - t0))
fi

fmt_vet() {
	local unformatted rc=0
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$unformatted" ]; then
		echo "gofmt would change: $unformatted" >&2
		rc=1
	fi
	go vet ./... || rc=1
	return $rc
}
stage fmt format/vet fmt_vet

bpf() {
	if [ ! -x scripts/check-bpf.sh ]; then
		note="SKIPPED(no scripts/check-bpf.sh)"
		return 0
	fi
	./scripts/check-bpf.sh
}
stage bpf "bpf objects" bpf

unit() {
	local race others plain p d rc=0
	race=$(go list "${race_pkgs[@]}") || return 1
	others=$(go list ./... | grep -vxF "$race")
	# the race packages whose tests assert timings (internal/racedet) again without it
	plain=$(for p in ${race}; do
		d=$(go list -f '{{.Dir}}' "$p")
		grep -lq 'internal/racedet' "$d"/*_test.go 2>/dev/null && echo "$p"
	done)
	CNPERF_TEST_DEFER_ROOT=1 gotest unit -count=1 -timeout 20m $others $plain || rc=1
	CNPERF_TEST_DEFER_ROOT=1 gotest unit -race -count=1 -timeout 20m $race || rc=1
	slowest unit
	return $rc
}
stage unit unit unit

# deferred: the unit stage's tests skipped for root, "PKG TEST" (top level)
deferred() {
	[ -s "$work/unit.rec" ] || return 0
	awk -F'\t' '$1 == "skip" && $4 ~ /CNPERF_TEST_DEFER_ROOT/ {sub(/\/.*/, "", $3); print $2, $3}' "$work/unit.rec" | sort -u
}
root_tests() {
	if ! $root; then
		note="SKIPPED(not root)"
		return 0
	fi
	local list race_set pkgs race_pkg plain_pkg pattern rc=0 p t
	list=$(deferred)
	if [ -z "$list" ]; then
		echo "test.sh: the unit stage deferred no root test (the root stage needs the unit stage: it finds the root tests)" >&2
		return 1
	fi
	race_set=" $(go list "${race_pkgs[@]}" | paste -sd' ') "
	pkgs=$(awk '{print $1}' <<<"$list" | sort -u)
	# one -run pattern for all: a test of the same name in another of these
	# packages runs again, which costs little; every deferred one runs
	pattern="^($(awk '{print $2}' <<<"$list" | sort -u | paste -sd'|'))\$"
	race_pkg=() plain_pkg=()
	for p in $pkgs; do
		if [[ $race_set == *" $p "* ]]; then race_pkg+=("$p"); else plain_pkg+=("$p"); fi
	done
	((${#plain_pkg[@]})) && { gotest root -count=1 -timeout 30m -run "$pattern" "${plain_pkg[@]}" || rc=1; }
	((${#race_pkg[@]})) && { gotest root -race -count=1 -timeout 30m -run "$pattern" "${race_pkg[@]}" || rc=1; }
	# every deferred test ran here: none may fall between the stages
	while read -r p t; do
		if ! awk -F'\t' -v p="$p" -v t="$t" '$1 == "test" && $2 == p && $3 == t {f = 1} END {exit !f}' "$work/root.rec" 2>/dev/null; then
			echo "test.sh: $p $t was deferred to the root stage but did not run in it" >&2
			rc=1
		fi
	done <<<"$list"
	note="$(wc -l <<<"$list") tests"
	slowest root
	return $rc
}
stage root "root integration" root_tests

fuzz() {
	local rc=0 file name
	# every fuzz target: "DIR/FILE_test.go FuzzName"
	while read -r file name; do
		go test -run='^$' -fuzz="^$name\$" -fuzztime="${CNPERF_FUZZTIME:-5s}" "./$(dirname "$file")" || rc=1
	done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' cmd internal | sed 's/:func / /' | sort)
	return $rc
}
stage fuzz fuzz fuzz

cluster_tests() {
	if ! $root; then
		note="SKIPPED(not root)"
		return 0
	fi
	local rc=0 t0 waited=0 tests=(TestLocalKubernetesCluster TestLocalKubernetesClusterFlannel) t st
	t0=$(date +%s)
	if ! wait_build kube; then
		note="the Kubernetes build failed; see cluster builds"
		return 1
	fi
	# the bridge test needs only Kubernetes; Flannel's its flanneld too
	local run='^TestLocalKubernetesCluster(Flannel)?$'
	wait_build flannel || { run='^TestLocalKubernetesCluster$'; rc=1; }
	waited=$(($(date +%s) - t0))
	CNPERF_KUBE_LOCAL=1 gotest cluster -count=1 -timeout 40m -run "$run" ./cmd/cnperf/ || rc=1
	if [[ " ${builds[*]} " == *" cilium "* ]]; then
		tests+=(TestLocalKubernetesClusterCilium)
		t0=$(date +%s)
		if wait_build cilium; then
			waited=$((waited + $(date +%s) - t0))
			CNPERF_KUBE_LOCAL=1 gotest cluster -count=1 -timeout 40m -run '^TestLocalKubernetesClusterCilium$' ./cmd/cnperf/ || rc=1
		else
			rc=1
		fi
	fi
	# each ran; all skipped (a kernel feature missing) shows as SKIPPED
	local passed=0 skipped=()
	for t in "${tests[@]}"; do
		st=$(awk -F'\t' -v t="$t" '$1 == "test" && $3 == t {print $4}' "$work/cluster.rec" 2>/dev/null | tail -1)
		case $st in
		pass) passed=$((passed + 1)) ;;
		skip) skipped+=("$t: $(awk -F'\t' -v t="$t" '$1 == "skip" && $3 == t {print $4}' "$work/cluster.rec" | tail -1)") ;;
		fail) ;;
		*) echo "test.sh: $t did not run" >&2; rc=1 ;;
		esac
	done
	if ((${#skipped[@]})) && ((passed == 0)) && ((rc == 0)); then
		note="SKIPPED($(printf '%s; ' "${skipped[@]}" | sed 's/; $//'))"
	else
		note="${#tests[@]} tests; waited ${waited}s for the builds"
		((${#skipped[@]})) && note+="; skipped: $(printf '%s; ' "${skipped[@]}" | sed 's/; $//')"
	fi
	return $rc
}
stage cluster "cluster tests" cluster_tests

# the builds' own row: the wall time of the background job, and its logs
if want cluster && $root; then
	for b in "${builds[@]}"; do wait_build "$b"; done
	wait "$build_pid" 2>/dev/null
	failed=()
	for b in "${builds[@]}"; do
		cat "$work/$b-build.log"
		read -r rc secs <"$work/$b-build.done" 2>/dev/null || rc=1
		[ "$rc" = 0 ] || failed+=("$b")
	done
	# from the start to the end of the last build (they run one after another)
	took["cluster builds"]=$(($(stat -c %Y "$work/${builds[-1]}-build.done" 2>/dev/null || date +%s) - builds_t0))
	if ((${#failed[@]})); then
		result["cluster builds"]="FAIL (${failed[*]}; its log is above)"
	else
		result["cluster builds"]="PASS (${builds[*]}; in the background from the start)"
	fi
elif want cluster; then
	result["cluster builds"]="SKIPPED(not root: the cluster tests need root)"
else
	result["cluster builds"]="SKIPPED(not selected: CNPERF_TEST_STAGES)"
fi

snap_compare() {
	if ! $root; then
		note="SKIPPED(not root)"
		return 0
	fi
	[ -e "$work/before.json" ] || { echo "test.sh: no snapshot was taken before the tests" >&2; return 1; }
	"$work/hostsnap" compare "$work/before.json"
}
stage snap "host snapshot" snap_compare
[ -n "${took["host snapshot"]:-}" ] && took["host snapshot"]=$((took["host snapshot"] + snap_before))

# --- the summary, last ----------------------------------------------------
if [ -n "${CNPERF_TEST_TIMES:-}" ]; then
	for s in unit root cluster; do
		[ -e "$work/$s.rec" ] && sed "s/^/$s\t/" "$work/$s.rec"
	done >"$CNPERF_TEST_TIMES"
fi
# skipped tests: a (sub)test skipped in the last stage that ran it and
# passed in none (so not a root test the unit stage deferred, nor a timing
# test the race build skipped and the plain one ran)
skips=$(for s in unit root cluster; do [ -e "$work/$s.rec" ] && sed "s/^/$s\t/" "$work/$s.rec"; done |
	awk -F'\t' '
	$2 == "test" { k = $3 " " $4; last[k] = $1; if ($5 != "skip") ran[k] = 1 }
	$2 == "skip" { n++; st[n] = $1; key[n] = $3 " " $4; line[n] = $3 " " $4 ": " $5 }
	END { for (i = 1; i <= n; i++) if (!ran[key[i]] && last[key[i]] == st[i]) print line[i] }' |
	sed 's|^github.com/cnperf/cnperf/||' | sort -u)
echo
if [ -n "$skips" ]; then
	echo "test.sh: tests skipped, with their reasons:"
	sed 's/^/  /' <<<"$skips"
fi
fmt_time() { [ "$1" = - ] && { echo -; return; }; printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
status=0
printf '\n%-18s %8s  %s\n' STAGE TIME RESULT
for s in format/vet "bpf objects" unit "root integration" fuzz "cluster builds" "cluster tests" "host snapshot"; do
	r=${result[$s]:-"FAIL (did not run)"}
	[[ $r == FAIL* ]] && status=1
	printf '%-18s %8s  %s\n' "$s" "$(fmt_time "${took[$s]:--}")" "$r"
done
printf '%-18s %8s  %s\n' total "$(fmt_time $(($(date +%s) - begin)))" "$([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
