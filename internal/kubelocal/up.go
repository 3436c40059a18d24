package kubelocal

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// upSteps is what Up does, in order; a failed step tears everything down.
var upSteps = []step{
	{"images", (*Cluster).buildImages},
	{"underlay", (*Cluster).makeUnderlay},
	{"etcd", (*Cluster).startEtcd},
	{"control plane", (*Cluster).startControlPlane},
	{"cilium crds", (*Cluster).applyCiliumCRDs},
	{"nodes", (*Cluster).startNodes},
	{"ready", (*Cluster).waitReady},
}

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.cfg.Log, "cluster: "+format+"\n", args...)
}

// Exists reports whether a cluster of this id is up, or left over.
func (c *Cluster) Exists() bool {
	for _, p := range []string{iproute.RunDir + "/" + c.NetNS("sw"), c.Dir()} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// Up brings the cluster up: the underlay, etcd, the control plane, then
// every node, until each is Ready and untainted. It holds cfg.Lock for
// as long as it runs, so two ups never build at once. A failed or
// cancelled up removes what it made and keeps only its logs (the error
// says where).
func (c *Cluster) Up(ctx context.Context) (err error) {
	lk, err := c.lockUp()
	if err != nil {
		return err
	}
	defer lk.unlock()
	if c.Exists() {
		return errors.New("a cluster is already up (or left over); `cnperf cluster down` removes it")
	}
	if c.check != nil {
		if err := c.check(c, ctx); err != nil {
			return err
		}
	}
	defer func() {
		if err == nil {
			return
		}
		err = c.keepLogs(err)
		c.logf("up failed; removing the cluster")
		if terr := c.teardown(); terr != nil {
			err = errors.Join(err, fmt.Errorf("removing the failed cluster: %w", terr))
		}
	}()
	for _, d := range []string{c.logDir(), filepath.Join(c.Dir(), "images"), filepath.Join(c.Dir(), "pki"), filepath.Join(c.Dir(), "etcd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := c.writeRegistryHosts(); err != nil {
		return err
	}
	// this up owns the state folder until etcd does (startEtcd): `cnperf
	// clean` leaves it alone while the up lives, and removes it once it is
	// gone, whichever step it was killed in
	if err := lab.WriteOwner(c.cfg.ID, os.Getpid()); err != nil {
		return err
	}
	// kubectl and status find the binaries here, status the nodes asked
	if err := os.WriteFile(filepath.Join(c.Dir(), "bin"), []byte(c.cfg.BinDir+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir(), "nodes"), []byte(strconv.Itoa(c.cfg.Nodes)+"\n"), 0o644); err != nil {
		return err
	}
	start := time.Now()
	for _, s := range c.steps {
		t0 := time.Now()
		if err := s.run(c, ctx); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: interrupted (%w)", s.name, ctx.Err())
			}
			return fmt.Errorf("%s: %w", s.name, err)
		}
		c.logf("%s: done in %v", s.name, time.Since(t0).Round(100*time.Millisecond))
	}
	// status tells a cluster whose up finished from one it was killed in
	if err := os.WriteFile(c.upDone(), nil, 0o644); err != nil {
		return err
	}
	c.logf("up: %d nodes Ready in %v; `cnperf cluster kubectl get nodes`, or KUBECONFIG=%s inside %s",
		c.cfg.Nodes, time.Since(start).Round(time.Second), c.AdminKubeconfig(), c.CPNetNS())
	return nil
}

// keepLogs copies the logs of a cluster about to be removed after err
// to /tmp/cnperf-ID-failed-logs-RANDOM/log, and says so in the error.
func (c *Cluster) keepLogs(err error) error {
	// a fresh folder of an unpredictable name (0700): root writing at a
	// fixed name under /tmp follows whatever link another user put there
	keep, merr := os.MkdirTemp("", "cnperf-"+c.cfg.ID+"-failed-logs-")
	if merr != nil {
		return err
	}
	if cerr := exec.Command("cp", "-r", c.logDir(), filepath.Join(keep, "log")).Run(); cerr == nil {
		return fmt.Errorf("%w (logs in %s)", err, filepath.Join(keep, "log"))
	}
	_ = os.RemoveAll(keep)
	return err
}

