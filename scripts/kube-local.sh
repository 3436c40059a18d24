#!/usr/bin/env bash
# A real Kubernetes cluster on one box, inside lab namespaces (as root):
#
#   scripts/kube-local.sh up [NODES]   (default 2)
#   scripts/kube-local.sh status
#   scripts/kube-local.sh kubectl ARGS...
#   scripts/kube-local.sh down
#   scripts/kube-local.sh selftest     what runs without Kubernetes binaries:
#                                      underlay, etcd, containerd + runc per
#                                      node, the pod network across nodes
#
# Layout (run id "kube", so `cnperf clean` knows it, and leaves it alone while
# its owner, etcd, lives):
#   cnperf-kube-sw   underlay switch (bridge br0), like a lab's
#   cnperf-kube-cp   10.100.0.250: etcd (Debian), kube-apiserver :6443,
#                    kube-controller-manager, kube-scheduler
#   cnperf-kube-nN   10.100.0.N: containerd (Debian, runc), kubelet, kube-proxy
#                    (iptables, legacy backend; KUBE_PROXY_MODE=nftables,
#                    KUBE_IPTABLES=nft); pods on cni0 from Debian's bridge + host-local
#                    plugins in 10.244.N.0/24, routes to the other nodes' pod
#                    subnets via their underlay addresses (host-gw).
# Each node's processes share a private mount namespace whose /run/netns is
# its own tmpfs (pod network namespaces and every mount die with it); every
# process sits in the cgroup subtree /cnperf-kube (the kubelets' cgroupRoot is
# /cnperf-kube/nN), so `down` finds and kills all of them, then removes the
# cgroups, the namespaces and the state folder. The host's own network
# namespace is never touched: every process is started with
# nsenter --net=/run/netns/cnperf-kube-*.
#
# The Kubernetes binaries come from scripts/kube-build.sh (cached); the pause
# image and the agent image (a static cnperf, `cnperf image build`) are built here and imported with
# `ctr -n k8s.io images import`; nothing is pulled.
#
# Access: `scripts/kube-local.sh kubectl get nodes`, or any client run inside
# cnperf-kube-cp with KUBECONFIG=/run/cnperf/kube/admin.kubeconfig
# (/run/cnperf/kube/norights.kubeconfig: a user bound to no role).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ID=kube
P=cnperf-$ID
D=/run/cnperf/$ID
CP_IP=10.100.0.250
SVC_CIDR=10.96.0.0/16
POD_CIDR=10.244.0.0/16
CG=$P # lab.RunCgroup("kube"): `cnperf clean` kills and removes it for a dead cluster
PAUSE_IMAGE=cnperf.local/pause:1
AGENT_IMAGE=cnperf.local/agent:dev

log() { echo "kube-local: $*" >&2; }
die() { log "$*"; exit 1; }
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }

