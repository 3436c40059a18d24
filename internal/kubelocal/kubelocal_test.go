package kubelocal

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
)

// Version is the release kube/go.mod pins, which scripts/kube-build.sh
// builds and names the cache folder after.
func TestVersionIsKubeGoMod(t *testing.T) {
	b, err := os.ReadFile("../../kube/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "k8s.io/kubernetes" && strings.HasPrefix(f[1], "v") {
			got = f[1]
		}
		if len(f) >= 3 && f[0] == "require" && f[1] == "k8s.io/kubernetes" {
			got = f[2]
		}
	}
	if got != Version {
		t.Errorf("kube/go.mod requires k8s.io/kubernetes %q; kubelocal.Version is %q", got, Version)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // in the error; "" for none
	}{
		{"defaults", Config{Nodes: 2}, ""},
		{"no nodes", Config{}, "--nodes 1 to 99"},
		{"too many", Config{Nodes: 100}, "--nodes 1 to 99"},
		{"nftables", Config{Nodes: 1, ProxyMode: "nftables", Iptables: "nft"}, ""},
		{"bad mode", Config{Nodes: 1, ProxyMode: "userspace"}, "--proxy-mode iptables"},
		{"bad iptables", Config{Nodes: 1, Iptables: "xt"}, "--iptables legacy"},
		{"bad id", Config{Nodes: 1, ID: "a-b"}, "run id"},
		{"flannel", Config{Nodes: 2, CNI: "flannel-vxlan"}, ""},
		{"bad cni", Config{Nodes: 2, CNI: "calico"}, "--cni bridge, flannel-vxlan, flannel-host-gw, cilium"},
		{"cilium", Config{Nodes: 2, CNI: "cilium"}, ""},
		{"cilium kpr native", Config{Nodes: 2, CNI: "cilium", KubeProxyReplacement: true, CNIOpts: map[string]string{"routing": "native", "socket-lb": "false"}}, ""},
		{"kpr without cilium", Config{Nodes: 2, KubeProxyReplacement: true}, "--kube-proxy-replacement needs --cni cilium"},
		{"cni-opt without cilium", Config{Nodes: 2, CNI: "flannel-vxlan", CNIOpts: map[string]string{"routing": "native"}}, "--cni-opt is for --cni cilium"},
		{"bad cni-opt key", Config{Nodes: 2, CNI: "cilium", CNIOpts: map[string]string{"tunnel": "geneve"}}, "--cni-opt tunnel: unknown key"},
		{"bad cni-opt value", Config{Nodes: 2, CNI: "cilium", CNIOpts: map[string]string{"routing": "bgp"}}, "use routing=tunnel|native"},
		{"socket-lb without kpr", Config{Nodes: 2, CNI: "cilium", CNIOpts: map[string]string{"socket-lb": "false"}}, "add --kube-proxy-replacement"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
			}
		})
	}
}

// CiliumVersion is what cilium/go.mod pins, which scripts/cilium-build.sh
// builds and names its cache folder after.
func TestCiliumVersionIsCiliumGoMod(t *testing.T) {
	b, err := os.ReadFile("../../cilium/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\tgithub.com/cilium/cilium "+CiliumVersion+" ") {
		t.Errorf("cilium/go.mod does not require github.com/cilium/cilium %s", CiliumVersion)
	}
	if filepath.Base(DefaultCiliumDir()) != "cilium-"+CiliumVersion {
		t.Errorf("DefaultCiliumDir %s", DefaultCiliumDir())
	}
}

// Under Cilium a node's agent runs with the cluster's own cgroup, bpffs
// and state, tunnel or native routing, with or without kube-proxy's
// replacement; the CNI configuration names Cilium's plugin.
func TestCiliumFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"cilium-tunnel", Config{Nodes: 2, CNI: "cilium"}},
		{"cilium-native-kpr", Config{Nodes: 2, CNI: "cilium", KubeProxyReplacement: true, CNIOpts: map[string]string{"routing": "native"}}},
		{"cilium-kpr-tc", Config{Nodes: 2, CNI: "cilium", KubeProxyReplacement: true, CNIOpts: map[string]string{"socket-lb": "false"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.CiliumDir = "/cache/cilium"
			c, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var mounts []string
			for _, m := range c.ciliumMounts(2) {
				mounts = append(mounts, strings.Join(m, " "))
			}
			text := strings.Join(c.ciliumAgentArgs(2, "/run/cnperf-cgroup2"), "\n") + "\n" + strings.Join(mounts, "\n") + "\n" +
				c.cniName() + "\n" + c.systems() + "\n" + c.kubeletConfig(2) + ciliumConflist()
			golden.Check(t, tc.name, text)
			var conf map[string]any
			if err := json.Unmarshal([]byte(ciliumConflist()), &conf); err != nil {
				t.Errorf("conflist: %v", err)
			}
			// the agent's cgroup root is the node's own subtree, which
			// holds its daemons and pods, never the hierarchy's root
			if got := c.ciliumCgroup(2); got != "cnperf-kube/n2" || !strings.HasPrefix(c.cgroup(c.sysCgroup(2)), got+"/") || !strings.HasPrefix(c.cgroup(c.podCgroup(2)), got+"/") {
				t.Errorf("cgroup root %q does not hold sys %q and pods %q", got, c.sysCgroup(2), c.podCgroup(2))
			}
		})
	}
}