// preflight refuses, before anything is made, what cannot work here.
func (c *Cluster) preflight(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("run as root (it creates namespaces and cgroups)")
	}
	switch c.cfg.ProxyMode {
	case "nftables":
		if _, err := exec.LookPath("nft"); err != nil {
			return errors.New("--proxy-mode nftables needs nft; run scripts/install-deps.sh")
		}
	case "ipvs":
		if _, err := os.Stat("/proc/net/ip_vs"); err != nil {
			return errors.New("--proxy-mode ipvs: this kernel has no IPVS (CONFIG_IP_VS: no /proc/net/ip_vs); use --proxy-mode iptables or nftables")
		}
	}
	if r := "/usr/sbin/iptables-" + c.cfg.Iptables + "-restore"; !executable(r) {
		return fmt.Errorf("--iptables %s needs %s; run scripts/install-deps.sh (Debian's iptables)", c.cfg.Iptables, r)
	}
	for _, b := range []string{"etcd", "etcdctl", "containerd", "runc", "ctr", "nsenter", "unshare", "mount", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("missing %s; run scripts/install-deps.sh", b)
		}
	}
	for _, p := range []string{"bridge", "host-local", "portmap"} {
		if !executable(filepath.Join(CNIBinDir, p)) {
			return fmt.Errorf("missing the CNI plugin %s/%s; run scripts/install-deps.sh (containernetworking-plugins)", CNIBinDir, p)
		}
	}
	var missing []string
	for _, b := range Binaries {
		if c.partial {
			break
		}
		if !executable(filepath.Join(c.cfg.BinDir, b)) {
			missing = append(missing, b)
		}
	}
	if c.cfg.flannel() != "" && !executable(filepath.Join(c.cfg.FlannelDir, "flanneld")) {
		return fmt.Errorf("--cni %s needs flanneld in %s; build it with scripts/flannel-build.sh", c.cfg.CNI, c.cfg.FlannelDir)
	}
	if c.cfg.cilium() {
		if err := c.ciliumPreflight(); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s not in %s; build them with scripts/kube-build.sh (about an hour cold on 2 CPUs), or give --bin DIR", strings.Join(missing, ", "), c.cfg.BinDir)
	}
	src, err := c.source()
	if err != nil {
		return err
	}
	c.cfg.Src = src
	return nil
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// source is cnperf's source tree: cfg.Src, or the module holding the
// working folder, or the one holding this executable.
func (c *Cluster) source() (string, error) {
	isSrc := func(d string) bool {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		return err == nil && strings.HasPrefix(string(b), "module github.com/cnperf/cnperf\n") &&
			executable(filepath.Join(d, "scripts", "kube-build.sh"))
	}
	if c.cfg.Src != "" {
		if !isSrc(c.cfg.Src) {
			return "", fmt.Errorf("--src %s is not cnperf's source tree (no go.mod of github.com/cnperf/cnperf)", c.cfg.Src)
		}
		return c.cfg.Src, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for ; ; d = filepath.Dir(d) {
			if isSrc(d) {
				return d, nil
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return "", errors.New("the pause and agent images are built from cnperf's source: run this inside the source tree, or give --src DIR")
}

// buildImages builds the pause and agent binaries (static, at the lowest
// CPU priority: others measure on this machine) and writes their images.
//
// The builds work in the cluster's state folder and run in its cgroup
// (images): an up killed meanwhile leaves neither a folder under /tmp nor
// a `go build` running that `down` and `clean` would not find.
func (c *Cluster) buildImages(ctx context.Context) error {
	tmp, err := os.MkdirTemp(c.Dir(), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cg, err := lab.MakeCgroup(c.cgroup("images"))
	if err != nil {
		return err
	}
	for _, b := range []struct{ dir, pkg, out, image, tar string }{
		{filepath.Join(c.cfg.Src, "kube"), "./pause", "pause", PauseImage, "pause.tar"},
		{c.cfg.Src, "./cmd/cnperf", "cnperf", AgentImage, "agent.tar"},
	} {
		bin := filepath.Join(tmp, b.out)
		argv := lab.InCgroups(cg, "nice", "-n", "19", "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, b.pkg)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = b.dir
		// go's own work folders too (default under /tmp)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTMPDIR="+tmp)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v: %s", b.pkg, err, lastLine(string(out)))
		}
		// the agent image as users make theirs (cnperf image build,
		// docs/kubernetes.md)
		write := writeImage
		if b.image == AgentImage {
			write = writeAgentImage
		}
		if err := write(filepath.Join(c.Dir(), "images", b.tar), b.image, bin); err != nil {
			return err
		}
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// makeUnderlay builds the lab: the switch, node hosts n1..nN, the control
// plane cp at CPIP, and the host-gw routes: every host reaches the other
// nodes' pod subnets via their underlay addresses; nodes, which have no
// default route, route the service range out of eth0, so that
// host-network processes reach ClusterIPs (OUTPUT DNATs after routing).
func (c *Cluster) makeUnderlay(ctx context.Context) error {
	l, err := lab.New(lab.Config{ID: c.cfg.ID, Hosts: c.cfg.Nodes, HostPrefix: "n", Name: "kube",
		Underlay: netip.MustParsePrefix(Underlay), PodNet: netip.MustParsePrefix(PodCIDR)})
	if err != nil {
		return err
	}
	c.lab = l
	if err := l.Create(ctx); err != nil {
		return err
	}
	cp, err := l.AddHost(ctx, "cp", netip.MustParseAddr(CPIP))
	if err != nil {
		return err
	}
	for _, h := range append([]*lab.Host{cp}, l.Hosts...) {
		var ops []iproute.Op
		for _, m := range l.Hosts {
			// Flannel and Cilium route the pod subnets themselves
			if m != h && c.cfg.flannel() == "" && !c.cfg.cilium() {
				ops = append(ops, iproute.Route{Dst: m.PodCIDR, Via: m.IP})
			}
		}
		if h != cp {
			ops = append(ops, iproute.Route{Dst: netip.MustParsePrefix(ServiceIPs), Dev: h.Dev})
		}
		if err := l.Apply(ctx, h.NetNS, ops...); err != nil {
			return err
		}
	}
	return nil
}

// spawn starts a daemon of the cluster, logging to log/NAME.log.
func (c *Cluster) spawn(name, host, cgroup string, mount int, env []string, argv ...string) (*lab.Proc, error) {
	p, err := lab.Spawn(lab.Daemon{Name: name, NetNS: c.NetNS(host), Mount: mount, Cgroup: c.cgroup(cgroup),
		Log: filepath.Join(c.logDir(), name+".log"), Env: env, Argv: argv})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs[name] = p
	c.mu.Unlock()
	return p, nil
}

// waitFor polls check until it succeeds, at most cfg.Wait; it fails at
// once when process proc has exited, with the last line of its log.
func (c *Cluster) waitFor(ctx context.Context, what, proc string, check func(ctx context.Context) error) error {
	end := time.Now().Add(c.cfg.Wait)
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		c.mu.Lock()
		p := c.procs[proc]
		c.mu.Unlock()
		if p != nil {
			select {
			case <-p.Done():
				b, _ := os.ReadFile(filepath.Join(c.logDir(), proc+".log"))
				return fmt.Errorf("%s exited (%v): %s", proc, p.Err(), lastLine(string(b)))
			default:
			}
		}
		if time.Now().After(end) {
			return fmt.Errorf("%s not up after %v: %v", what, c.cfg.Wait, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// in runs argv inside host's network namespace (and, with mount, in the
// mount namespace of that process).
func (c *Cluster) in(ctx context.Context, host string, mount int, argv ...string) ([]byte, error) {
	full := []string{"nsenter", "--net=" + iproute.RunDir + "/" + c.NetNS(host)}
	if mount != 0 {
		full = append(full, fmt.Sprintf("--mount=/proc/%d/ns/mnt", mount))
	}
	return lab.OSExec{}.Run(ctx, append(full, argv...))
}

// kubectl runs the cluster's kubectl as admin inside the control plane.
func (c *Cluster) kubectl(ctx context.Context, args ...string) ([]byte, error) {
	return c.in(ctx, "cp", 0, append([]string{filepath.Join(c.cfg.BinDir, "kubectl"), "--kubeconfig=" + c.AdminKubeconfig()}, args...)...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startEtcd writes the control plane's credentials (an admin token in
// system:masters, a token bound to no role, the service-account key; the
// API server makes its own serving certificate), then starts etcd, whose
// pid becomes the run's owner: `cnperf clean` keeps the cluster while
// etcd lives.
func (c *Cluster) startEtcd(ctx context.Context) error {
	c.token = randomHex(16)
	norights := randomHex(16)
	pki := filepath.Join(c.Dir(), "pki")
	tokens := c.token + ",admin,admin,system:masters\n" + norights + ",norights,norights\n"
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path, data string
		mode       os.FileMode
	}{
		{filepath.Join(pki, "tokens.csv"), tokens, 0o600},
		{filepath.Join(pki, "sa.key"), string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})), 0o600},
		{filepath.Join(pki, "sa.pub"), string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})), 0o644},
		{c.AdminKubeconfig(), c.kubeconfig(c.token), 0o600},
		{c.NorightsKubeconfig(), c.kubeconfig(norights), 0o600},
	} {
		if err := os.WriteFile(f.path, []byte(f.data), f.mode); err != nil {
			return err
		}
	}
	const client, peer = "http://127.0.0.1:2379", "http://127.0.0.1:2380"
	listen := client
	if c.cfg.flannel() != "" { // flanneld on the nodes leases subnets there
		listen += ",http://" + CPIP + ":2379"
	}
	p, err := c.spawn("etcd", "cp", "cp", 0, nil, "etcd", "--name", "cp", "--data-dir", filepath.Join(c.Dir(), "etcd"),
		"--listen-client-urls", listen, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "cp="+peer)
	if err != nil {
		return err
	}
	if err := lab.WriteOwner(c.cfg.ID, p.Cmd.Process.Pid); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "etcd", "etcd", func(ctx context.Context) error {
		_, err := c.in(ctx, "cp", 0, "etcdctl", "--endpoints", client, "endpoint", "health")
		return err
	}); err != nil {
		return err
	}
	if c.cfg.flannel() == "" {
		return nil
	}
	_, err = c.in(ctx, "cp", 0, "etcdctl", "--endpoints", client, "put", "/coreos.com/network/config", c.flannelNetConfig())
	return err
}

// startControlPlane starts kube-apiserver and waits for /readyz, then the
// controller manager and the scheduler.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	bin := func(b string) string { return filepath.Join(c.cfg.BinDir, b) }
	pki := filepath.Join(c.Dir(), "pki")
	if _, err := c.spawn("kube-apiserver", "cp", "cp", 0, nil, bin("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379", "--bind-address=0.0.0.0", "--secure-port=6443",
		"--advertise-address="+CPIP, "--cert-dir="+pki, "--token-auth-file="+filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=Node,RBAC", "--service-cluster-ip-range="+ServiceIPs, "--allow-privileged=true",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"), "--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--enable-priority-and-fairness=false", "--profiling=false",
		// kubelets by address: the default tries their Hostname address
		// first, "nN", which nothing resolves here (logs, exec,
		// port-forward and the node proxy go through it)
		"--kubelet-preferred-address-types=InternalIP",
		// a namespace's deletion deletes each kind with one
		// deletecollection, worked through by this many workers (default
		// 1: 10,000 Services went at 2 per second)
		"--delete-collection-workers=16"); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kube-apiserver", "kube-apiserver", func(ctx context.Context) error {
		_, err := c.kubectl(ctx, "get", "--raw", "/readyz")
		return err
	}); err != nil {
		return err
	}
	if _, err := c.spawn("kube-controller-manager", "cp", "cp", 0, nil, bin("kube-controller-manager"),
		"--kubeconfig="+c.AdminKubeconfig(), "--leader-elect=false", "--bind-address=127.0.0.1",
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"), "--root-ca-file="+filepath.Join(pki, "apiserver.crt"),
		"--use-service-account-credentials=false", "--controllers=*,-node-ipam-controller", "--profiling=false",
		// its client's default 20 requests per second would take 8
		// minutes to write the EndpointSlices of 10,000 Services, and as
		// long to delete them with their namespace
		"--kube-api-qps=500", "--kube-api-burst=1000", "--concurrent-service-endpoint-syncs=10"); err != nil {
		return err
	}
	_, err := c.spawn("kube-scheduler", "cp", "cp", 0, nil, bin("kube-scheduler"),
		"--kubeconfig="+c.AdminKubeconfig(), "--leader-elect=false", "--bind-address=127.0.0.1", "--profiling=false")
	return err
}

