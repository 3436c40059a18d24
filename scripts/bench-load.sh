#!/usr/bin/env bash
# Side-by-side benchmarks of cnperf's load engine (docs/perf.md), as root:
#  1. closed loop against nginx across a host-gw lab path: cnperf http_qps
#     vs wrk, same connections and threads, rounds interleaved; requests/s
#     and client CPU per request (user+sys of the client process);
#  2. open loop: the highest rate cnperf http_rate holds with send-lag
#     p99 under 50us, against wrk's closed-loop requests/s;
#  3. low rate on loopback: cnperf tcp_rate (sleeping, and --poll 200us)
#     vs sockperf ping-pong, same CPU placement for both (pinned), both
#     against the same sockperf server, median round trip.
# ROUNDS (default 3), DUR seconds (default 5) and LDUR seconds of each
# loopback run (default 3) tune it. Prints a summary.
# Every tool runs under the same PM QoS CPU wake-up bound: the script holds
# /dev/cpu_dma_latency at 0 us for the whole benchmark (as tuned's
# network-latency profile does; CPU_LATENCY=off holds none), and cnperf's
# own --cpu-latency gets the same value.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-5}
LDUR=${LDUR:-3}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
BIN=$(mktemp /tmp/cnperf-bench-XXXXXX)
OUT=$(mktemp -d /tmp/cnperf-bench-out-XXXXXX)
go build -o "$BIN" ./cmd/cnperf
CPU_LATENCY=${CPU_LATENCY:-0}
if [ "$CPU_LATENCY" != off ]; then
	# the request lives as long as fd 3 is open: the whole script
	exec 3>/dev/cpu_dma_latency
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((CPU_LATENCY & 255)) $((CPU_LATENCY >> 8 & 255)) $((CPU_LATENCY >> 16 & 255)) $((CPU_LATENCY >> 24 & 255)))" >&3
fi
echo "cpu wake-up bound (PM QoS) held for all tools: $CPU_LATENCY us; cpuidle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"

"$BIN" lab --network host-gw --placement cross-host --for 30m >"$OUT/lab.log" 2>&1 &
LAB=$!
cleanup() {
	kill -INT "$LAB" 2>/dev/null || true
	wait "$LAB" 2>/dev/null || true
	[ -n "${SPS:-}" ] && kill "$SPS" 2>/dev/null || true
	rm -f "$BIN"
}
trap cleanup EXIT
for _ in $(seq 100); do grep -q "is up" "$OUT/lab.log" && break; sleep 0.2; done
line=$(grep "cross-host: client pod" "$OUT/lab.log")
C=$(echo "$line" | sed -E 's/.*client pod ([^ ]+) .*/\1/')
S=$(echo "$line" | sed -E 's/.*server pod ([^ ]+) .*/\1/')
SIP=$(echo "$line" | sed -E 's/.*server pod [^ ]+ \(([0-9.]+)\).*/\1/')
URL="http://$SIP:8080/"
ip netns exec "$S" "$BIN" load serve nginx --port 8080 --response-size 350 --duration 30m >"$OUT/nginx.log" 2>&1 &
sleep 1
echo "lab path: $C -> $S ($URL), nginx: $(head -1 "$OUT/nginx.log")"

TIMEFORMAT='%U %S'
cpu() { awk '{print $1+$2}' "$1"; }

echo
echo "== closed loop vs wrk: -t$THREADS -c$CONNS, ${DUR}s, nginx 350 B =="
printf "%-6s %12s %12s %14s %14s %8s %8s\n" round wrk_req/s cnperf_req/s wrk_us_cpu/req cnperf_us/req rps_x cpu_x
WRKS=()
for r in $(seq "$ROUNDS"); do
	{ time ip netns exec "$C" wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" "$URL" >"$OUT/wrk.$r" ; } 2>"$OUT/wrk.$r.cpu"
	{ time ip netns exec "$C" "$BIN" load http_qps "$URL" --cpu-latency "$CPU_LATENCY" --connections "$CONNS" --threads "$THREADS" --duration "${DUR}s" >"$OUT/cn.$r" ; } 2>"$OUT/cn.$r.cpu"
	w=$(awk '/Requests\/sec/{print $2}' "$OUT/wrk.$r")
	wn=$(awk '/requests in/{print $1}' "$OUT/wrk.$r")
	c=$(awk '/requests\/s:/{print $1}' "$OUT/cn.$r")
	cn=$(awk '/requests\/s:/{print $3}' "$OUT/cn.$r")
	wc=$(cpu "$OUT/wrk.$r.cpu"); cc=$(cpu "$OUT/cn.$r.cpu")
	WRKS+=("$w")
	awk -v r="$r" -v w="$w" -v c="$c" -v wc="$wc" -v cc="$cc" -v wn="$wn" -v cn="$cn" 'BEGIN{
		wu=wc/wn*1e6; cu=cc/cn*1e6;
		printf "%-6s %12.0f %12.0f %14.2f %14.2f %8.2f %8.2f\n", r, w, c, wu, cu, c/w, cu/wu }'
