package dockerlab

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hostprobe"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all" // the lab's replicas, by name
)

const mountinfo = `25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw
30 25 0:27 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
32 30 0:29 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset,clone_children
39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,release_agent=/lib/systemd/systemd-cgroups-agent,name=systemd
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
41 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
`

func TestCgroupMounts(t *testing.T) {
	got := cgroupMounts(strings.NewReader(mountinfo))
	want := []cgroupMount{
		{"/sys/fs/cgroup/cpu,cpuacct", "cgroup", "cpu,cpuacct"},
		{"/sys/fs/cgroup/cpuset", "cgroup", "cpuset"},
		{"/sys/fs/cgroup/systemd", "cgroup", "xattr,name=systemd"},
		{"/sys/fs/cgroup/unified", "cgroup2", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mount %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestScript: the engine's start script, step by step, in order: the
// UTS name, the cgroup hierarchies mounted again (a tmpfs under the v1
// ones), the engine's cgroup joined in each, the machine's Docker folders
// hidden, and dockerd exec'd last with everything under the state folder.
func TestScript(t *testing.T) {
	dir := "/run/cnperf/ab12s0/e1"
	s := engineSpec{
		Hostname: "cnperf-ab12s0-h1",
		Dir:      dir,
		Cgroups:  cgroupMounts(strings.NewReader(mountinfo)),
		Cgroup:   "cnperf-ab12s0/e1",
		Hides:    []hide{{Target: "/etc/docker", Source: dir + "/hide/etc-docker"}},
		Dockerd:  dockerdArgs{Dir: dir, CgroupParent: "/cnperf-ab12s0", Bridge: "172.17.1.1/24", MTU: 1500, UserlandProxy: false}.argv(),
	}
	steps := strings.Split(s.script(), "; ")
	want := []string{
		"set -e",
		"hostname cnperf-ab12s0-h1",
		"mount -n -t tmpfs -o mode=755 cgroup /sys/fs/cgroup",
		"mkdir -p /sys/fs/cgroup/cpu,cpuacct",
		"mount -n -t cgroup -o cpu,cpuacct cgroup /sys/fs/cgroup/cpu,cpuacct",
		"mkdir -p /sys/fs/cgroup/cpuset",
		"mount -n -t cgroup -o cpuset cgroup /sys/fs/cgroup/cpuset",
		"mkdir -p /sys/fs/cgroup/systemd",
		"mount -n -t cgroup -o xattr,name=systemd cgroup /sys/fs/cgroup/systemd",
		"mkdir -p /sys/fs/cgroup/unified",
		"mount -n -t cgroup2 cgroup2 /sys/fs/cgroup/unified",
		"echo $$ > /sys/fs/cgroup/cpu,cpuacct/cnperf-ab12s0/e1/cgroup.procs",
		"echo $$ > /sys/fs/cgroup/cpuset/cnperf-ab12s0/e1/cgroup.procs",
		"echo $$ > /sys/fs/cgroup/systemd/cnperf-ab12s0/e1/cgroup.procs",
		"echo $$ > /sys/fs/cgroup/unified/cnperf-ab12s0/e1/cgroup.procs",
		"mount -n --bind /run/cnperf/ab12s0/e1/hide/etc-docker /etc/docker",
		"exec dockerd --data-root /run/cnperf/ab12s0/e1/data --exec-root /run/cnperf/ab12s0/e1/exec" +
			" -H unix:///run/cnperf/ab12s0/e1/docker.sock --pidfile /run/cnperf/ab12s0/e1/dockerd.pid" +
			" --config-file /run/cnperf/ab12s0/e1/daemon.json --cgroup-parent /cnperf-ab12s0" +
			" --exec-opt native.cgroupdriver=cgroupfs --bip 172.17.1.1/24 --mtu 1500 --userland-proxy=false" +
			" --iptables=true --ip-forward=true --shutdown-timeout 1 --log-level warn",
	}
	if len(steps) != len(want) {
		t.Fatalf("script has %d steps, want %d:\n%s", len(steps), len(want), strings.Join(steps, "\n"))
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d:\n got %s\nwant %s", i, steps[i], want[i])
		}
	}
	if a := s.argv(); a[0] != "unshare" || a[1] != "--uts" || a[4] != s.script() {
		t.Errorf("argv %q", a[:4])
	}
}

// TestScriptCgroupV2: on a cgroup v2 machine the one hierarchy is
// mounted at /sys/fs/cgroup itself, with no tmpfs.
func TestScriptCgroupV2(t *testing.T) {
	s := engineSpec{Hostname: "h", Cgroups: []cgroupMount{{"/sys/fs/cgroup", "cgroup2", ""}}, Cgroup: "cnperf-x/e1", Dockerd: []string{"dockerd"}}
	got := s.script()
	if strings.Contains(got, "tmpfs") || !strings.Contains(got, "mount -n -t cgroup2 cgroup2 /sys/fs/cgroup;") ||
		!strings.Contains(got, "echo $$ > /sys/fs/cgroup/cnperf-x/e1/cgroup.procs") {
		t.Errorf("script %s", got)
	}
}

func TestShq(t *testing.T) {
	for in, want := range map[string]string{
		"/run/cnperf/a/e1": "/run/cnperf/a/e1",
		"a b":              "'a b'",
		"it's":             `'it'\''s'`,
		"$$":               "'$$'",
		"":                 "''",
	} {
		if got := shq(in); got != want {
			t.Errorf("shq(%q) = %s, want %s", in, got, want)
		}
	}
}

// fakeBackend has PATH lookups and a kernel config of a test's.
func fakeBackend(missing string, kernel string, opts map[string]string) *Backend {
	b := New(lab.Config{ModeOptions: opts}, "/bin/true", nil)
	b.LookPath = func(c string) (string, error) {
		if c == missing {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + c, nil
	}
	b.Kernel = netmode.ParseKernelConfig(strings.NewReader(kernel))
	return b
}

const fullKernel = "CONFIG_VXLAN=y\nCONFIG_MACVLAN=y\nCONFIG_XFRM_USER=y\nCONFIG_INET_ESP=m\nCONFIG_CRYPTO_GCM=y\nCONFIG_NETFILTER_XT_MATCH_POLICY=y\nCONFIG_NETFILTER_XT_MATCH_U32=y\n"

func TestCheck(t *testing.T) {
	cases := []struct {
		name, network, missing, kernel string
		opts                           map[string]string
		want                           string // "" = no error; else a part of the one-line error
	}{
		{"overlay ok", "docker-overlay", "", fullKernel, nil, ""},
		{"no dockerd", "nat", "dockerd", fullKernel, nil, "docker-lab needs dockerd, not found in PATH; install it (apt-get install docker.io)"},
		{"no runc", "host", "runc", fullKernel, nil, "apt-get install runc"},
		{"no docker-proxy, proxy on", "nat", "docker-proxy", fullKernel, nil, "needs docker-proxy"},
		{"no docker-proxy, proxy off", "nat", "docker-proxy", fullKernel, map[string]string{"userland-proxy": "false"}, ""},
		{"no vxlan", "docker-overlay", "", "CONFIG_XFRM_USER=y\n", nil, "CONFIG_VXLAN"},
		{"encrypt, no esp", "docker-overlay", "", "CONFIG_VXLAN=y\nCONFIG_XFRM_USER=y\nCONFIG_NETFILTER_XT_MATCH_POLICY=y\nCONFIG_NETFILTER_XT_MATCH_U32=y\n",
			map[string]string{"encrypt": "true"}, "this kernel lacks CONFIG_INET_ESP (IPsec ESP), CONFIG_CRYPTO_GCM (AES-GCM): drop --mode-opt encrypt=true"},
		{"encrypt ok", "docker-overlay", "", fullKernel, map[string]string{"encrypt": "true"}, ""},
		{"encrypt off", "docker-overlay", "", "CONFIG_VXLAN=y\n", map[string]string{"encrypt": "false"}, ""},
		{"unknown", "overlay", "", fullKernel, nil, `docker-lab has no network "overlay" (Docker's swarm overlay is docker-overlay); use one of baseline, bridge, docker-overlay, host, macvlan, nat`},
		{"macvlan ok", "macvlan", "", fullKernel, nil, ""},
		{"no macvlan", "macvlan", "", "CONFIG_VXLAN=y\n", nil, "docker-lab's macvlan needs CONFIG_MACVLAN (macvlan devices); this kernel lacks it"},
		{"container", "container", "", fullKernel, nil, "--backend docker runs container"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := fakeBackend(c.missing, c.kernel, c.opts).Check(c.network)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Check = %v, want it to say %q", err, c.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("Check's error is not one line: %q", err)
			}
		})
	}
}

func TestAllows(t *testing.T) {
	b := fakeBackend("", fullKernel, nil)
	for _, c := range []struct {
		network string
		p       ground.Placement
		ok      bool
		why     string
	}{
		{"docker-overlay", ground.CrossHost, true, ""},
		{"docker-overlay", ground.SameHost, true, ""},
		{"nat", ground.CrossHost, true, ""},
		{"host", ground.CrossHost, true, ""},
		{"bridge", ground.SameHost, true, ""},
		{"bridge", ground.CrossHost, false, "use --placement same-host"},
		{"nat", ground.SamePod, false, "use --backend docker for same-pod"},
		{"weave", ground.CrossHost, false, `no network "weave"`},
	} {
		ok, why := b.Allows(c.network, c.p)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("Allows(%s, %s) = %v, %q; want %v, %q", c.network, c.p, ok, why, c.ok, c.why)
		}
	}
	for _, n := range Networks() {
		if _, err := netmode.Get(n); err != nil {
			t.Errorf("docker-lab network %s has no lab replica of the same name: %v", n, err)
		}
	}
}

