package kubelocal

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// The files each part of the cluster reads, as text: pure functions of
// the cluster's layout, compared against goldens (testdata/).

// kubeconfig is a client configuration holding token, TLS unverified (a
// lab's API server makes its own certificate).
func (c *Cluster) kubeconfig(token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://%s:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, CPIP, token)
}

// cniBridge is the bridge plugin's fields for node n: pods on cni0, their
// addresses from the node's /24 by host-local.
func (c *Cluster) cniBridge(n int) string {
	return fmt.Sprintf(`"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "%s",
        "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}]}`, filepath.Join(c.nodeDir(n), "ipam"), c.podCIDR(n))
}

func (c *Cluster) cniConflist(n int) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "cnperf-kube",
  "plugins": [
    {%s},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, c.cniBridge(n))
}

func (c *Cluster) containerdConfig(n int) string {
	nd := c.nodeDir(n)
	return fmt.Sprintf(`version = 2
root = "%[1]s/containerd/root"
state = "%[1]s/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "%[1]s/containerd.sock"
[ttrpc]
  address = "%[1]s/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[2]s"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # kubelet asks -998 for sandboxes (and -997 for Guaranteed pods): lowering
  # oom_score_adj is refused on some machines (even for root, and runc then
  # failed every sandbox with "can't get final child's PID from pipe");
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
    bin_dir = "%[1]s/cnibin"
    conf_dir = "%[1]s/cni"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "%[3]s"
`, nd, PauseImage, c.certsDir())
}

// RegistryPort is where the nodes' containerd looks for registries on the
// control-plane host, besides the imported images (none runs by default;
// the integration test starts Debian's docker-registry there). They speak
// plain HTTP: RegistryPort as 127.0.0.1:PORT, the address a push from the
// control plane uses, mirrored to CPIP:PORT where the nodes reach it, and
// RegistryPort+1 as CPIP:PORT+1 itself (credentials match the host a node
// contacts, so the authenticated one is not mirrored).
const RegistryPort = 5000

func (c *Cluster) certsDir() string { return filepath.Join(c.Dir(), "certs.d") }

// registryHosts are containerd's hosts.toml files, by the registry host
// they stand for (certs.d/HOST/hosts.toml).
func registryHosts() map[string]string {
	open := fmt.Sprintf("%s:%d", CPIP, RegistryPort)
	auth := fmt.Sprintf("%s:%d", CPIP, RegistryPort+1)
	out := map[string]string{}
	for host, server := range map[string]string{fmt.Sprintf("127.0.0.1:%d", RegistryPort): open, open: open, auth: auth} {
		out[host] = fmt.Sprintf("server = \"http://%[1]s\"\n[host.\"http://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", server)
	}
	return out
}

// writeRegistryHosts writes registryHosts under certsDir.
func (c *Cluster) writeRegistryHosts() error {
	for host, toml := range registryHosts() {
		d := filepath.Join(c.certsDir(), host)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, "hosts.toml"), []byte(toml), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) kubeletConfig(n int) string {
	nd := c.nodeDir(n)
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://%[1]s/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /%[2]s
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
readOnlyPort: 0
podLogsDir: %[1]s/podlogs
maxPods: 110
resolvConf: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1%%", nodefs.available: "1%%", imagefs.available: "1%%"}
`, nd, c.cgroup(c.podCgroup(n)))
}

func (c *Cluster) kubeProxyConfig(n int) string {
	ip := c.nodeIP(n)
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %s}
hostnameOverride: %s
bindAddress: %s
clusterCIDR: %s
mode: %s
conntrack: {maxPerCore: 0, min: 0}
metricsBindAddress: %s:10249 # /proxyMode, read by cnperf through the API server's node proxy
healthzBindAddress: 127.0.0.1:10256
`, c.AdminKubeconfig(), nodeName(n), ip, PodCIDR, c.cfg.ProxyMode, ip)
}

// kubeletSysctls are the machine-wide sysctls kubelet sets to these values
// when it starts (pkg/kubelet/cm setupKernelTunables): inside a node's
// mount namespace, files already holding them are bound over /proc/sys,
// so that the host's own settings never change.
var kubeletSysctls = [][2]string{
	{"vm/overcommit_memory", "1"}, {"vm/panic_on_oom", "0"}, {"kernel/panic", "10"}, {"kernel/panic_on_oops", "1"},
	{"kernel/keys/root_maxkeys", "1000000"}, {"kernel/keys/root_maxbytes", "25000000"},
}

// sysctlFile is where a node keeps the stand-in for /proc/sys/key.
func (c *Cluster) sysctlFile(n int, key string) string {
	return filepath.Join(c.nodeDir(n), "sysctl", strings.ReplaceAll(key, "/", "."))
}

