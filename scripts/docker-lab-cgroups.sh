#!/bin/sh
# docker-lab-cgroups.sh deep ID | shares ID N: the two cgroup experiments of docs/validation.md
# ("Again on a quieter machine"), run beside `CNPERF_RUN_ID=ID cnperf run --backend lab,docker-lab ...`
# (start this first, in the background; it ends with the run).
#
#   deep ID      while the run lasts, moves each lab replica agent (an `agent --listen
#                unix:/run/cnperf/ID.../agent-POD.sock` process) into the cpu and cpuacct cgroups
#                cnperf-ID/<lab>-<pod>: two levels down, as deep as docker-lab's containers
#                (cnperf-IDs0/<container>). The run's lab teardown leaves the emptied cgroups; this
#                script removes them when the run is over.
#   shares ID N  once docker-lab's run cgroup cnperf-IDs0 exists, sets its cpu.shares to N (cgroup v1;
#                1024 is the default, the weight of one nice-0 task).
#
# Needs root and cgroup v1's cpu and cpuacct hierarchies under /sys/fs/cgroup. It touches only
# the run's own cgroups (cnperf-ID, cnperf-IDs0).
set -eu
cmd=${1:-}; id=${2:-}
[ -n "$id" ] || { echo "usage: $0 deep ID | shares ID N" >&2; exit 2; }
case $cmd in
deep)
	seen=0
	while :; do
		n=0
		for p in $(pgrep -f "agent --listen unix:/run/cnperf/$id" || true); do
			name=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | sed -n 's|.*unix:/run/cnperf/\([^/]*\)/agent-\([a-z0-9-]*\)\.sock.*|\1-\2|p')
			[ -n "$name" ] || continue
			n=$((n+1))
			for h in cpu cpuacct; do
				d=/sys/fs/cgroup/$h/cnperf-$id/$name
				mkdir -p "$d"
				grep -qx "$p" "$d/cgroup.procs" 2>/dev/null || { echo "$p" > "$d/cgroup.procs" && echo "moved $p to $d"; } || true
			done
		done
		[ $n -gt 0 ] && seen=1
		[ $seen = 1 ] && [ $n = 0 ] && ! pgrep -f "run/cnperf/${id}s0" >/dev/null && break
		sleep 1
	done
	for h in cpu cpuacct; do
		for d in /sys/fs/cgroup/$h/cnperf-$id/*/; do [ -d "$d" ] && rmdir "$d" || true; done
		[ -d /sys/fs/cgroup/$h/cnperf-$id ] && rmdir /sys/fs/cgroup/$h/cnperf-$id || true
	done
	;;
shares)
	cg=/sys/fs/cgroup/cpu/cnperf-${id}s0
	while [ ! -d "$cg" ]; do sleep 0.2; done
	echo "${3:?shares}" > "$cg/cpu.shares"
	echo "cpu.shares of $cg: $(cat "$cg/cpu.shares")"
	;;
*) echo "usage: $0 deep ID | shares ID N" >&2; exit 2 ;;
esac