// startNodes starts every node at once.
func (c *Cluster) startNodes(ctx context.Context) error {
	if c.cfg.cilium() {
		if err := c.prepareCilium(); err != nil {
			return err
		}
	}
	return c.lab.Each(ctx, c.cfg.Nodes, func(ctx context.Context, i int) error {
		if err := c.startNode(ctx, i+1); err != nil {
			return fmt.Errorf("node %s: %w", nodeName(i+1), err)
		}
		return nil
	})
}

// startNode starts node n: a process holding the node's private mount
// namespace (its own /run/netns and /run/containerd, kubelet's sysctls
// covered), then containerd in it with both images imported, kubelet and
// kube-proxy.
func (c *Cluster) startNode(ctx context.Context, n int) error {
	nd, name := c.nodeDir(n), nodeName(n)
	for _, d := range []string{"cni", "kubelet", "podlogs", "bin", "sysctl", "cnibin"} {
		if err := os.MkdirAll(filepath.Join(nd, d), 0o755); err != nil {
			return err
		}
	}
	files := [][2]string{
		{"containerd.toml", c.containerdConfig(n)}, {"kubelet.yaml", c.kubeletConfig(n)}, {"kube-proxy.yaml", c.kubeProxyConfig(n)},
	}
	if c.cfg.flannel() == "" && !c.cfg.cilium() {
		files = append(files, [2]string{"cni/10-cnperf.conflist", c.cniConflist(n)})
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(nd, f[0]), []byte(f[1]), 0o644); err != nil {
			return err
		}
	}
	links := c.iptablesLinks()
	if c.cfg.cilium() {
		links = append(links, ciliumLinks()...)
	}
	for _, ln := range links {
		if err := os.Symlink(ln[1], filepath.Join(nd, "bin", ln[0])); err != nil {
			return err
		}
	}
	if err := c.linkCNIBin(n); err != nil {
		return err
	}
	sysctls := kubeletSysctls
	if c.cfg.cilium() {
		for _, k := range ciliumSysctls {
			// the host's own value: what the agent reads back
			v, err := os.ReadFile("/proc/sys/" + k)
			if err != nil {
				return err
			}
			sysctls = append(sysctls, [2]string{k, strings.TrimSpace(string(v))})
		}
	}
	for _, kv := range sysctls {
		if err := os.WriteFile(c.sysctlFile(n, kv[0]), []byte(kv[1]+"\n"), 0o644); err != nil {
			return err
		}
	}
	if _, err := lab.MakeCgroup(c.cgroup(c.podCgroup(n))); err != nil { // kubelet's cgroupRoot must exist
		return err
	}
	sys := c.sysCgroup(n)
	holder, err := c.spawn("mnt-"+name, name, sys, 0, nil, "unshare", "-m", "--propagation", "private", "sleep", "infinity")
	if err != nil {
		return err
	}
	mnt := holder.Cmd.Process.Pid
	// status finds the node's mount namespace by it
	if err := os.WriteFile(filepath.Join(nd, "mnt.pid"), []byte(strconv.Itoa(mnt)+"\n"), 0o644); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "the mount namespace of "+name, "mnt-"+name, func(context.Context) error {
		own, _ := os.Readlink("/proc/self/ns/mnt")
		its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", mnt))
		if err != nil || its == own {
			return errors.New("not yet")
		}
		// the exec chain ends in sleep once unshare has made the namespace
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", mnt))
		if strings.TrimSpace(string(comm)) != "sleep" {
			return errors.New("not yet")
		}
		return nil
	}); err != nil {
		return err
	}
	mounts := [][]string{
		{"mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run/netns"},
		// shim sockets and runc state go under the fixed /run/containerd,
		// which the host's own containerd (Docker's) uses as well
		{"mkdir", "-p", "/run/containerd"},
		{"mount", "-t", "tmpfs", "-o", "mode=700", "tmpfs", "/run/containerd"},
		{"mount", "--make-rshared", "/"},
	}
	for _, kv := range kubeletSysctls {
		mounts = append(mounts, []string{"mount", "--bind", c.sysctlFile(n, kv[0]), "/proc/sys/" + kv[0]})
	}
	vars, err := c.nodeVar(n)
	if err != nil {
		return err
	}
	mounts = append(mounts, vars...)
	if c.cfg.cilium() {
		mounts = append(mounts, c.ciliumMounts(n)...)
	}
	for _, m := range mounts {
		if _, err := c.in(ctx, name, mnt, m...); err != nil {
			return err
		}
	}
	sock := filepath.Join(nd, "containerd.sock")
	if _, err := c.spawn("containerd-"+name, name, sys, mnt, nil, "containerd", "--config", filepath.Join(nd, "containerd.toml")); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd of "+name, "containerd-"+name, func(context.Context) error {
		_, err := os.Stat(sock)
		return err
	}); err != nil {
		return err
	}
	for _, img := range []string{"pause", "agent"} {
		if _, err := c.in(ctx, name, mnt, "ctr", "-a", sock, "-n", "k8s.io", "images", "import", filepath.Join(c.Dir(), "images", img+".tar")); err != nil {
			return fmt.Errorf("importing the %s image: %w", img, err)
		}
	}
	if c.partial {
		return nil
	}
	// kubelet, kube-proxy and flanneld run `iptables` by that name: the
	// backend cfg.Iptables names comes first in their PATH
	path := []string{"PATH=" + filepath.Join(nd, "bin") + ":" + os.Getenv("PATH")}
	if c.cfg.flannel() != "" {
		if err := c.startFlannel(ctx, n, mnt, path); err != nil {
			return err
		}
	}
	if _, err := c.spawn("kubelet-"+name, name, sys, mnt, path, filepath.Join(c.cfg.BinDir, "kubelet"),
		"--config="+filepath.Join(nd, "kubelet.yaml"), "--kubeconfig="+c.AdminKubeconfig(),
		"--root-dir="+filepath.Join(nd, "kubelet"), "--cert-dir="+filepath.Join(nd, "kubelet", "pki"), "--hostname-override="+name, "--node-ip="+c.nodeIP(n)); err != nil {
		return err
	}
	if c.cfg.cilium() {
		if err := c.startCilium(ctx, n, mnt, path); err != nil {
			return err
		}
		if c.cfg.KubeProxyReplacement {
			return nil // Cilium serves the Services: no kube-proxy
		}
	}
	_, err = c.spawn("kube-proxy-"+name, name, sys, mnt, path, filepath.Join(c.cfg.BinDir, "kube-proxy"),
		"--config="+filepath.Join(nd, "kube-proxy.yaml"))
	return err
}

