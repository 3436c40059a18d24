#!/usr/bin/env bash
# 100 agent pods on each of n1 and n2 of the local cluster (cnperf cluster up --nodes 2),
# timed until all are Running, then deleted with their namespace (as root).
set -euo pipefail
yaml=$(mktemp)
trap 'rm -f "$yaml"' EXIT
K() { "${CNPERF:-cnperf}" cluster kubectl "$@"; } # CNPERF: the cnperf binary, if not on PATH
K create namespace cnperf-pods100 >/dev/null
for n in n1 n2; do
  for i in $(seq 1 100); do
    cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: a-$n-$i, namespace: cnperf-pods100}
spec:
  nodeName: $n
  restartPolicy: Never
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 1
  containers:
  - {name: a, image: cnperf.local/agent:dev, imagePullPolicy: IfNotPresent, command: [/cnperf, agent, --listen, "tcp:127.0.0.1:7000"]}
Y
  done
done >"$yaml"
t0=$(date +%s.%N)
K apply -f "$yaml" >/dev/null
while :; do
  r=$(K get pods -n cnperf-pods100 --field-selector=status.phase=Running -o name | wc -l)
  [ "$r" -ge 200 ] && break
  sleep 2
done
t1=$(date +%s.%N)
echo "200 pods Running (100 per node) after $(echo "$t1 - $t0" | bc) s"
K get pods -n cnperf-pods100 -o wide --no-headers | awk '{print $7}' | sort | uniq -c
K get pods -n cnperf-pods100 -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' | sort -u | wc -l
t2=$(date +%s.%N)
K delete namespace cnperf-pods100 --wait=true >/dev/null
echo "namespace deleted after $(echo "$(date +%s.%N) - $t2" | bc) s"
