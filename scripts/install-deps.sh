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
  ipset          # cnperf cluster --cni cilium: the agent keeps its masquerade exemptions in an ipset
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
  docker-registry  # cnperf image push: the agent image test's registry on loopback
  clang          # eBPF: regenerating objects
  llvm
  clang-19       # cnperf cluster --cni cilium: the agent compiles Cilium's datapath with LLVM 19
  llvm-19
  libbpf-dev
  bpftool
  chromium       # the HTML report test renders the page headless
  tmux           # the status-line test reads a real terminal
  zsh            # the completion test runs cnperf's zsh script
  fish           # the completion test runs cnperf's fish script
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
# docker-registry's likewise starts a registry on :5000; the tests start
# their own on a free loopback port.
for svc in nginx docker-registry; do
  pkg=$svc
  [[ $svc == nginx ]] && pkg=nginx-light
  if [[ " ${missing[*]:-} " == *" $pkg "* ]]; then
    if command -v systemctl >/dev/null && systemctl is-active -q "$svc" 2>/dev/null; then
      systemctl stop "$svc" || true
    elif [ -x "/etc/init.d/$svc" ]; then
      "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
    fi
  fi
done

if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH=$PATH:/usr/local/go/bin
  else
    apt-get install -y -qq golang-go >/dev/null
  fi
fi
go version