func TestOptions(t *testing.T) {
	b := fakeBackend("", fullKernel, nil)
	names := func(n string) string {
		var out []string
		for _, o := range b.Options(n) {
			out = append(out, o.Name)
		}
		return strings.Join(out, ",")
	}
	for n, want := range map[string]string{"nat": "userland-proxy,seccomp", "docker-overlay": "encrypt,seccomp", "host": "seccomp", "vxlan": ""} {
		if got := names(n); got != want {
			t.Errorf("%s options %q, want %q", n, got, want)
		}
	}
	if b.seccomp() != "default" {
		t.Errorf("seccomp %q by default", b.seccomp())
	}
	if !b.userlandProxy() || b.encrypt() {
		t.Error("defaults: want userland-proxy on, encryption off")
	}
	b = fakeBackend("", fullKernel, map[string]string{"userland-proxy": "false", "encrypt": "true"})
	if b.userlandProxy() || !b.encrypt() {
		t.Error("options not taken")
	}
}

func TestClusterID(t *testing.T) {
	id := clusterID("ab12")
	if !lab.OfRun(id, "ab12") {
		t.Errorf("cluster %s is not found as run ab12's by clean --id", id)
	}
	// the lab backend names a run's labs ab12, ab12s2, ab12s3...
	for n := 2; n <= 10000; n++ {
		if id == "ab12" || id == "ab12s"+strconv.Itoa(n) {
			t.Fatalf("cluster id %s collides with a lab of the lab backend", id)
		}
	}
}

func TestParseNetDev(t *testing.T) {
	s := "Inter-|   Receive\n face |bytes    packets\n    lo:  1234 5 0 0\n  eth0: 99887766 12 0 0\n"
	if v, ok := hostprobe.ParseNetDev(s, "eth0"); !ok || v != 99887766 {
		t.Errorf("eth0 = %d, %v", v, ok)
	}
	if _, ok := hostprobe.ParseNetDev(s, "eth1"); ok {
		t.Error("eth1 found")
	}
}
