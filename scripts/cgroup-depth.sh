#!/usr/bin/env bash
# cgroup-depth.sh [ROUNDS] [SECONDS] [DEPTH]: what a container's CPU cgroup alone
# costs a TCP round trip, with no container and no network in between.
#
# docker-lab's agents run in containers, whose processes sit two levels
# down the CPU controller's hierarchy (/cnperf-<run>s0/<container>, as a
# stock engine's /docker/<container>); the lab replica's agents are plain
# processes in cnperf's own cgroup (the root here). Every wake-up of a
# task enqueues its group's scheduling entities at every level, and a
# TCP ping-pong is two wake-ups per round trip. This script measures that
# difference alone: sockperf ping-pong over loopback in a fresh network
# namespace, once between two plain processes and once between two
# processes each in its own cgroup /cnperf-cg<PID>/{server,client} in
# every hierarchy (DEPTH levels, default 2, like two containers of a
# stock engine; more levels are put in between), alternating, ROUNDS
# rounds (default 6) of SECONDS (default 5) each of a ping-pong (its p50
# round trip) and a TCP stream of 256-byte writes (iperf3 -l 256: what
# the receiver got), and prints the median of the per-round ratios.
#
# Needs root, sockperf and iperf3 (apt-get install sockperf iperf3). Everything it makes
# (the namespace cnperf-cg<PID>-h1, the cgroup cnperf-cg<PID>) is removed
# on exit, and `cnperf clean` removes it after a kill -9.
set -euo pipefail
ROUNDS=${1:-6}
SECS=${2:-5}
DEPTH=${3:-2}
ID=cg$$
NS=cnperf-$ID-h1
CG=cnperf-$ID
((DEPTH >= 2)) || { echo "cgroup-depth.sh: DEPTH is 2 or more" >&2; exit 1; }
MID=
for ((i = 2; i < DEPTH; i++)); do MID=$MID/l$i; done
[[ $(id -u) == 0 ]] || { echo "cgroup-depth.sh: needs root" >&2; exit 1; }
for c in sockperf iperf3; do
  command -v $c >/dev/null || { echo "cgroup-depth.sh: needs $c (apt-get install $c)" >&2; exit 1; }
done

roots() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then echo /sys/fs/cgroup; return; fi
  local d
  for d in /sys/fs/cgroup/*/; do d=${d%/}; [[ -f $d/cgroup.procs && ! -L $d ]] && echo "$d"; done
  return 0
}

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  local r
  for r in $(roots); do
    [[ -d $r/$CG ]] || continue
    for p in $(find "$r/$CG" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  done
  sleep 0.2
  for r in $(roots); do [[ -d $r/$CG ]] && find "$r/$CG" -depth -type d -exec rmdir {} + 2>/dev/null; done
  ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$NS"
ip -n "$NS" link set lo up
for r in $(roots); do
  dirs=("$r/$CG")
  p=$r/$CG
  for l in ${MID//\// }; do p=$p/$l; dirs+=("$p"); done
  for d in "${dirs[@]}" "$p/server" "$p/client"; do
    mkdir -p "$d"
    if [[ -f $r/cpuset.cpus && -f $d/cpuset.cpus && -z $(cat "$d/cpuset.cpus") ]]; then
      cat "$r/cpuset.cpus" >"$d/cpuset.cpus"
      cat "$r/cpuset.mems" >"$d/cpuset.mems"
    fi
  done
done
ROOTS=$(roots | tr '\n' ' ')

# run_in CGROUP CMD...: runs CMD in the namespace, in cgroup $CG/CGROUP of
# every hierarchy ("-" for none: cnperf's own, as the lab's agents)
run_in() {
  local cg=$1; shift
  if [[ $cg == - ]]; then ip netns exec "$NS" "$@"; return; fi
  sh -c 'cg=$1; shift; for r in '"$ROOTS"'; do echo $$ > "$r/'"$CG$MID"'/$cg/cgroup.procs"; done; exec "$@"' _ "$cg" ip netns exec "$NS" "$@"
}

p50() { # CGROUP-OF-CLIENT PORT
  run_in "$1" sockperf ping-pong --tcp -i 127.0.0.1 -p "$2" -t "$SECS" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | awk '/percentile 50.000 =/ {print $NF; exit}'
}

mbps() { # CGROUP PORT: an iperf3 stream of 256-byte writes, Mbit/s received
  run_in "$1" iperf3 -c 127.0.0.1 -p "$2" -l 256 -t "$SECS" -J 2>/dev/null |
    awk '/"sum_received"/ {s = 1} s && /"bits_per_second"/ {gsub(/[,]/, ""); printf "%.0f", $2 / 1e6; exit}'
}

run_in - sockperf server --tcp -i 127.0.0.1 -p 11111 >/dev/null 2>&1 &
pids+=($!)
run_in server sockperf server --tcp -i 127.0.0.1 -p 11112 >/dev/null 2>&1 &
pids+=($!)
run_in - iperf3 -s -p 11113 >/dev/null 2>&1 &
pids+=($!)
run_in server iperf3 -s -p 11114 >/dev/null 2>&1 &
pids+=($!)
sleep 1

echo "round  plain p50 us  nested ($DEPTH) p50 us  ratio  plain Mbit/s  nested ($DEPTH) Mbit/s  ratio"
lat=() tp=()
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then
    a=$(p50 - 11111); b=$(p50 client 11112); c=$(mbps - 11113); d=$(mbps client 11114)
  else
    b=$(p50 client 11112); a=$(p50 - 11111); d=$(mbps client 11114); c=$(mbps - 11113)
  fi
  l=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  x=$(awk -v a="$c" -v b="$d" 'BEGIN {printf "%.3f", b / a}')
  lat+=("$l") tp+=("$x")
  printf "%-5d  %-12s  %-17s  %-5s  %-12s  %-21s  %s\n" "$r" "$a" "$b" "$l" "$c" "$d" "$x"
done
median() { sort -n | awk '{v[NR] = $1} END {printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "median of per-round ratios, nested / plain, over $ROUNDS rounds: p50 round trip $(printf '%s\n' "${lat[@]}" | median), 256-byte stream $(printf '%s\n' "${tp[@]}" | median)"
