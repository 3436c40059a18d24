package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
)

// CiliumVersion is the Cilium release of --cni cilium: what
// scripts/cilium-build.sh builds from the Go module proxy.
const CiliumVersion = "v1.20.2"

// CiliumClang is the compiler the agent runs to build its datapath from
// bpf/ when it starts: Cilium's images ship LLVM 19, and Debian 12 has
// clang-19 (its default clang, 14, is too old for Cilium's C). A folder
// first in the agent's PATH names it clang (ciliumLinks).
const CiliumClang = "/usr/bin/clang-19"

// DefaultCiliumDir is where scripts/cilium-build.sh puts Cilium: the
// binaries, lib/bpf (the datapath's sources) and lib/crds.
func DefaultCiliumDir() string {
	return filepath.Join(filepath.Dir(DefaultBinDir()), "cilium-"+CiliumVersion)
}

// cilium says whether the cluster runs Cilium.
func (cfg *Config) cilium() bool { return cfg.CNI == "cilium" }

// ciliumNative says whether Cilium routes pods natively (--cni-opt
// routing=native: pod subnets routed between nodes on the underlay, as
// auto-direct-node-routes programs them) rather than through its vxlan
// tunnel (the default).
func (cfg *Config) ciliumNative() bool { return cfg.CNIOpts["routing"] == "native" }

// ciliumOpts are the --cni-opt keys --cni cilium reads, with their values.
var ciliumOpts = map[string][]string{"routing": {"tunnel", "native"}, "socket-lb": {"true", "false"}}

// validateCNIOpts checks --cni-opt against the CNI's keys.
func (cfg *Config) validateCNIOpts() error {
	if len(cfg.CNIOpts) > 0 && !cfg.cilium() {
		return fmt.Errorf("--cni-opt is for --cni cilium; --cni %s takes none", cfg.CNI)
	}
	for k, v := range cfg.CNIOpts {
		vals, ok := ciliumOpts[k]
		if !ok {
			return fmt.Errorf("--cni-opt %s: unknown key; use routing=tunnel|native or socket-lb=true|false", k)
		}
		found := false
		for _, x := range vals {
			found = found || x == v
		}
		if !found {
			return fmt.Errorf("--cni-opt %s=%s; use %s=%s", k, v, k, strings.Join(vals, "|"))
		}
	}
	if cfg.KubeProxyReplacement && !cfg.cilium() {
		return fmt.Errorf("--kube-proxy-replacement needs --cni cilium (kube-proxy's replacement is Cilium's)")
	}
	if cfg.CNIOpts["socket-lb"] == "false" && !cfg.KubeProxyReplacement {
		return fmt.Errorf("--cni-opt socket-lb=false is about Cilium's service load balancing; add --kube-proxy-replacement")
	}
	return nil
}

// ciliumSocketLB says whether Cilium balances services at the socket
// (connect-time rewrite, cgroup hooks) besides its tc programs.
func (cfg *Config) ciliumSocketLB() bool {
	return cfg.KubeProxyReplacement && cfg.CNIOpts["socket-lb"] != "false"
}

// ciliumSysctls are the machine-wide sysctls Cilium's agent sets when it
// starts (pkg/datapath/loader Reinitialize): inside a node's mount
// namespace, files holding the host's values are bound over /proc/sys (as
// kubelet's are), so that the agent's writes land in them and the host's
// settings never change. kernel.unprivileged_bpf_disabled=1 in particular
// cannot be undone. (The third, net.core.bpf_jit_enable, exists only in
// the host's network namespace: from a node's the agent cannot reach it,
// and says so in its log.)
var ciliumSysctls = []string{"kernel/unprivileged_bpf_disabled", "kernel/timer_migration"}

// ciliumCgroup is the cgroup v2 directory node n's agent attaches its
// socket programs to (its --cgroup-root): the node's own subtree, which
// holds its kubelet, containerd, agent and, born there, its pods; never a
// root the host's processes live in.
func (c *Cluster) ciliumCgroup(n int) string { return c.cgroup(nodeName(n)) }

// sysCgroup is where node n's daemons run: beside its pods (nN-sys) on
// the bridge and Flannel, inside the node's subtree (nN/sys) on Cilium, so
// that its agent's cgroup root covers them and the pods.
func (c *Cluster) sysCgroup(n int) string {
	if c.cfg.cilium() {
		return nodeName(n) + "/sys"
	}
	return nodeName(n) + "-sys"
}

// podCgroup is kubelet's cgroupRoot on node n.
func (c *Cluster) podCgroup(n int) string {
	if c.cfg.cilium() {
		return nodeName(n) + "/pods"
	}
	return nodeName(n)
}

