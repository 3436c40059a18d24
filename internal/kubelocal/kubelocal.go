// Package kubelocal runs a real Kubernetes cluster on one machine, inside
// lab network namespaces (`cnperf cluster up | down | status | kubectl`):
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler in a
// control-plane host; on each node host containerd (runc), kubelet and
// kube-proxy, pods on the bridge and host-local CNI plugins with host-gw
// routes between nodes, or on real Flannel (flanneld, vxlan or host-gw). The underlay, the cgroups and the processes are
// package lab's: the cluster is the lab run "kube" whose hosts outlive
// cnperf.
//
// Layout (run id "kube", so `cnperf clean` knows it, and leaves it alone
// while its owner, etcd, lives):
//
//	cnperf-kube-sw   the underlay switch (bridge br0), as a lab's
//	cnperf-kube-cp   10.100.0.250: etcd, kube-apiserver :6443,
//	                 kube-controller-manager, kube-scheduler
//	cnperf-kube-nN   10.100.0.N: containerd, kubelet, kube-proxy; pods on
//	                 cni0 in 10.244.N.0/24, routes to the other nodes'
//	                 pod subnets via their underlay addresses (host-gw)
//
// Each node's processes share a private mount namespace whose /run/netns
// and /run/containerd are its own tmpfs (pod namespaces, shim sockets and
// every mount die with it); every process sits in the cgroup subtree
// /cnperf-kube (the kubelets' cgroupRoot is /cnperf-kube/nN), so Down
// finds and stops all of them, then removes the cgroups, the namespaces
// and the state folder. The host's own network namespace is never
// touched.
//
// The Kubernetes binaries come from scripts/kube-build.sh (a cache keyed
// by version); the pause and agent images are built from cnperf's source
// and imported into each node's containerd: nothing is pulled.
package kubelocal

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
)

// Version is the Kubernetes release the cluster runs: kube/go.mod's
// k8s.io/kubernetes, which scripts/kube-build.sh builds.
const Version = "v1.37.2"

// The cluster's fixed addresses and names.
const (
	DefaultID  = "kube"
	CPIP       = "10.100.0.250"
	Underlay   = "10.100.0.0/24"
	ServiceIPs = "10.96.0.0/16"
	PodCIDR    = "10.244.0.0/16"
	PauseImage = "cnperf.local/pause:1"
	AgentImage = "cnperf.local/agent:dev"
	// CNIBinDir holds the CNI plugins (Debian's containernetworking-plugins).
	CNIBinDir = "/usr/lib/cni"
	// AnnotCNI is the node annotation naming the pod network, which the API
	// shows no other way (package backend/kubernetes reads it).
	AnnotCNI = "cnperf.cni"
	// AnnotSystems names the real systems the cluster runs, by role, in
	// the words of the lab's replicas (result.Kubernetes.Systems).
	AnnotSystems = "cnperf.systems"
)

// FlannelVersion is the Flannel release of --cni flannel-*: what
// scripts/flannel-build.sh builds from the Go module proxy.
const FlannelVersion = "v0.28.10"

// CNIs are the pod networks the cluster can run: Debian's bridge and
// host-local plugins with host-gw routes cnperf adds (bridge), or real
// Flannel, whose flanneld leases each node a subnet in etcd and programs
// the datapath of its backend, or real Cilium (its agent on each node
// compiles and loads its eBPF datapath; with KubeProxyReplacement it also
// serves the Services, and no kube-proxy runs).
var CNIs = []string{"bridge", "flannel-vxlan", "flannel-host-gw", "cilium"}

// Binaries are the Kubernetes components the cluster runs.
var Binaries = []string{"kube-apiserver", "kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubectl"}

// Config shapes the cluster. Zero values take the defaults.
type Config struct {
	ID        string // run id (default "kube")
	Nodes     int    // 1 to 99
	ProxyMode string // kube-proxy's mode: iptables (default), nftables or ipvs
	Iptables  string // the iptables kubelet and kube-proxy run: legacy (default) or nft
	CNI       string // the pod network, one of CNIs (default bridge)
	// FlannelDir holds flanneld (default DefaultFlannelDir()).
	FlannelDir string
	// CiliumDir holds Cilium's binaries and datapath sources (default
	// DefaultCiliumDir()).
	CiliumDir string
	// KubeProxyReplacement: Cilium serves the Services (socket LB and tc
	// programs) and no kube-proxy runs (--cni cilium only).
	KubeProxyReplacement bool
	// CNIOpts are --cni-opt key=value: for cilium, routing=tunnel|native
	// and socket-lb=true|false.
	CNIOpts map[string]string
	BinDir  string // the Kubernetes binaries (default DefaultBinDir())
	// Src is cnperf's source tree, which Up builds the pause and agent
	// images from (default: found from the working folder).
	Src string
	// Lock is the file Up holds for as long as it runs (default
	// /run/lock/cnperf-cluster-ID.lock).
	Lock string
	// Wait bounds how long each part may take to come up (default 3 min).
	Wait time.Duration
	// Grace is how long Down lets processes exit after SIGTERM before
	// SIGKILL (default 10 s); StopLimit how long after that it waits for
	// them before failing (default 1 min).
	Grace, StopLimit time.Duration
	Log              io.Writer // progress (default os.Stderr)
}

