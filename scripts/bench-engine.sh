#!/usr/bin/env bash
# The load engine against the reference tools, head to head (issue 26 item
# 6; docs/perf.md "The engine against wrk, sockperf and iperf3"), as root:
#   http    cnperf load http_qps   vs wrk -t1 -c$CONNS       (same nginx, 350 B)
#   rr      cnperf load tcp_rr     vs sockperf ping-pong     (16 B, each its own server)
#   stream  cnperf load tcp_stream vs iperf3 -l $SSIZE       (each its own server)
# on two paths: "loopback" (client and servers in the server pod, to
# 127.0.0.1) and "lab" (client pod -> server pod across a host-gw lab).
# Same placement for every tool: every server pinned to CPU 1 (nginx with
# one worker), every client pinned to CPU 0, one thread, one connection
# (rr, stream) or $CONNS (http); same duration and message sizes. Rounds
# run the two tools one after the other, alternating which goes first.
# Each round gives a ratio cnperf/reference; a path's ratio is the median
# over the rounds:
#   http    requests/s ratio (>= 1 wanted) and client CPU per request ratio (<= 1)
#   rr      transactions/s ratio (>= 1) and p99 ratio (<= 1)
#   stream  throughput ratio (>= 1) and CPU per byte ratio (<= 1), CPU being
#           the client's and its server's (user+system)
# Knobs: ROUNDS (3), DUR seconds per tool run (4), CONNS (50), SSIZE (131072),
# PAIRS (http,rr,stream), PATHS (loopback,lab), OUT (a folder for the raw
# outputs; default a new temp folder).
# The machine's load average is printed before and after: say it beside any
# number taken from here.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-4}
CONNS=${CONNS:-50}
SSIZE=${SSIZE:-131072}
PAIRS=${PAIRS:-http,rr,stream}
PATHS=${PATHS:-loopback,lab}
OUT=${OUT:-$(mktemp -d /tmp/cnperf-bench-engine-XXXXXX)}
mkdir -p "$OUT"
for tool in wrk sockperf iperf3 nginx; do
	command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install $tool)" >&2; exit 2; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (client on CPU 0, servers on CPU 1)" >&2; exit 2; }
has() { [[ ",$1," == *",$2,"* ]]; }
BIN=$(mktemp /tmp/cnperf-bench-XXXXXX)
go build -o "$BIN" ./cmd/cnperf
# every tool runs under the same PM QoS CPU wake-up bound (0 us), held by
# this script for the whole run as tuned's network-latency profile does
exec 3>/dev/cpu_dma_latency
printf '\x00\x00\x00\x00' >&3
echo "bench-engine: rounds $ROUNDS, ${DUR}s per tool run, http -c$CONNS -t1, rr 16 B, stream ${SSIZE} B writes"
echo "placement: servers on CPU 1, clients on CPU 0; PM QoS 0 us for all; cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); date: $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)"

"$BIN" lab --network host-gw --placement cross-host --for 60m >"$OUT/lab.log" 2>&1 &
LAB=$!
SRV=()
cleanup() {
	for p in "${SRV[@]}"; do kill "$p" 2>/dev/null || true; done
	kill -INT "$LAB" 2>/dev/null || true
	wait "$LAB" 2>/dev/null || true
	rm -f "$BIN"
}
trap cleanup EXIT
for _ in $(seq 150); do grep -q "is up" "$OUT/lab.log" && break; sleep 0.2; done
line=$(grep "cross-host: client pod" "$OUT/lab.log") || { cat "$OUT/lab.log" >&2; exit 1; }
C=$(echo "$line" | sed -E 's/.*client pod ([^ ]+) .*/\1/')
S=$(echo "$line" | sed -E 's/.*server pod ([^ ]+) .*/\1/')
SIP=$(echo "$line" | sed -E 's/.*server pod [^ ]+ \(([0-9.]+)\).*/\1/')
PNG=8080 PRR=5001 PSP=11111 PST=5002 PIP=5201
declare -A SPID=()
srv() { local name=$1; shift; ip netns exec "$S" taskset -c 1 "$@" >"$OUT/srv.$name.log" 2>&1 & SRV+=($!); SPID[$name]=$!; }
srv nginx "$BIN" load serve nginx --port $PNG --response-size 350 --duration 60m
srv tcp_rr "$BIN" load serve tcp_rr --port $PRR --message-size 16 --duration 60m
srv tcp_stream "$BIN" load serve tcp_stream --port $PST --duration 60m
srv sockperf sockperf sr --tcp -i 0.0.0.0 -p $PSP
srv iperf3 iperf3 -s -p $PIP
sleep 1.5