# cgroup v1 hierarchies (or the v2 root) where /cnperf-kube lives.
cg_roots() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then echo /sys/fs/cgroup; return; fi
  local d
  for d in /sys/fs/cgroup/*/; do
    d=${d%/}
    [[ -f $d/cgroup.procs && ! -L $d ]] && echo "$d"
  done
  return 0
}

# mkcg NAME: /cnperf-kube/NAME in every hierarchy (a v1 cpuset needs its
# cpus and mems filled in before it takes a process)
mkcg() {
  local r d
  for r in $(cg_roots); do
    for d in "$r/$CG" "$r/$CG/$1"; do
      mkdir -p "$d"
      if [[ -f $r/cpuset.cpus && -f $d/cpuset.cpus && -z $(cat "$d/cpuset.cpus") ]]; then
        cat "$r/cpuset.cpus" >"$d/cpuset.cpus"
        cat "$r/cpuset.mems" >"$d/cpuset.mems"
      fi
    done
  done
}

# start NAME NS CGROUP CMD...: runs CMD in network namespace NS, in cgroup
# /cnperf-kube/CGROUP of every hierarchy, logging to $D/log/NAME.log.
start() {
  local name=$1 ns=$2 cg=$3; shift 3
  mkcg "$cg"
  # the child joins the cgroups itself, then becomes CMD
  setsid bash -c '
    for r in $1; do echo $$ > "$r/'"$CG/$cg"'/cgroup.procs"; done
    shift; exec "$@"' _ "$(cg_roots | tr '\n' ' ')" \
    nsenter --net="/run/netns/$ns" "$@" >"$D/log/$name.log" 2>&1 </dev/null &
  echo $! >"$D/pid/$name"
}

# wait_for SECONDS WHAT PROC CMD...: until CMD succeeds; fails at once when
# the process started as PROC has exited, with the last line of its log
wait_for() {
  local t=$1 what=$2 proc=$3; shift 3
  local i
  for ((i = 0; i < t * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$(cat "$D/pid/$proc")" 2>/dev/null; then
      die "$what exited: $(tail -n 1 "$D/log/$proc.log")"
    fi
    sleep 0.5
  done
  die "$what not up after ${t}s"
}

# mkimage NAME BINARY OUT: a docker-archive image of one static binary at
# /BASENAME (its entrypoint), plus an empty /tmp.
mkimage() {
  local name=$1 bin=$2 out=$3 t
  t=$(mktemp -d)
  mkdir -p "$t/root/tmp"
  chmod 1777 "$t/root/tmp"
  cp "$bin" "$t/root/"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$t/root" -cf "$t/layer.tar" .
  local diff cfg sum
  diff=$(sha256sum "$t/layer.tar" | cut -d' ' -f1)
  cfg='{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/'"$(basename "$bin")"'"]},"rootfs":{"type":"layers","diff_ids":["sha256:'"$diff"'"]}}'
  sum=$(printf '%s' "$cfg" | sha256sum | cut -d' ' -f1)
  printf '%s' "$cfg" >"$t/$sum.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$sum" "$name" >"$t/manifest.json"
  tar -C "$t" -cf "$out" manifest.json "$sum.json" layer.tar
  rm -rf "$t"
}

# registry_hosts: where the nodes pull from, besides the imported images.
# Registries on the control-plane host (none runs by default; the
# integration test starts Debian's docker-registry there) speak plain HTTP:
# REGISTRY_PORT as 127.0.0.1:PORT, the address a push from the control
# plane uses, mirrored to $CP_IP:PORT where the nodes reach it, and
# REGISTRY_PORT+1 as $CP_IP:PORT+1 itself (credentials match the host a
# node contacts, so the authenticated one is not mirrored).
REGISTRY_PORT=5000
registry_hosts() {
  local h d
  for h in "127.0.0.1:$REGISTRY_PORT=$CP_IP:$REGISTRY_PORT" "$CP_IP:$REGISTRY_PORT=$CP_IP:$REGISTRY_PORT" "$CP_IP:$((REGISTRY_PORT + 1))=$CP_IP:$((REGISTRY_PORT + 1))"; do
    d="$D/certs.d/${h%%=*}"
    mkdir -p "$d"
    printf 'server = "http://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "${h#*=}" "${h#*=}" >"$d/hosts.toml"
  done
}

kubeconfig() { # kubeconfig FILE [TOKENFILE]: the admin token (or TOKENFILE's), TLS unverified (a lab)
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://$CP_IP:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $(cat "${2:-$D/token}")
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
EOF
}

cni_bridge() { # cni_bridge N: the bridge plugin's fields for node nN
  echo '"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "'"$D/n$1/ipam"'",
        "ranges": [[{"subnet": "10.244.'"$1"'.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}'
}

node_conf() { # node_conf N: containerd, CNI, kubelet and kube-proxy configs
  local n=$1 nd="$D/n$1"
  mkdir -p "$nd/cni" "$nd/kubelet" "$nd/podlogs"
  cat >"$nd/containerd.toml" <<EOF
version = 2
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$nd/containerd.sock"
[ttrpc]
  address = "$nd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # kubelet asks -998 for sandboxes (and -997 for Guaranteed pods): lowering
  # oom_score_adj is refused on some machines (this one: even for root, so
  # runc failed every sandbox with "can't get final child's PID from pipe");
  # clamp it to containerd's own, as rootless setups do
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$D/certs.d"
EOF
  cat >"$nd/cni/10-cnperf.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "cnperf-kube",
  "plugins": [
    {$(cni_bridge "$n")},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$nd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$CG/n$n
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
readOnlyPort: 0
podLogsDir: $nd/podlogs
maxPods: 110
resolvConf: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1%", nodefs.available: "1%", imagefs.available: "1%"}
EOF
  cat >"$nd/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $D/admin.kubeconfig}
hostnameOverride: n$n
bindAddress: 10.100.0.$n
clusterCIDR: $POD_CIDR
mode: ${KUBE_PROXY_MODE:-iptables}
conntrack: {maxPerCore: 0, min: 0}
metricsBindAddress: 10.100.0.$n:10249 # /proxyMode, read by cnperf through the API server's node proxy
healthzBindAddress: 127.0.0.1:10256
EOF
}

# iptables_bin DIR: iptables, iptables-save, iptables-restore (and the
# ip6tables ones) in DIR, first in the node's PATH, as the backend
# KUBE_IPTABLES names: legacy (x_tables, the default: cnperf's replica
# --lb iptables programs the same, and Debian's iptables-nft needs minutes
# to restore 10,000 services) or nft (Debian's default `iptables`).
iptables_bin() {
  local dir=$1 v t
  mkdir -p "$dir"
  for v in iptables ip6tables; do
    for t in "" -save -restore; do
      ln -sf "/usr/sbin/$v-${KUBE_IPTABLES:-legacy}$t" "$dir/$v$t"
    done
  done
}

# proxy_mode_check: KUBE_PROXY_MODE is one kube-proxy has and this kernel
# runs (IPVS needs the kernel's IP_VS, which shows as /proc/net/ip_vs)
proxy_mode_check() {
  case ${KUBE_PROXY_MODE:-iptables} in
  iptables) ;;
  nftables) command -v nft >/dev/null || die "KUBE_PROXY_MODE=nftables needs nft; run scripts/install-deps.sh" ;;
  ipvs)
    [[ -e /proc/net/ip_vs ]] ||
      die "KUBE_PROXY_MODE=ipvs: this kernel has no IPVS (CONFIG_IP_VS: no /proc/net/ip_vs); use KUBE_PROXY_MODE=iptables or nftables"
    ;;
  *) die "KUBE_PROXY_MODE=${KUBE_PROXY_MODE}: use iptables (the default), nftables or ipvs" ;;
  esac
  case ${KUBE_IPTABLES:-legacy} in
  legacy | nft)
    [[ -x /usr/sbin/iptables-${KUBE_IPTABLES:-legacy}-restore ]] ||
      die "KUBE_IPTABLES=${KUBE_IPTABLES:-legacy} needs /usr/sbin/iptables-${KUBE_IPTABLES:-legacy}-restore; run scripts/install-deps.sh (Debian's iptables)"
    ;;
  *) die "KUBE_IPTABLES=${KUBE_IPTABLES}: use legacy (the default) or nft" ;;
  esac
}

up() {
  local nodes=${1:-2}
  [[ $nodes =~ ^[1-9][0-9]?$ ]] || die "up: $nodes nodes; use 1 to 99"
  [[ $EUID -eq 0 ]] || die "run as root (it creates namespaces)"
  proxy_mode_check
  [[ ! -e /run/netns/$P-sw ]] || die "a cluster is already up (or left over): scripts/kube-local.sh down"
  local b
  for b in etcd containerd runc ctr nsenter unshare openssl /usr/lib/cni/bridge; do
    command -v "$b" >/dev/null || die "missing $b; run scripts/install-deps.sh"
  done
  local bin
  bin=$("$here/scripts/kube-build.sh" kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl | tail -1)
  mkdir -p "$D"/{log,pid,etcd,pki,images}
  echo "$bin" >"$D/bin"
  registry_hosts
  # a failed or interrupted up leaves nothing but its logs
  trap 'up_failed' EXIT
  trap 'exit 130' INT TERM # so that the EXIT trap runs
  up_images
  up_net "$nodes"
  up_etcd
  up_control "$bin"
  local n
  for n in $(seq 1 "$nodes"); do up_node "$n" "$bin"; done
  for n in $(seq 1 "$nodes"); do
    wait_for 180 "node n$n Ready and untainted" "node-n$n" node_ready "n$n"
    # the pod network is plain files on the node: say what it is where the
    # API shows it (cnperf's kubernetes backend records it)
    kctl annotate node "n$n" --overwrite cnperf.cni="bridge+host-local (containernetworking-plugins), host-gw routes" >/dev/null
  done
  trap - EXIT INT TERM
  log "up: $nodes nodes Ready"
  kctl get nodes -o wide >&2
}

up_failed() {
  local keep=/tmp/cnperf-kube-failed-logs
  rm -rf "$keep"
  cp -r "$D/log" "$keep" 2>/dev/null || true
  log "up failed; its logs are in $keep; removing the cluster"
  down
}

# images: pause and the agent (static cnperf), built locally
up_images() {
  local t
  t=$(mktemp -d)
  (cd "$here/kube" && CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w" -o "$t/pause" ./pause)
  (cd "$here" && CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w" -o "$t/cnperf" ./cmd/cnperf)
  mkimage "$PAUSE_IMAGE" "$t/pause" "$D/images/pause.tar"
  # the agent image as users make theirs (docs/kubernetes.md), imported below
  "$t/cnperf" image build --binary "$t/cnperf" --tag "$AGENT_IMAGE" --out "$D/images/agent.tar" >/dev/null
  rm -rf "$t"
}

# underlay: switch + control-plane host + node hosts
up_net() {
  local nodes=$1
  ip netns add "$P-sw"
  ip -n "$P-sw" link set lo up
  ip -n "$P-sw" link add br0 type bridge
  ip -n "$P-sw" link set br0 up
  local h ip
  for h in cp $(seq -f 'n%g' 1 "$nodes"); do
    if [[ $h == cp ]]; then ip=$CP_IP; else ip=10.100.0.${h#n}; fi
    ip netns add "$P-$h"
    ip -n "$P-$h" link set lo up
    ip -n "$P-sw" link add "$h" type veth peer name eth0 netns "$P-$h"
    ip -n "$P-sw" link set "$h" master br0 up
    ip -n "$P-$h" addr add "$ip/24" dev eth0
    ip -n "$P-$h" link set eth0 up
    in_ns "$P-$h" sysctl -q -w net.ipv4.ip_forward=1
  done
  # host-gw: every node routes the others' pod subnets via their address;
  # the control plane reaches pods (port-forward goes through kubelets).
  local n m
  for h in cp $(seq -f 'n%g' 1 "$nodes"); do
    for m in $(seq 1 "$nodes"); do
      [[ $h == "n$m" ]] || ip -n "$P-$h" route add "10.244.$m.0/24" via "10.100.0.$m"
    done
    # nodes have no default route: a route for the service range lets
    # host-network processes reach ClusterIPs (OUTPUT DNATs after routing)
    [[ $h == cp ]] || ip -n "$P-$h" route add "$SVC_CIDR" dev eth0
  done
}

up_etcd() {
  # control plane credentials: one admin token (system:masters), the
  # service-account key; the API server makes its own serving certificate
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$D/token"
  echo "$(cat "$D/token"),admin,admin,system:masters" >"$D/pki/tokens.csv"
  # a user bound to nothing (only what every authenticated user may):
  # what a kubeconfig without cnperf's RBAC gets
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$D/token-norights"
  echo "$(cat "$D/token-norights"),norights,norights" >>"$D/pki/tokens.csv"
  openssl genrsa -out "$D/pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$D/pki/sa.key" -pubout -out "$D/pki/sa.pub" 2>/dev/null
  kubeconfig "$D/admin.kubeconfig"
  kubeconfig "$D/norights.kubeconfig" "$D/token-norights"

  start etcd "$P-cp" cp etcd --name cp --data-dir "$D/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster cp=http://127.0.0.1:2380
  # owner stamp for `cnperf clean`: pid and start time of etcd
  sleep 0.2
  local epid
  epid=$(cat "$D/pid/etcd")
  echo "$epid $(sed 's/.*) //' "/proc/$epid/stat" | cut -d' ' -f20)" >"$D/owner"
  wait_for 60 etcd etcd in_ns "$P-cp" etcdctl --endpoints http://127.0.0.1:2379 endpoint health
}

up_control() {
  local bin=$1
  start kube-apiserver "$P-cp" cp "$bin/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --secure-port=6443 \
    --advertise-address=$CP_IP --cert-dir="$D/pki" --token-auth-file="$D/pki/tokens.csv" \
    --authorization-mode=Node,RBAC --service-cluster-ip-range=$SVC_CIDR --allow-privileged=true \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$D/pki/sa.pub" --service-account-signing-key-file="$D/pki/sa.key" \
    --enable-priority-and-fairness=false --profiling=false \
    --kubelet-preferred-address-types=InternalIP --delete-collection-workers=16
  # (a namespace's deletion deletes each kind with one deletecollection,
  # which the API server works through with --delete-collection-workers,
  # default 1: 10,000 Services went at 2 per second)
  # (kubelets are reached by address: the default tries the Hostname address
  # first, "nN", which nothing resolves here; logs, exec and port-forward
  # and the node proxy go through it)
  wait_for 180 kube-apiserver kube-apiserver kctl get --raw /readyz

  start kube-controller-manager "$P-cp" cp "$bin/kube-controller-manager" \
    --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 \
    --service-account-private-key-file="$D/pki/sa.key" --root-ca-file="$D/pki/apiserver.crt" \
    --use-service-account-credentials=false --controllers='*,-node-ipam-controller' --profiling=false \
    --kube-api-qps=500 --kube-api-burst=1000 --concurrent-service-endpoint-syncs=10
  # (its own client's default 20 requests per second would take 8 minutes
  # to write the EndpointSlices of 10,000 Services, and as long to delete
  # them with their namespace)
  start kube-scheduler "$P-cp" cp "$bin/kube-scheduler" \
    --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --profiling=false
}

# up_node N BIN: node nN's containerd (images imported), kubelet, kube-proxy.
# Without BIN/kubelet only containerd runs (a partial node, for debugging).
up_node() {
  local n=$1 bin=$2
  node_conf "$n"
  iptables_bin "$D/n$n/bin"
  mkcg "n$n" # the kubelet's cgroupRoot must exist
  local nd="$D/n$n"
  # one private mount namespace per node for containerd, kubelet and the
  # pods' mounts; /run/netns there is its own tmpfs for pod namespaces
  start "node-n$n" "$P-n$n" "n$n-sys" unshare -m --propagation private bash -c '
      set -e
      mount -t tmpfs -o mode=755 tmpfs /run/netns
      # shim sockets and runc state go under the fixed /run/containerd,
      # which the host'"'"'s own containerd (Docker'"'"'s) uses as well
      mkdir -p /run/containerd
      mount -t tmpfs -o mode=700 tmpfs /run/containerd
      mount --make-rshared /
      # kubelet sets these machine-wide sysctls to its values at start
      # (pkg/kubelet/cm setupKernelTunables): show it files that already
      # hold them, so that the real kernel settings stay untouched
      mkdir -p "$1/sysctl"
      for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
        kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
        f="$1/sysctl/$(echo "${kv%=*}" | tr / .)"
        echo "${kv#*=}" >"$f"
        mount --bind "$f" "/proc/sys/${kv%=*}"
      done
      containerd --config "$1/containerd.toml" >"$2/containerd-n$3.log" 2>&1 &
      for i in $(seq 100); do [ -S "$1/containerd.sock" ] && break; sleep 0.2; done
      for img in pause agent; do
        ctr -a "$1/containerd.sock" -n k8s.io images import --no-unpack=false "$4/images/$img.tar" >>"$2/containerd-n$3.log" 2>&1
      done
      [ -x "$5/kubelet" ] || exec sleep infinity
      # kubelet and kube-proxy run `iptables` by that name: it is the
      # backend KUBE_IPTABLES names (see iptables_bin)
      export PATH="$1/bin:$PATH"
      "$5/kubelet" --config="$1/kubelet.yaml" --kubeconfig="$4/admin.kubeconfig" \
        --root-dir="$1/kubelet" --hostname-override="n$3" --node-ip="10.100.0.$3" \
        >"$2/kubelet-n$3.log" 2>&1 &
      "$5/kube-proxy" --config="$1/kube-proxy.yaml" >"$2/kube-proxy-n$3.log" 2>&1 &
      wait' _ "$nd" "$D/log" "$n" "$D" "$bin"
}

kctl() { in_ns "$P-cp" "$(cat "$D/bin")/kubectl" --kubeconfig="$D/admin.kubeconfig" "$@"; }

# node_ready NODE: Ready, and without taints: the node lifecycle controller
# takes node.kubernetes.io/not-ready off a moment after Ready, and until
# then nothing is scheduled there (cnperf counts it out)
node_ready() {
  local s
  s=$(kctl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}') || return 1
  [[ $s == True/ ]]
}

# every pid in the /cnperf-kube subtree of any hierarchy
cg_pids() {
  local r
  for r in $(cg_roots); do
    [[ -d $r/$CG ]] && find "$r/$CG" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

down() {
  local pid i r
  # politely first: kubelets and kube-proxies, then the rest
  for pid in $(cg_pids); do kill -TERM "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 50; i++)); do
    [[ -z $(cg_pids) ]] && break
    sleep 0.2
  done
  for ((i = 0; i < 50; i++)); do
    [[ -z $(cg_pids) ]] && break
    for pid in $(cg_pids); do kill -KILL "$pid" 2>/dev/null || true; done
    sleep 0.2
  done
  [[ -z $(cg_pids) ]] || log "down: processes still in /$CG: $(cg_pids | tr '\n' ' ')"
  for r in $(cg_roots); do
    [[ -d $r/$CG ]] && find "$r/$CG" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ -d $r/$CG ]] && log "down: cgroup $r/$CG still there"
  done
  local ns
  for ns in /run/netns/$P-*; do
    [[ -e $ns ]] || continue
    ip netns del "$(basename "$ns")" || log "down: could not delete $(basename "$ns")"
  done
  rm -rf "$D"
  rmdir /run/cnperf 2>/dev/null || true # only when empty
  # /run/containerd stays: other containerds' shims (Docker's) use it too
  log "down: done"
}

# selftest: the cluster's parts that need no Kubernetes binary, on 2 nodes:
# etcd answers; each node's containerd runs the agent image through runc;
# the bridge/host-local plugins give a pod on each node its address, and a
# TCP connection from the n1 pod reaches the n2 pod with its own source
# address (host-gw, no NAT). Everything is removed afterwards.
selftest() {
  [[ $EUID -eq 0 ]] || die "run as root (it creates namespaces)"
  [[ ! -e /run/netns/$P-sw ]] || die "a cluster is up (or left over): scripts/kube-local.sh down first"
  command -v iperf3 >/dev/null || die "missing iperf3; run scripts/install-deps.sh"
  mkdir -p "$D"/{log,pid,etcd,pki,images}
  echo /nonexistent >"$D/bin"
  trap down EXIT
  trap 'exit 130' INT TERM # so that the EXIT trap runs
  up_images
  up_net 2
  up_etcd
  log "selftest: etcd healthy"
  local n
  for n in 1 2; do up_node "$n" /nonexistent; done
  for n in 1 2; do
    wait_for 120 "node n$n images" "node-n$n" node_imported "$n"
    node_ctr "$n" run --rm --cgroup "/$CG/n$n/selftest" "$AGENT_IMAGE" selftest /cnperf version >/dev/null ||
      die "selftest: node n$n could not run a container"
    log "selftest: node n$n: containerd ran $AGENT_IMAGE via runc"
    ip netns add "$P-n$n-t"
    echo "{\"cniVersion\": \"1.0.0\", \"name\": \"cnperf-kube\", $(cni_bridge "$n")}" >"$D/n$n/cni-bridge.json"
    in_ns "$P-n$n" env CNI_COMMAND=ADD CNI_CONTAINERID="selftest$n" CNI_NETNS="/run/netns/$P-n$n-t" \
      CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni /usr/lib/cni/bridge <"$D/n$n/cni-bridge.json" >"$D/log/cni-n$n.json" ||
      die "selftest: the bridge plugin failed on n$n: $(cat "$D/log/cni-n$n.json")"
  done
  ip netns exec "$P-n2-t" iperf3 -s -1 -B 10.244.2.2 >"$D/log/iperf3-server.log" 2>&1 &
  local server=$!
  sleep 1
  ip netns exec "$P-n1-t" iperf3 -c 10.244.2.2 -n 64K >"$D/log/iperf3-client.log" 2>&1 ||
    die "selftest: no TCP from the n1 pod to the n2 pod: $(tail -n 1 "$D/log/iperf3-client.log")"
  wait "$server"
  grep -q "Accepted connection from 10.244.1.2" "$D/log/iperf3-server.log" ||
    die "selftest: the n2 pod saw another source: $(grep Accepted "$D/log/iperf3-server.log")"
  log "selftest: pod 10.244.1.2 on n1 -> pod 10.244.2.2 on n2 over the underlay, source kept"
  for n in 1 2; do
    in_ns "$P-n$n" env CNI_COMMAND=DEL CNI_CONTAINERID="selftest$n" CNI_NETNS="/run/netns/$P-n$n-t" \
      CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni /usr/lib/cni/bridge <"$D/n$n/cni-bridge.json" || true
  done
  log "selftest: passed"
}

# node_ctr N ARGS...: ctr against node nN's containerd, inside its namespaces
node_ctr() {
  local n=$1 pid; shift
  pid=$(node_containerd "$n") || return 1
  nsenter -t "$pid" -m -n ctr -a "$D/n$n/containerd.sock" -n k8s.io "$@"
}

node_containerd() { # the pid of node nN's containerd
  local r p
  r=$(cg_roots | head -1)
  for p in $(cat "$r/$CG/n$1-sys/cgroup.procs" 2>/dev/null); do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == containerd ]] && { echo "$p"; return 0; }
  done
  return 1
}

node_imported() { # both images are in node nN's containerd
  local l
  l=$(node_ctr "$1" images ls -q) || return 1
  [[ $l == *"$PAUSE_IMAGE"* && $l == *"$AGENT_IMAGE"* ]]
}

status() {
  [[ -e /run/netns/$P-cp ]] || { log "no cluster up"; return 1; }
  kctl get nodes -o wide
  kctl get pods -A -o wide
}

# sourced (tests, debugging): define the functions only
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0
case ${1:-} in
up) shift; up "$@" ;;
down) down ;;
status) status ;;
kubectl) shift; kctl "$@" ;;
selftest) selftest ;;
*) die "usage: $0 up [NODES] | status | kubectl ARGS... | down | selftest" ;;
esac
