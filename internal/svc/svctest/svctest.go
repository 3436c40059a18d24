// Package svctest is the root integration test every service load balancer
// runs: a 3-host lab on host-gw with a client pod on h1 and three backend
// pods on h2 and h3; connections through the service must reach every
// backend in proportions a chi-square test accepts; a service without
// endpoints must refuse at once; teardown must leave no rule, BPF program,
// cgroup or conntrack entry.
package svctest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/hostgw" // the pod network
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/svc/bpfmaps"
)

// BackendPort is where the test backends listen.
const BackendPort = 8080

// Env is a lab with a client pod and backend pods serving their names.
type Env struct {
	Lab      *lab.Lab
	Client   *lab.Pod
	Backends []*lab.Pod
	Cluster  *svc.Cluster
}

// NeedRoot skips tb unless it runs as root with iproute2.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: the lab creates network namespaces (run the tests as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		tb.Skip("needs iproute2 (apt-get install iproute2)")
	}
}

// NewLB makes the named balancer, skipping tb where this machine cannot run it.
func NewLB(tb testing.TB, name string) svc.LB {
	tb.Helper()
	lb, err := svc.New(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.Check(lb); err != nil {
		tb.Skipf("%v", err)
	}
	return lb
}

// NewEnv builds the lab: client c1 on h1, backends b1 (h2), b2 (h3), b3 (h2),
// each serving its name on BackendPort; the client is this test process.
func NewEnv(tb testing.TB) *Env {
	tb.Helper()
	NeedRoot(tb)
	l, err := lab.New(lab.Config{ID: lab.NewID(), Hosts: 3})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := l.Teardown(); err != nil {
			tb.Errorf("lab teardown: %v", err)
		}
	})
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		tb.Fatal(err)
	}
	m, err := netmode.Get("host-gw")
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Setup(ctx, l); err != nil {
		tb.Fatal(err)
	}
	if err := svc.PrepareNodes(ctx, l); err != nil {
		tb.Fatal(err)
	}
	e := &Env{Lab: l}
	if e.Client, err = m.AddPod(ctx, l, l.Hosts[0], "c1"); err != nil {
		tb.Fatal(err)
	}
	for i, h := range []int{1, 2, 1} {
		b, err := m.AddPod(ctx, l, l.Hosts[h], fmt.Sprintf("b%d", i+1))
		if err != nil {
			tb.Fatal(err)
		}
		e.Backends = append(e.Backends, b)
		Serve(tb, b)
	}
	e.Cluster = &svc.Cluster{Lab: l, Clients: []svc.Client{{Pod: e.Client, PIDs: []int{os.Getpid()}}}}
	return e
}

// Serve listens on BackendPort inside pod and answers each connection with
// the pod's name.
func Serve(tb testing.TB, pod *lab.Pod) {
	tb.Helper()
	var ln net.Listener
	err := lab.InNetNS(pod.NetNS, func() error {
		var err error
		ln, err = net.Listen("tcp4", fmt.Sprintf(":%d", BackendPort))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(pod.Name))
			c.Close()
		}
	}()
}

// Endpoints lists pods as endpoints on BackendPort.
func Endpoints(pods ...*lab.Pod) []svc.Endpoint {
	var eps []svc.Endpoint
	for _, p := range pods {
		eps = append(eps, svc.Endpoint{Pod: p.Name, Host: p.Host.Index, IP: p.IP, Port: BackendPort})
	}
	return eps
}

// Service is service n on port 80 in front of eps.
func Service(tb testing.TB, n int, eps []svc.Endpoint) svc.Service {
	vip, err := svc.VIP(n)
	if err != nil {
		tb.Fatal(err)
	}
	return svc.Service{Name: fmt.Sprintf("svc-%d", n), VIP: vip, Port: 80, Proto: "tcp", Endpoints: eps}
}