TIMEFORMAT='%U %S'
HZ=$(getconf CLK_TCK)
# CPU ticks (user+system) of one of our servers: its process and its
# descendants (nginx's workers), found by pid, never by name
tree() { local p; echo "$1"; for p in $(pgrep -P "$1"); do tree "$p"; done; }
ticks() { local t=0 p; for p in $(tree "${SPID[$1]}"); do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $t; }
median() { sort -g | awk '{a[NR]=$1} END{if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "lab path: $C -> $S ($SIP); nginx workers on: $(for p in $(tree "${SPID[nginx]}"); do ps -o psr=,args= -p "$p"; done | awk '/nginx: worker/ {printf "cpu%s ", $1}')"

# one tool run: prints "amount cpu_seconds server_ticks extra" where amount is
# requests, transactions or bytes, extra the p99 (rr) or seconds (stream)
runone() {
	local path=$1 tool=$2 r=$3 ns host f s0 srvname
	f="$OUT/$path.$tool.$r"
	if [ "$path" = loopback ]; then ns=$S; host=127.0.0.1; else ns=$C; host=$SIP; fi
	case $tool in wrk | http_qps) srvname=nginx ;; sockperf) srvname=sockperf ;; tcp_rr) srvname=tcp_rr ;; iperf3) srvname=iperf3 ;; tcp_stream) srvname=tcp_stream ;; esac
	s0=$(ticks $srvname)
	case $tool in
	wrk) { time ip netns exec "$ns" taskset -c 0 wrk -t1 -c"$CONNS" -d"${DUR}s" "http://$host:$PNG/" >"$f"; } 2>"$f.cpu" ;;
	http_qps) { time ip netns exec "$ns" taskset -c 0 "$BIN" load http_qps "http://$host:$PNG/" --cpu-latency 0 --connections "$CONNS" --threads 1 --duration "${DUR}s" >"$f"; } 2>"$f.cpu" ;;
	sockperf) { time ip netns exec "$ns" taskset -c 0 sockperf pp --tcp --full-rtt -i "$host" -p $PSP -t "$DUR" -m 16 >"$f"; } 2>"$f.cpu" ;;
	tcp_rr) { time ip netns exec "$ns" taskset -c 0 "$BIN" load tcp_rr "$host:$PRR" --cpu-latency 0 --message-size 16 --duration "${DUR}s" >"$f"; } 2>"$f.cpu" ;;
	iperf3) { time ip netns exec "$ns" taskset -c 0 iperf3 -c "$host" -p $PIP -t "$DUR" -l "$SSIZE" -J >"$f"; } 2>"$f.cpu" ;;
	tcp_stream) { time ip netns exec "$ns" taskset -c 0 "$BIN" load tcp_stream "$host:$PST" --cpu-latency 0 --message-size "$SSIZE" --duration "${DUR}s" >"$f"; } 2>"$f.cpu" ;;
	esac
	local ds=$(($(ticks $srvname) - s0)) cpu amount extra
	cpu=$(tail -1 "$f.cpu" | awk '{print $1+$2}')
	case $tool in
	wrk) amount=$(awk '/requests in/{print $1}' "$f"); extra=$(awk '/requests in/{sub(/s,$/, "", $4); print $4}' "$f") ;;
	http_qps) amount=$(awk '/requests\/s:/{print $3}' "$f"); extra=$DUR ;;
	sockperf)
		amount=$(sed 's/\x1b\[[0-9;]*m//g' "$f" | sed -nE 's/.*\[Valid Duration\].*ReceivedMessages=([0-9]+).*/\1/p')
		# rate over sockperf's valid window; p99 in us
		extra="$(sed 's/\x1b\[[0-9;]*m//g' "$f" | sed -nE 's/.*\[Valid Duration\] RunTime=([0-9.]+) sec.*/\1/p') $(sed 's/\x1b\[[0-9;]*m//g' "$f" | awk '/percentile 99.000 =/{print $NF}')" ;;
	tcp_rr) amount=$(awk '/transactions\/s:/{print $3}' "$f"); extra="$(awk '/transactions\/s:/{print $5}' "$f") $(awk '/latency \(us\)/{print $8}' "$f")" ;;
	iperf3) amount=$(jq '.end.sum_received.bytes' "$f"); extra=$(jq '.end.sum_received.seconds' "$f") ;;
	tcp_stream) amount=$(awk '/Gbit\/s:/{print $3}' "$f"); extra=$(awk '/Gbit\/s:/{print $6}' "$f") ;;
	esac
	echo "${amount:-0} $cpu $ds $extra"
}