// iptablesLinks are the names kubelet and kube-proxy run (iptables,
// iptables-save, ...) pointed at the backend cfg.Iptables names: legacy
// (x_tables, the default, what cnperf's --lb iptables replica programs;
// Debian's iptables-nft takes minutes to restore 10,000 services) or nft.
// A folder holding them comes first in the node's PATH.
func (c *Cluster) iptablesLinks() [][2]string {
	var out [][2]string
	for _, v := range []string{"iptables", "ip6tables"} {
		for _, t := range []string{"", "-save", "-restore"} {
			out = append(out, [2]string{v + t, "/usr/sbin/" + v + "-" + c.cfg.Iptables + t})
		}
	}
	return out
}

// flannelNetConfig is what flanneld reads from etcd
// (/coreos.com/network/config): the pod network, a /24 per node, the
// backend.
func (c *Cluster) flannelNetConfig() string {
	return fmt.Sprintf(`{"Network": "%s", "SubnetLen": 24, "Backend": {"Type": "%s"}}`, PodCIDR, c.cfg.flannel())
}

// parseSubnetEnv reads flanneld's subnet file (FLANNEL_SUBNET=...
// lines).
func parseSubnetEnv(text string) (map[string]string, error) {
	env := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_MTU", "FLANNEL_IPMASQ"} {
		if env[k] == "" {
			return nil, fmt.Errorf("flanneld's subnet file has no %s", k)
		}
	}
	return env, nil
}

// flannelConflist is node n's CNI configuration under Flannel: the bridge
// plugin configured from flanneld's subnet file as Flannel's own CNI
// plugin delegates to it (flannel-io/cni-plugin, with kube-flannel.yml's
// delegate hairpinMode and isDefaultGateway): bridge cni0 as the
// gateway, the node's lease by host-local, the MTU flanneld chose,
// masquerading left to flanneld (--ip-masq) when it does it.
func (c *Cluster) flannelConflist(n int, env map[string]string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "cnperf-kube",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "isDefaultGateway": true, "hairpinMode": true,
      "ipMasq": %t, "mtu": %s,
      "ipam": {"type": "host-local", "dataDir": "%s",
        "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "%s"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, env["FLANNEL_IPMASQ"] != "true", env["FLANNEL_MTU"], filepath.Join(c.nodeDir(n), "ipam"), subnetOf(env["FLANNEL_SUBNET"]), env["FLANNEL_NETWORK"])
}

// subnetOf is the network of an address with its prefix (10.244.7.1/24:
// 10.244.7.0/24), as host-local wants it.
func subnetOf(s string) string {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked().String()
	}
	return s
}

// linkCNIBin fills node n's CNI plugin folder: Debian's plugins, and
// cilium-cni under Cilium.
func (c *Cluster) linkCNIBin(n int) error {
	dir := filepath.Join(c.nodeDir(n), "cnibin")
	ents, err := os.ReadDir(CNIBinDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Symlink(filepath.Join(CNIBinDir, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if c.cfg.cilium() {
		return os.Symlink(filepath.Join(c.cfg.CiliumDir, "cilium-cni"), filepath.Join(dir, "cilium-cni"))
	}
	return nil
}

// systems is what the node annotation AnnotSystems says the cluster runs:
// "pod-network=flannel vxlan,service-proxy=kube-proxy iptables" (the
// bridge CNI replicates nothing of the lab's).
func (c *Cluster) systems() string {
	var out []string
	switch {
	case c.cfg.flannel() != "":
		out = append(out, "pod-network=flannel "+c.cfg.flannel())
	case c.cfg.cilium() && c.cfg.ciliumNative():
		out = append(out, "pod-network=cilium native-routing")
	case c.cfg.cilium():
		out = append(out, "pod-network=cilium vxlan-tunnel")
	}
	switch {
	case c.cfg.ciliumSocketLB():
		out = append(out, "service-proxy=cilium socket-lb")
	case c.cfg.KubeProxyReplacement:
		out = append(out, "service-proxy=cilium tc-lb")
	default:
		out = append(out, "service-proxy=kube-proxy "+c.cfg.ProxyMode)
	}
	return strings.Join(out, ",")
}

// cniName is what the node annotation says the pod network is.
func (c *Cluster) cniName() string {
	if c.cfg.cilium() {
		routing := "vxlan tunnel"
		if c.cfg.ciliumNative() {
			routing = "native routing"
		}
		lb := "kube-proxy " + c.cfg.ProxyMode
		switch {
		case c.cfg.ciliumSocketLB():
			lb = "kube-proxy replacement, socket LB"
		case c.cfg.KubeProxyReplacement:
			lb = "kube-proxy replacement, tc LB only"
		}
		return "cilium " + CiliumVersion + " " + routing + " (cilium-agent; " + lb + ")"
	}
	if b := c.cfg.flannel(); b != "" {
		return "flannel " + FlannelVersion + " " + b + " (flanneld, subnets leased in etcd; pods on bridge+host-local as its CNI plugin delegates)"
	}
	return "bridge+host-local (containernetworking-plugins), host-gw routes"
}