done
WMAX=$(printf "%s\n" "${WRKS[@]}" | sort -g | tail -1)

echo
echo "== open loop: highest rate held with send-lag p99 < 50us, rate ladder, 2s steps =="
RATES=${RATES:-2000,5000,10000,20000,30000,40000,50000,60000,70000,80000}
printf "%-9s %8s %10s %12s %12s %s\n" mode rate achieved lag_p50_us lag_p99_us verdict
BEST=0
for mode in spin realtime; do
	flag=""; [ "$mode" = realtime ] && flag="--realtime"
	ip netns exec "$C" "$BIN" load http_rate "$URL" --cpu-latency "$CPU_LATENCY" --rate "$RATES" --max-send-lag 50us \
		--connections "$CONNS" --threads "$THREADS" --duration 2s $flag >"$OUT/open.$mode" || true
	awk -v m="$mode" '
		/^http_rate/ { split($3, a, "="); rate=a[2] }
		/^  achieved/ { ach=$2 }
		/^  send lag/ { p50=$5; p99=$7 }
		/^  verdict/ { v=($2=="rate") ? "held" : "saturated"; printf "%-9s %8s %10s %12s %12s %s\n", m, rate, ach, p50, p99, v }
	' "$OUT/open.$mode" | tee "$OUT/open.$mode.tab"
	b=$(awk '$6=="held"{r=$2} END{print r+0}' "$OUT/open.$mode.tab")
	[ "$b" -gt "$BEST" ] && BEST=$b
done
awk -v m="$BEST" -v w="$WMAX" 'BEGIN{printf "open-loop highest held %d/s vs wrk best closed-loop %.0f/s: %.2fx\n", m, w, m/w}'

echo
echo "== loopback, 1000 requests/s, 16 B, one connection: median round trip (${LDUR}s each) =="
# placement is pinned the same for every tool: client on CPU 0 and the
# sockperf server on CPU 1 (cross), both on CPU 0 (same), or left to the
# scheduler (free), which places a busy-polling client and a sleeping one
# differently
sockperf server --tcp -i 127.0.0.1 -p 11711 >"$OUT/sps.log" 2>&1 &
SPS=$!
sleep 0.5
printf "%-6s %-6s %14s %14s %18s %8s %8s\n" round place sockperf_p50us cnperf_p50us cnperf_poll_p50us ratio poll_x
for r in $(seq "$ROUNDS"); do
	for place in cross same free; do
		case $place in
		cross) taskset -pc 1 "$SPS" >/dev/null; PIN="taskset -c 0" ;;
		same) taskset -pc 0 "$SPS" >/dev/null; PIN="taskset -c 0" ;;
		free) taskset -pc 0-$(($(nproc) - 1)) "$SPS" >/dev/null; PIN="" ;;
		esac
		$PIN sockperf ping-pong --tcp -i 127.0.0.1 -p 11711 -t "$LDUR" --mps 1000 -m 16 --full-rtt >"$OUT/sp.$r.$place" 2>&1
		$PIN "$BIN" load tcp_rate 127.0.0.1:11711 --cpu-latency "$CPU_LATENCY" --payload sockperf --message-size 16 --rate 1000 --connections 1 --threads 1 --duration "${LDUR}s" >"$OUT/ct.$r.$place"
		$PIN "$BIN" load tcp_rate 127.0.0.1:11711 --cpu-latency "$CPU_LATENCY" --payload sockperf --message-size 16 --rate 1000 --connections 1 --threads 1 --duration "${LDUR}s" --poll 200us >"$OUT/cp.$r.$place"
		s=$(awk '/percentile 50.000/{print $NF}' "$OUT/sp.$r.$place")
		c=$(awk '/uncorrected/{print $4}' "$OUT/ct.$r.$place")
		p=$(awk '/uncorrected/{print $4}' "$OUT/cp.$r.$place")
		awk -v r="$r" -v pl="$place" -v s="$s" -v c="$c" -v p="$p" 'BEGIN{printf "%-6s %-6s %14.1f %14.1f %18.1f %8.2f %8.2f\n", r, pl, s, c, p, c/s, p/s}'
	done
done
echo
echo "raw outputs: $OUT"