// FlannelVersion is what flannel/go.mod pins, which
// scripts/flannel-build.sh builds and names its cache folder after.
func TestFlannelVersionIsFlannelGoMod(t *testing.T) {
	b, err := os.ReadFile("../../flannel/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\tgithub.com/flannel-io/flannel "+FlannelVersion+" ") {
		t.Errorf("flannel/go.mod does not pin github.com/flannel-io/flannel %s", FlannelVersion)
	}
	if filepath.Base(DefaultFlannelDir()) != "flannel-"+FlannelVersion {
		t.Errorf("DefaultFlannelDir %s", DefaultFlannelDir())
	}
}

// Under Flannel the node's CNI configuration comes from flanneld's
// subnet file as Flannel's CNI plugin makes it: bridge with the lease and
// the MTU, no masquerading when flanneld masquerades.
func TestFlannelFiles(t *testing.T) {
	for _, b := range []string{"vxlan", "host-gw"} {
		t.Run(b, func(t *testing.T) {
			c, err := New(Config{Nodes: 2, CNI: "flannel-" + b})
			if err != nil {
				t.Fatal(err)
			}
			env, err := parseSubnetEnv("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.23.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n")
			if err != nil {
				t.Fatal(err)
			}
			text := c.flannelNetConfig() + "\n" + c.flannelConflist(2, env) + c.cniName() + "\n"
			golden.Check(t, "flannel-"+b, text)
			var conf map[string]any
			if err := json.Unmarshal([]byte(c.flannelConflist(2, env)), &conf); err != nil {
				t.Errorf("the CNI conflist is not JSON: %v", err)
			}
			if err := json.Unmarshal([]byte(c.flannelNetConfig()), &conf); err != nil {
				t.Errorf("the network config is not JSON: %v", err)
			}
		})
	}
	if _, err := parseSubnetEnv("FLANNEL_NETWORK=10.244.0.0/16\n"); err == nil || !strings.Contains(err.Error(), "FLANNEL_SUBNET") {
		t.Errorf("a subnet file without FLANNEL_SUBNET: %v", err)
	}
}

// The cluster's names and addresses are the lab's for the same run id
// and host prefix: the node configs name what the lab built.
func TestLayoutIsTheLabs(t *testing.T) {
	c, err := New(Config{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.New(lab.Config{ID: DefaultID, Hosts: 3, HostPrefix: "n", NoStateDirs: true, Exec: &lab.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range l.Hosts {
		n := i + 1
		if h.NetNS != c.NetNS(nodeName(n)) || h.IP.String() != c.nodeIP(n) || h.PodCIDR.String() != c.podCIDR(n) {
			t.Errorf("lab host %d is %s %s %s; the cluster says %s %s %s", n, h.NetNS, h.IP, h.PodCIDR, c.NetNS(nodeName(n)), c.nodeIP(n), c.podCIDR(n))
		}
	}
	if l.Switch != c.NetNS("sw") || c.CPNetNS() != "cnperf-kube-cp" || c.Dir() != "/run/cnperf/kube" {
		t.Errorf("switch %s / %s, control plane %s, state %s", l.Switch, c.NetNS("sw"), c.CPNetNS(), c.Dir())
	}
}

// The files every part reads, for node 2 of a cluster in nftables mode
// on the nf_tables iptables.
func TestFiles(t *testing.T) {
	c, err := New(Config{Nodes: 2, ProxyMode: "nftables", Iptables: "nft"})
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, l := range c.iptablesLinks() {
		links = append(links, l[0]+" -> "+l[1])
	}
	var sysctls []string
	for _, kv := range kubeletSysctls {
		sysctls = append(sysctls, c.sysctlFile(2, kv[0])+" = "+kv[1]+" over /proc/sys/"+kv[0])
	}
	var hosts []string
	for _, h := range slices.Sorted(maps.Keys(registryHosts())) {
		hosts = append(hosts, "# certs.d/"+h+"/hosts.toml\n"+registryHosts()[h])
	}
	for _, f := range []struct{ name, text string }{
		{"kubeconfig", c.kubeconfig("TOKEN")},
		{"registry-hosts", strings.Join(hosts, "")},
		{"containerd.toml", c.containerdConfig(2)},
		{"10-cnperf.conflist", c.cniConflist(2)},
		{"kubelet.yaml", c.kubeletConfig(2)},
		{"kube-proxy.yaml", c.kubeProxyConfig(2)},
		{"iptables-links", strings.Join(links, "\n") + "\n"},
		{"sysctls", strings.Join(sysctls, "\n") + "\n"},
	} {
		t.Run(f.name, func(t *testing.T) { golden.Check(t, f.name, f.text) })
	}
	var conf map[string]any
	if err := json.Unmarshal([]byte(c.cniConflist(2)), &conf); err != nil {
		t.Errorf("the CNI conflist is not JSON: %v", err)
	}
}

// An image is what `ctr images import` reads: a manifest naming the
// config and the layer, the config's diff_id the layer's digest, the
// binary at /NAME as the entrypoint, /tmp sticky; the same binary gives
// the same bytes.
func TestWriteImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a.tar")
	if err := writeImage(out, PauseImage, bin); err != nil {
		t.Fatal(err)
	}
	files := untar(t, out)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"].data, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != PauseImage || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest %+v", manifest)
	}
	cfg := files[manifest[0].Config].data
	if sum := sha256.Sum256(cfg); manifest[0].Config != hex.EncodeToString(sum[:])+".json" {
		t.Errorf("config file %s is not named by its digest", manifest[0].Config)
	}
	var config struct {
		Config struct{ Entrypoint []string }
		Rootfs struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(cfg, &config); err != nil {
		t.Fatal(err)
	}
	layer := files[manifest[0].Layers[0]].data
	if sum := sha256.Sum256(layer); len(config.Rootfs.DiffIDs) != 1 || config.Rootfs.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("diff_ids %v, layer digest %x", config.Rootfs.DiffIDs, sum)
	}
	if strings.Join(config.Config.Entrypoint, " ") != "/pause" {
		t.Errorf("entrypoint %v", config.Config.Entrypoint)
	}
	lf := untarBytes(t, layer)
	if string(lf["pause"].data) != "\x7fELF not really" || lf["pause"].mode != 0o755 {
		t.Errorf("layer's pause: %q mode %o", lf["pause"].data, lf["pause"].mode)
	}
	if lf["tmp/"].mode != 0o1777 {
		t.Errorf("layer's /tmp mode %o, want 1777", lf["tmp/"].mode)
	}
	again := filepath.Join(dir, "b.tar")
	if err := writeImage(again, PauseImage, bin); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("two images of one binary differ")
	}
}