// nodeVar prepares node n's own /var/lib and /var/log and returns the
// mounts that put them in place inside the node's mount namespace.
// kubelet writes its device-plugin socket at the fixed
// /var/lib/kubelet/device-plugins (deviceplugin/v1beta1.DevicePluginPath,
// whatever --root-dir says) and links container logs in the fixed
// /var/log/containers, so every node needs its own of both, and the
// host's /var must get neither. See nodeVarDir.
func (c *Cluster) nodeVar(n int) ([][]string, error) {
	nd := c.nodeDir(n)
	lib, err := nodeVarDir(nd, "/var/lib", "kubelet", filepath.Join(nd, "kubelet"))
	if err != nil {
		return nil, err
	}
	logs := filepath.Join(nd, "containerlogs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	log, err := nodeVarDir(nd, "/var/log", "containers", logs)
	if err != nil {
		return nil, err
	}
	return append(lib, log...), nil
}

// nodeVarDir makes the folder the node sees over the host's dir (e.g.
// /var/lib): a folder of cnperf's under nd holding name -> target and, for
// every other entry of the host's dir when the node starts, a link into a
// read-only view of the host's, so that nothing the node runs writes
// under the host's dir. The mounts, run inside the node, are:
//
//	mount --bind -o ro /var/lib ND/host/var/lib
//	mount --bind ND/own/var/lib /var/lib
func nodeVarDir(nd, dir, name, target string) ([][]string, error) {
	view, own := filepath.Join(nd, "host", dir), filepath.Join(nd, "own", dir)
	for _, d := range []string{view, own} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name() == name {
			continue
		}
		if err := os.Symlink(filepath.Join(view, e.Name()), filepath.Join(own, e.Name())); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(target, filepath.Join(own, name)); err != nil {
		return nil, err
	}
	return [][]string{{"mount", "--bind", "-o", "ro", dir, view}, {"mount", "--bind", own, dir}}, nil
}

// waitReady waits until every node is Ready and untainted (the node
// lifecycle controller takes node.kubernetes.io/not-ready off a moment
// after Ready, and until then nothing is scheduled there), then names
// the pod network on it where the API shows it (cnperf's kubernetes
// backend records it).
func (c *Cluster) waitReady(ctx context.Context) error {
	for n := 1; n <= c.cfg.Nodes; n++ {
		name := nodeName(n)
		if err := c.waitFor(ctx, "node "+name+" Ready and untainted", "kubelet-"+name, func(ctx context.Context) error {
			out, err := c.kubectl(ctx, "get", "node", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}`)
			if err != nil {
				return err
			}
			if s := strings.TrimSpace(string(out)); s != "True/" {
				return fmt.Errorf("Ready/taints: %s", s)
			}
			return nil
		}); err != nil {
			return err
		}
		if _, err := c.kubectl(ctx, "annotate", "node", name, "--overwrite", AnnotCNI+"="+c.cniName(), AnnotSystems+"="+c.systems()); err != nil {
			return err
		}
	}
	return nil
}

// startFlannel starts node n's flanneld, which leases the node a subnet
// in etcd, builds its backend's datapath (flannel.1 and its neighbours,
// or host-gw routes) and writes its subnet file; the node's CNI
// configuration is then made from that file, before kubelet starts (a
// kubelet without one reports its node not Ready).
func (c *Cluster) startFlannel(ctx context.Context, n, mnt int, path []string) error {
	name := nodeName(n)
	subnetFile := filepath.Join(c.nodeDir(n), "flannel", "subnet.env")
	if err := os.MkdirAll(filepath.Dir(subnetFile), 0o755); err != nil {
		return err
	}
	if _, err := c.spawn("flanneld-"+name, name, name+"-sys", mnt, path, filepath.Join(c.cfg.FlannelDir, "flanneld"),
		"--etcd-endpoints=http://"+CPIP+":2379", "--iface=eth0", "--ip-masq", "--subnet-file="+subnetFile); err != nil {
		return err
	}
	var env map[string]string
	if err := c.waitFor(ctx, "flanneld of "+name, "flanneld-"+name, func(context.Context) error {
		b, err := os.ReadFile(subnetFile)
		if err != nil {
			return err
		}
		env, err = parseSubnetEnv(string(b))
		return err
	}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.nodeDir(n), "cni", "10-cnperf.conflist"), []byte(c.flannelConflist(n, env)), 0o644)
}