// DefaultBinDir is where scripts/kube-build.sh puts the binaries:
// $CNPERF_CACHE (default /var/cache/cnperf)/kube-VERSION.
func DefaultBinDir() string {
	root := os.Getenv("CNPERF_CACHE")
	if root == "" {
		root = "/var/cache/cnperf"
	}
	return filepath.Join(root, "kube-"+Version)
}

// DefaultFlannelDir is where scripts/flannel-build.sh puts flanneld.
func DefaultFlannelDir() string {
	return filepath.Join(filepath.Dir(DefaultBinDir()), "flannel-"+FlannelVersion)
}

// flannel is the Flannel backend the cluster runs ("" for none).
func (cfg *Config) flannel() string {
	b, _ := strings.CutPrefix(cfg.CNI, "flannel-")
	if b == cfg.CNI {
		return ""
	}
	return b
}

func (cfg *Config) setDefaults() {
	if cfg.ID == "" {
		cfg.ID = DefaultID
	}
	if cfg.ProxyMode == "" {
		cfg.ProxyMode = "iptables"
	}
	if cfg.Iptables == "" {
		cfg.Iptables = "legacy"
	}
	if cfg.CNI == "" {
		cfg.CNI = "bridge"
	}
	if cfg.FlannelDir == "" {
		cfg.FlannelDir = DefaultFlannelDir()
	}
	if cfg.CiliumDir == "" {
		cfg.CiliumDir = DefaultCiliumDir()
	}
	if cfg.BinDir == "" {
		cfg.BinDir = DefaultBinDir()
	}
	if cfg.Lock == "" {
		dir := "/run/lock"
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			dir = "/run"
		}
		cfg.Lock = filepath.Join(dir, "cnperf-cluster-"+cfg.ID+".lock")
	}
	if cfg.Wait == 0 {
		cfg.Wait = 3 * time.Minute
	}
	if cfg.Grace == 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.StopLimit == 0 {
		cfg.StopLimit = time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
}

// validate checks what can be checked without touching anything.
func (cfg *Config) validate() error {
	switch {
	case cfg.Nodes < 1 || cfg.Nodes > 99:
		return fmt.Errorf("%d nodes; use --nodes 1 to 99", cfg.Nodes)
	case cfg.ProxyMode != "iptables" && cfg.ProxyMode != "nftables" && cfg.ProxyMode != "ipvs":
		return fmt.Errorf("kube-proxy mode %q; use --proxy-mode iptables (the default), nftables or ipvs", cfg.ProxyMode)
	case !slices.Contains(CNIs, cfg.CNI):
		return fmt.Errorf("pod network %q; use --cni %s", cfg.CNI, strings.Join(CNIs, ", "))
	case cfg.Iptables != "legacy" && cfg.Iptables != "nft":
		return fmt.Errorf("iptables backend %q; use --iptables legacy (the default) or nft", cfg.Iptables)
	}
	if err := cfg.validateCNIOpts(); err != nil {
		return err
	}
	if err := (&lab.Config{ID: cfg.ID}).Validate(); err != nil {
		return err
	}
	return nil
}

// Cluster is the local cluster of one Config: its names and paths.
type Cluster struct {
	cfg   Config
	check func(*Cluster, context.Context) error // refuses what cannot work, before anything is made
	steps []step                                // what Up does, in order (tests replace them)
	mu    sync.Mutex                            // guards procs: nodes start at once
	procs map[string]*lab.Proc
	lab   *lab.Lab
	// partial: the nodes run containerd only (Selftest, without the
	// Kubernetes binaries)
	partial bool
	token   string
}

// step is one part of Up.
type step struct {
	name string
	run  func(c *Cluster, ctx context.Context) error
}

// New returns the cluster cfg describes, checking cfg.
func New(cfg Config) (*Cluster, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Cluster{cfg: cfg, check: (*Cluster).preflight, steps: upSteps, procs: map[string]*lab.Proc{}}, nil
}

// Dir is the cluster's state folder (/run/cnperf/kube).
func (c *Cluster) Dir() string { return filepath.Join(lab.StateRoot, c.cfg.ID) }

// AdminKubeconfig is the kubeconfig of the admin user (system:masters).
func (c *Cluster) AdminKubeconfig() string { return filepath.Join(c.Dir(), "admin.kubeconfig") }

// NorightsKubeconfig is the kubeconfig of a user bound to no role: what a
// kubeconfig without cnperf's RBAC gets.
func (c *Cluster) NorightsKubeconfig() string { return filepath.Join(c.Dir(), "norights.kubeconfig") }

// NetNS is the network namespace of host h ("cp", "sw", "n1", ...).
func (c *Cluster) NetNS(h string) string { return lab.Prefix + c.cfg.ID + "-" + h }

// CPNetNS is the control plane's namespace, the only one from which the
// API server is reachable.
func (c *Cluster) CPNetNS() string { return c.NetNS("cp") }

func (c *Cluster) logDir() string           { return filepath.Join(c.Dir(), "log") }
func (c *Cluster) nodeDir(n int) string     { return filepath.Join(c.Dir(), nodeName(n)) }
func (c *Cluster) cgroup(sub string) string { return lab.RunCgroup(c.cfg.ID) + "/" + sub }
func nodeName(n int) string                 { return "n" + strconv.Itoa(n) }

// nodeIP and podCIDR are node n's underlay address and pod subnet, as
// the lab addresses its host n (a test holds them equal).
func (c *Cluster) nodeIP(n int) string  { return fmt.Sprintf("10.100.0.%d", n) }
func (c *Cluster) podCIDR(n int) string { return fmt.Sprintf("10.244.%d.0/24", n) }