// ciliumPreflight refuses, before anything is made, a Cilium cluster this
// machine cannot run.
func (c *Cluster) ciliumPreflight() error {
	var missing []string
	for _, b := range []string{"cilium-agent", "cilium-cni", "cilium-dbg"} {
		if !executable(filepath.Join(c.cfg.CiliumDir, b)) {
			missing = append(missing, b)
		}
	}
	if _, err := os.Stat(filepath.Join(c.cfg.CiliumDir, "lib", "bpf", "bpf_lxc.c")); err != nil {
		missing = append(missing, "lib/bpf")
	}
	if len(missing) > 0 {
		return fmt.Errorf("--cni cilium needs %s in %s; build them with scripts/cilium-build.sh", strings.Join(missing, ", "), c.cfg.CiliumDir)
	}
	if !executable(CiliumClang) {
		return fmt.Errorf("--cni cilium needs %s (the agent compiles its datapath with LLVM 19); run scripts/install-deps.sh (Debian's clang-19)", CiliumClang)
	}
	if c.cfg.ProxyMode != "iptables" && c.cfg.KubeProxyReplacement {
		return fmt.Errorf("--proxy-mode %s with --kube-proxy-replacement: no kube-proxy runs; drop one of them", c.cfg.ProxyMode)
	}
	return nil
}

// ciliumLinks are the programs the agent runs by name that must be other
// than the first on PATH: clang (LLVM 19) and llc.
func ciliumLinks() [][2]string {
	return [][2]string{{"clang", CiliumClang}, {"llc", "/usr/bin/llc-19"}}
}

// applyCiliumCRDs applies Cilium's CRDs from the module's own YAML: the
// operator, which registers them in a Cilium install, does not run here.
func (c *Cluster) applyCiliumCRDs(ctx context.Context) error {
	if !c.cfg.cilium() {
		return nil
	}
	if out, err := c.kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(c.cfg.CiliumDir, "lib", "crds")); err != nil {
		return fmt.Errorf("applying Cilium's CRDs: %w: %s", err, lastLine(string(out)))
	}
	return nil
}

// ciliumMounts are the mounts a node's private mount namespace gets
// under Cilium: its own bpffs (maps and links pinned there die with the
// node), its own /run/cilium (the agent's socket and state, which the CNI
// plugin finds at its fixed path) and the stand-ins for the machine-wide
// sysctls the agent writes.
func (c *Cluster) ciliumMounts(n int) [][]string {
	m := [][]string{
		{"mount", "-t", "bpf", "bpf", "/sys/fs/bpf"},
		{"mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run/cilium"},
	}
	for _, k := range ciliumSysctls {
		m = append(m, []string{"mount", "--bind", c.sysctlFile(n, k), "/proc/sys/" + k})
	}
	return m
}

// ciliumRunDir is made on the host when missing, as the mount point of
// every node's private /run/cilium, and removed at teardown when up made
// it (the marker file says so).
const ciliumRunDir = "/run/cilium"

func (c *Cluster) ciliumRunMarker() string { return filepath.Join(c.Dir(), "made-run-cilium") }

