#!/usr/bin/env bash
# Installs what cnperf needs on Debian 12 (as root): Debian packages for the
# lab and the reference tools, and Go if it is missing. Safe to re-run.
set -euo pipefail

# Every package cnperf or its tests use; one per line so changes diff well.
PACKAGES=(
  iproute2       # ip, bridge: the lab
  iptables       # nat mode, kube-proxy iptables
  nftables       # kube-proxy nftables
  conntrack      # services: flushing a load balancer's conntrack entries
  ethtool        # offloads in the environment record
  procps         # sysctl
  iperf3         # validation: stream engine against iperf3
  iperf          # validation: stream engine against iperf 2 (iperf2_tcp)
  nuttcp         # validation: stream engine against nuttcp (nuttcp_tcp)
  sockperf       # validation: rr engine against sockperf
  wrk            # validation: closed-loop HTTP against wrk
  nginx-light    # the study's HTTP server
  bird2          # calico-bgp control plane
  etcd-server    # flannel / docker-overlay KV store
  etcd-client    # etcdctl
  containerd     # cnperf cluster: each node's container runtime
  runc           # containerd's OCI runtime
  containernetworking-plugins  # startup_cni: the real CNI plugins; cnperf cluster: the pod network
  clang          # eBPF: regenerating objects
  llvm
  libbpf-dev
  bpftool
  chromium       # the HTML report test renders the page headless
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# the docker backend: Debian's engine (dockerd, containerd, runc), unless
# an engine is already installed (e.g. Docker's own docker-ce packages)
command -v dockerd >/dev/null || missing+=(docker.io)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# nginx-light's package starts a system nginx on port 80 when it is first
# installed; cnperf starts its own inside pods. Stop the one we just caused,
# never one that was already there.
if [[ " ${missing[*]:-} " == *" nginx-light "* ]]; then
  if command -v systemctl >/dev/null && systemctl is-active -q nginx 2>/dev/null; then
    systemctl stop nginx || true
  elif [ -x /etc/init.d/nginx ]; then
    /etc/init.d/nginx stop >/dev/null 2>&1 || true
  fi
fi

if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH=$PATH:/usr/local/go/bin
  else
    apt-get install -y -qq golang-go >/dev/null
  fi
fi
go version