type tarFile struct {
	data []byte
	mode int64
}

func untar(t *testing.T, path string) map[string]tarFile {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return untarBytes(t, b)
}

func untarBytes(t *testing.T, b []byte) map[string]tarFile {
	t.Helper()
	out := map[string]tarFile{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = tarFile{data, h.Mode}
	}
}

// Two locks on one file: the second is refused and names the holder;
// once released, the lock can be taken again.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, _, err := tryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, pid, err := tryLock(path); err != errBusy || pid != os.Getpid() {
		t.Errorf("second lock: %v, holder %d; want busy, held by %d", err, pid, os.Getpid())
	}
	c, err := New(Config{Nodes: 1, Lock: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.lockUp(); err == nil || !strings.Contains(err.Error(), "is running; wait for it, or stop it with `cnperf cluster down`") {
		t.Errorf("a second up: %v", err)
	}
	a.unlock()
	b, _, err := tryLock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	b.unlock()
}

// Issue 34 finding 7: of two concurrent downs, the first called the
// second an up and sent it SIGTERM. A down holds the lock here (its pid a
// sleep standing in for it): another down waits for it, and signals
// nothing.
func TestDownWaitsForAnotherDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	held, _, err := tryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(other.Process.Pid)+" down\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	c, err := New(Config{Nodes: 1, Lock: path, Log: &log, Grace: time.Second, StopLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(300 * time.Millisecond); held.unlock() }()
	l, err := c.lockDown()
	if err != nil {
		t.Fatal(err)
	}
	l.unlock()
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other down (pid %d) was signalled: %v; log: %s", other.Process.Pid, err, log.String())
	}
	if !strings.Contains(log.String(), "waiting for the `cnperf cluster down` still running") {
		t.Errorf("log: %q", log.String())
	}
	if _, err := c.lockUp(); err != nil {
		t.Errorf("up after the downs: %v", err)
	}
}

// nodeVarDir gives the node its own entry and links every other one to
// the read-only view of the host's folder.
func TestNodeVarDir(t *testing.T) {
	host, nd := t.TempDir(), t.TempDir()
	for _, d := range []string{"dpkg", "kubelet"} {
		if err := os.Mkdir(filepath.Join(host, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mounts, err := nodeVarDir(nd, host, "kubelet", "/node/kubelet")
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(nd, "own", host)
	for name, want := range map[string]string{"kubelet": "/node/kubelet", "dpkg": filepath.Join(nd, "host", host, "dpkg")} {
		if got, err := os.Readlink(filepath.Join(own, name)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %q", name, got, err, want)
		}
	}
	want := fmt.Sprint([][]string{{"mount", "--bind", "-o", "ro", host, filepath.Join(nd, "host", host)}, {"mount", "--bind", own, host}})
	if got := fmt.Sprint(mounts); got != want {
		t.Errorf("mounts %s, want %s", got, want)
	}
}