// prepareCilium readies the host for Cilium nodes before any starts: the
// cgroup v2 hierarchy (mounted by cnperf on a v1 host) and the mount point
// of /run/cilium.
func (c *Cluster) prepareCilium() error {
	if err := os.WriteFile(filepath.Join(c.Dir(), "cilium"), []byte(c.cfg.CiliumDir+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := lab.EnsureCgroup2(); err != nil {
		return err
	}
	if _, err := os.Stat(ciliumRunDir); os.IsNotExist(err) {
		if err := os.WriteFile(c.ciliumRunMarker(), nil, 0o644); err != nil {
			return err
		}
		if err := os.Mkdir(ciliumRunDir, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// releaseCilium undoes prepareCilium once the nodes are gone.
func (c *Cluster) releaseCilium() error {
	var errs []error
	if _, err := os.Stat(c.ciliumRunMarker()); err == nil {
		if err := os.Remove(ciliumRunDir); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("removing %s: %w", ciliumRunDir, err))
		}
	}
	if err := lab.ReleaseCgroup2(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ciliumAgentArgs is node n's cilium-agent command line.
func (c *Cluster) ciliumAgentArgs(n int, cgroup2 string) []string {
	nd := c.nodeDir(n)
	args := []string{filepath.Join(c.cfg.CiliumDir, "cilium-agent"),
		"--k8s-kubeconfig-path=" + c.AdminKubeconfig(),
		"--cluster-name=cnperf-" + c.cfg.ID,
		"--ipam=kubernetes", "--k8s-require-ipv4-pod-cidr",
		"--identity-allocation-mode=crd",
		"--enable-ipv4", "--enable-ipv6=false",
		"--devices=eth0",
		"--bpf-root=/sys/fs/bpf",
		"--cgroup-root=" + filepath.Join(cgroup2, c.ciliumCgroup(n)),
		"--lib-dir=" + filepath.Join(nd, "cilium-lib"),
		"--state-dir=/run/cilium",
		"--kube-proxy-replacement=" + strconv.FormatBool(c.cfg.KubeProxyReplacement),
		// what a kind or minikube install turns off too: no Envoy, no
		// Hubble, no health endpoints (they need binaries and ports the
		// measurement does not use)
		"--enable-l7-proxy=false", "--enable-hubble=false",
		"--enable-health-checking=false", "--enable-endpoint-health-checking=false",
		"--agent-health-port=9879",
	}
	if c.cfg.KubeProxyReplacement {
		// masquerading in BPF too, without which Cilium keeps the
		// kernel's routing between the pod and the NIC ("Host: Legacy"):
		// with it, eBPF host routing (bpf_redirect_peer/neigh), the
		// datapath the seed-003 study measured and the lab's ebpf network
		// replicates
		args = append(args, "--bpf-lb-sock="+strconv.FormatBool(c.cfg.ciliumSocketLB()), "--enable-bpf-masquerade")
	}
	if c.cfg.ciliumNative() {
		args = append(args, "--routing-mode=native", "--ipv4-native-routing-cidr="+PodCIDR, "--auto-direct-node-routes")
	} else {
		args = append(args, "--routing-mode=tunnel", "--tunnel-protocol=vxlan")
	}
	return args
}

// ciliumConflist is node n's CNI configuration under Cilium: its own
// plugin, which asks the node's agent (/run/cilium/cilium.sock) for the
// pod's address and datapath.
func ciliumConflist() string {
	return `{
  "cniVersion": "0.3.1",
  "name": "cilium",
  "plugins": [
    {"type": "cilium-cni", "enable-debug": false, "log-file": "/run/cilium/cilium-cni.log"}
  ]
}
`
}

// startCilium runs node n's Cilium agent once kubelet has registered the
// node: the node gets its pod subnet (Kubernetes IPAM: spec.podCIDR, set
// here, as the node IPAM controller would), the agent builds the node's
// datapath, and once it answers its status the node's CNI configuration
// is written: only then does kubelet call the node Ready.
func (c *Cluster) startCilium(ctx context.Context, n, mnt int, path []string) error {
	name := nodeName(n)
	if err := c.waitFor(ctx, "node "+name+" registered", "kubelet-"+name, func(ctx context.Context) error {
		_, err := c.kubectl(ctx, "get", "node", name, "-o", "name")
		return err
	}); err != nil {
		return err
	}
	cidr := c.podCIDR(n)
	if out, err := c.kubectl(ctx, "patch", "node", name, "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, cidr, cidr)); err != nil {
		return fmt.Errorf("giving node %s its pod subnet: %w: %s", name, err, lastLine(string(out)))
	}
	cg2 := lab.Cgroup2Mount()
	if cg2 == "" {
		return errors.New("no cgroup v2 mount")
	}
	lib := filepath.Join(c.nodeDir(n), "cilium-lib")
	if out, err := exec.CommandContext(ctx, "cp", "-r", filepath.Join(c.cfg.CiliumDir, "lib"), lib).CombinedOutput(); err != nil {
		return fmt.Errorf("copying Cilium's datapath sources: %w: %s", err, out)
	}
	agent := "cilium-agent-" + name
	// the agent finds its Node by this name (else by the hostname, the
	// machine's, which no node here has)
	env := append(append([]string{}, path...), "K8S_NODE_NAME="+name)
	if _, err := c.spawn(agent, name, c.sysCgroup(n), mnt, env, c.ciliumAgentArgs(n, cg2)...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "the Cilium agent of "+name, agent, func(ctx context.Context) error {
		out, err := c.in(ctx, name, mnt, filepath.Join(c.cfg.CiliumDir, "cilium-dbg"), "status", "--brief")
		if err != nil {
			return fmt.Errorf("%w: %s", err, lastLine(string(out)))
		}
		return nil
	}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.nodeDir(n), "cni", "05-cilium.conflist"), []byte(ciliumConflist()), 0o644)
}

// runsCilium says whether the cluster up runs Cilium (up records where
// its binaries are), and points cfg at them.
func (c *Cluster) runsCilium() bool {
	b, err := os.ReadFile(filepath.Join(c.Dir(), "cilium"))
	if err != nil {
		return false
	}
	c.cfg.CiliumDir = strings.TrimSpace(string(b))
	return true
}

// CiliumStatus is `cilium-dbg status` of each node, for `cnperf cluster
// status`: inside the node's namespaces, the agent's own words.
func (c *Cluster) ciliumStatus(ctx context.Context) string {
	var b strings.Builder
	for n := 1; ; n++ {
		pidb, err := os.ReadFile(filepath.Join(c.nodeDir(n), "mnt.pid"))
		if err != nil {
			break
		}
		mnt, _ := strconv.Atoi(strings.TrimSpace(string(pidb)))
		out, err := c.in(ctx, nodeName(n), mnt, filepath.Join(c.cfg.CiliumDir, "cilium-dbg"), "status")
		fmt.Fprintf(&b, "cilium-dbg status on %s:\n%s", nodeName(n), out)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
	}
	return b.String()
}