// Ask connects from pod to addr and returns what the backend said.
func Ask(pod *lab.Pod, addr netip.AddrPort) (string, error) {
	var c net.Conn
	err := lab.InNetNS(pod.NetNS, func() error {
		var err error
		c, err = net.DialTimeout("tcp4", addr.String(), 2*time.Second)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// ChiSquare is the statistic of counts against a uniform spread.
func ChiSquare(counts map[string]int, keys []string, n int) float64 {
	exp := float64(n) / float64(len(keys))
	var x float64
	for _, k := range keys {
		d := float64(counts[k]) - exp
		x += d * d / exp
	}
	return x
}

// Critical is the chi-square 0.1% critical value for 1..4 degrees of freedom.
var Critical = []float64{0, 10.83, 13.82, 16.27, 18.47}

// Spread is the standard test of one load balancer.
func Spread(t *testing.T, name string) {
	lb := NewLB(t, name)
	e := NewEnv(t)
	ctx := context.Background()
	s0 := Service(t, 0, Endpoints(e.Backends...))
	empty := Service(t, 1, nil)
	// other services around it, so lookups are not trivially the first
	var all []svc.Service
	for i := 2; i < 50; i++ {
		all = append(all, Service(t, i, Endpoints(e.Backends[i%3])))
	}
	all = append(all, s0, empty)
	t.Cleanup(func() { _ = lb.Teardown(ctx) })
	// a port clash is refused before anything is programmed
	clash := s0
	clash.Name = "clash"
	err := lb.Sync(ctx, e.Cluster, append(append([]svc.Service(nil), all...), clash))
	if err == nil || !strings.Contains(err.Error(), "port clash") {
		t.Fatalf("sync with a port clash: %v, want a port clash error", err)
	}
	assertNoLeftovers(t, e, nil, "")
	if err := lb.Sync(ctx, e.Cluster, all); err != nil {
		t.Fatal(err)
	}
	if err := lb.Sync(ctx, e.Cluster, all); err != nil { // declarative: repeat is harmless
		t.Fatalf("second sync: %v", err)
	}
	const n = 300
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		who, err := Ask(e.Client, s0.Addr())
		if err != nil {
			t.Fatalf("connection %d to %s: %v", i, s0.Addr(), err)
		}
		counts[who]++
	}
	var names []string
	for _, b := range e.Backends {
		names = append(names, b.Name)
		if counts[b.Name] == 0 {
			t.Errorf("backend %s never hit: %v", b.Name, counts)
		}
	}
	if x := ChiSquare(counts, names, n); x > Critical[len(names)-1] {
		t.Errorf("connections not spread evenly: %v (chi-square %.1f > %.1f)", counts, x, Critical[len(names)-1])
	}
	t.Logf("%s spread %d connections: %v", name, n, counts)

	// no endpoints: refused at once, as Kubernetes does
	t0 := time.Now()
	_, err = Ask(e.Client, empty.Addr())
	if err == nil {
		t.Errorf("a service without endpoints answered")
	} else if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.EPERM) {
		t.Errorf("a service without endpoints: %v, want connection refused", err)
	} else if time.Since(t0) > time.Second {
		t.Errorf("refusal took %v", time.Since(t0))
	}

	// a re-sync without s0 removes it: a service that is gone is not served
	if err := lb.Sync(ctx, e.Cluster, all[:len(all)-2]); err != nil {
		t.Fatal(err)
	}
	if who, err := Ask(e.Client, s0.Addr()); err == nil {
		t.Errorf("a removed service still answered (%s)", who)
	}
	if err := lb.Sync(ctx, e.Cluster, all); err != nil {
		t.Fatal(err)
	}
	if _, err := Ask(e.Client, s0.Addr()); err != nil {
		t.Errorf("service back after re-sync: %v", err)
	}
	CheckTeardown(t, e, lb)
}

// CheckTeardown tears lb down and fails t if anything of it is left.
func CheckTeardown(t *testing.T, e *Env, lb svc.LB) {
	t.Helper()
	ctx := context.Background()
	var ids []int
	if p, ok := lb.(interface{ ProgramIDs() []int }); ok {
		ids = p.ProgramIDs()
	}
	cg := ""
	if c, ok := lb.(interface{ CgroupDir() string }); ok {
		cg = c.CgroupDir()
	}
	before, _ := bpfmaps.ProcCgroup(os.Getpid())
	if err := lb.Teardown(ctx); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	if err := lb.Teardown(ctx); err != nil {
		t.Fatalf("second teardown: %v", err)
	}
	assertNoLeftovers(t, e, ids, cg)
	if cg != "" {
		if after, _ := bpfmaps.ProcCgroup(os.Getpid()); after == "" || strings.Contains(after, lab.Prefix) {
			t.Errorf("test process left in cgroup %q (was %q)", after, before)
		}
	}
}

// assertNoLeftovers fails t if any rule, attachment, conntrack entry of a
// service, BPF program of ids or cgroup of the lab exists.
func assertNoLeftovers(t *testing.T, e *Env, ids []int, cg string) {
	t.Helper()
	nss := []string{e.Client.NetNS}
	for _, h := range e.Lab.Hosts {
		nss = append(nss, h.NetNS)
	}
	for _, ns := range nss {
		out := run(t, ns, "iptables-save") + run(t, ns, "iptables-legacy-save")
		if strings.Contains(out, "KUBE-") {
			t.Errorf("%s: iptables rules left:\n%s", ns, out)
		}
		if out := run(t, ns, "nft", "list", "ruleset"); strings.Contains(out, "kube-proxy") || strings.Contains(out, "KUBE-") {
			t.Errorf("%s: nftables left:\n%s", ns, out)
		}
		if out := run(t, ns, "conntrack", "-L", "--orig-dst", svc.ServiceCIDR.Addr().String(), "--mask-dst", "255.240.0.0"); strings.TrimSpace(out) != "" {
			t.Errorf("%s: conntrack entries of services left:\n%s", ns, out)
		}
		if out := run(t, ns, "bpftool", "net", "show"); strings.Contains(out, "cnperf") {
			t.Errorf("%s: eBPF attachments left:\n%s", ns, out)
		}
	}
	for _, id := range ids {
		gone := false
		for try := 0; try < 100 && !gone; try++ {
			gone = exec.Command("bpftool", "prog", "show", "id", fmt.Sprint(id)).Run() != nil
			if !gone {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if !gone {
			t.Errorf("BPF program %d still loaded", id)
		}
	}
	if cg != "" {
		if _, err := os.Stat(cg); err == nil {
			t.Errorf("cgroup %s left", cg)
		}
	}
	if mount, err := bpfmaps.Cgroup2Mount(); err == nil {
		left, _ := filepath.Glob(filepath.Join(mount, lab.Prefix+e.Lab.ID+"-*"))
		if len(left) > 0 {
			t.Errorf("cgroups left: %v", left)
		}
	}
}

var runMu sync.Mutex

func run(t *testing.T, ns string, argv ...string) string {
	t.Helper()
	runMu.Lock()
	defer runMu.Unlock()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).Output()
	if err != nil && !strings.Contains(err.Error(), "exit status") {
		t.Logf("%s: %v", strings.Join(argv, " "), err)
	}
	return string(out)
}