declare -A REF=([http]=wrk [rr]=sockperf [stream]=iperf3) OURS=([http]=http_qps [rr]=tcp_rr [stream]=tcp_stream)
SUMMARY=()
for path in ${PATHS//,/ }; do
	for pair in ${PAIRS//,/ }; do
		ref=${REF[$pair]} ours=${OURS[$pair]}
		echo
		case $pair in
		http) echo "== $path: $ours vs $ref (-c$CONNS -t1, ${DUR}s, nginx 350 B on CPU 1) =="
			printf "%-6s %12s %12s %12s %12s %8s %8s %14s\n" round ${ref}_req/s ${ours}_req/s ${ref}_us/req ${ours}_us/req rate_x cpu_x nginx_us/req ;;
		rr) echo "== $path: $ours vs $ref ping-pong (16 B, one connection, ${DUR}s) =="
			printf "%-6s %12s %12s %10s %10s %12s %12s %8s %8s\n" round ${ref}_tps ${ours}_tps ${ref}_p99 ${ours}_p99 ${ref}_us/tr ${ours}_us/tr rate_x p99_x ;;
		stream) echo "== $path: $ours vs $ref ($SSIZE B writes, one connection, ${DUR}s) =="
			printf "%-6s %12s %12s %14s %14s %8s %8s\n" round ${ref}_Gbit/s ${ours}_Gbit/s ${ref}_ns/B ${ours}_ns/B rate_x cpu_x ;;
		esac
		tab="$OUT/$path.$pair.tab"
		: >"$tab"
		for r in $(seq "$ROUNDS"); do
			first=$ref second=$ours
			[ $((r % 2)) = 0 ] && first=$ours second=$ref
			declare -A RES=()
			RES[$first]=$(runone "$path" "$first" "$r")
			RES[$second]=$(runone "$path" "$second" "$r")
			read -r ra rc rs rx1 rx2 <<<"${RES[$ref]}"
			read -r oa oc os ox1 ox2 <<<"${RES[$ours]}"
			case $pair in
			http) awk -v r="$r" -v ra="$ra" -v rc="$rc" -v rs="$rs" -v rt="$rx1" -v oa="$oa" -v oc="$oc" -v os="$os" -v ot="$ox1" -v hz="$HZ" 'BEGIN{
				rr=ra/rt; orr=oa/ot; ru=rc/ra*1e6; ou=oc/oa*1e6;
				printf "%-6s %12.0f %12.0f %12.2f %12.2f %8.3f %8.3f %6.2f/%-6.2f\n", r, rr, orr, ru, ou, orr/rr, ou/ru, rs/hz/ra*1e6, os/hz/oa*1e6 }' ;;
			rr) awk -v r="$r" -v ra="$ra" -v rc="$rc" -v rt="$rx1" -v rp="$rx2" -v oa="$oa" -v oc="$oc" -v ot="$ox1" -v op="$ox2" 'BEGIN{
				rr=ra/rt; orr=oa/ot;
				printf "%-6s %12.0f %12.0f %10.1f %10.1f %12.2f %12.2f %8.3f %8.3f\n", r, rr, orr, rp, op, rc/ra*1e6, oc/oa*1e6, orr/rr, op/rp }' ;;
			stream) awk -v r="$r" -v ra="$ra" -v rc="$rc" -v rs="$rs" -v rt="$rx1" -v oa="$oa" -v oc="$oc" -v os="$os" -v ot="$ox1" -v hz="$HZ" 'BEGIN{
				rg=ra*8/rt/1e9; og=oa*8/ot/1e9; rn=(rc+rs/hz)/ra*1e9; on=(oc+os/hz)/oa*1e9;
				printf "%-6s %12.3f %12.3f %14.4f %14.4f %8.3f %8.3f\n", r, rg, og, rn, on, og/rg, on/rn }' ;;
			esac | tee -a "$tab"
			unset RES
		done
		case $pair in http | stream) c2=7 ;; rr) c2=9 ;; esac
		c1=$((c2 - 1))
		x=$(awk -v c=$c1 '{print $c}' "$tab" | median)
		y=$(awk -v c=$c2 '{print $c}' "$tab" | median)
		line=$(awk -v c1=$c1 -v c2=$c2 -v x="$x" -v y="$y" -v p="$path" -v o="$ours" -v f="$ref" -v k="$pair" '{n++; if ($c1 >= 1) a++; if ($c2 <= 1) b++} END{
			what = (k=="http") ? "CPU/request" : (k=="rr") ? "p99" : "CPU/byte";
			printf "%-8s %-10s / %-8s  rate %.3f (>= 1 in %d of %d)   %s %.3f (<= 1 in %d of %d)", p, o, f, x, a, n, what, y, b, n }' "$tab")
		echo "$line"
		SUMMARY+=("$line")
	done
done
echo
echo "== head-to-head ratios, cnperf / reference, medians over $ROUNDS rounds =="
printf "%s\n" "${SUMMARY[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); raw outputs: $OUT"
