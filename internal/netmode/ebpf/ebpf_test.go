package ebpf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	cebpf "github.com/cilium/ebpf"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
)

// recordDP stands in for the kernel: it records what would be loaded.
type recordDP struct{ lines []string }

func (r *recordDP) setupHost(_ context.Context, l *lab.Lab, h *lab.Host) error {
	r.lines = append(r.lines, fmt.Sprintf("bpf %s: load datapath, attach from_netdev tcx ingress %s, config pod_net %s", h.NetNS, h.Dev, l.Cfg.PodNet))
	return nil
}

func (r *recordDP) addEndpoint(_ context.Context, _ *lab.Lab, h *lab.Host, ep Endpoint) error {
	r.lines = append(r.lines, fmt.Sprintf("bpf %s: endpoint %s -> %s mac %s host_mac %s, attach from_container tcx ingress %s", h.NetNS, ep.IP, ep.HostVeth, ep.MAC, ep.HostMAC, ep.HostVeth))
	return nil
}

func TestCommands(t *testing.T) {
	rec, dp := &lab.Recorder{}, &recordDP{}
	l, err := lab.New(lab.Config{ID: "x", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	m, ctx := Mode{dp: dp}, context.Background()
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddPod(ctx, l, l.Hosts[1], "s2"); err != nil {
		t.Fatal(err)
	}
	want := `ip -n cnperf-x-h1 route add 10.244.2.0/24 via 10.100.0.2 dev eth0
ip -n cnperf-x-h2 route add 10.244.1.0/24 via 10.100.0.1 dev eth0
ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add lxcs2 address 0e:58:0a:f4:02:02 mtu 1500 type veth peer name eth0 address 0a:58:0a:f4:02:02 mtu 1500 netns cnperf-x-h2-s2
ip -n cnperf-x-h2 link set lxcs2 up
ip -n cnperf-x-h2 route add 10.244.2.2/32 dev lxcs2 scope link
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/32 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
ip -n cnperf-x-h2-s2 neigh add 10.244.2.1 lladdr 0e:58:0a:f4:02:02 dev eth0 nud permanent
ip -n cnperf-x-h2-s2 route add default via 10.244.2.1 dev eth0 onlink
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
	wantBPF := `bpf cnperf-x-h1: load datapath, attach from_netdev tcx ingress eth0, config pod_net 10.244.0.0/16
bpf cnperf-x-h2: load datapath, attach from_netdev tcx ingress eth0, config pod_net 10.244.0.0/16
bpf cnperf-x-h2: endpoint 10.244.2.2 -> lxcs2 mac 0a:58:0a:f4:02:02 host_mac 0e:58:0a:f4:02:02, attach from_container tcx ingress lxcs2
`
	if got := strings.Join(dp.lines, "\n") + "\n"; got != wantBPF {
		t.Errorf("bpf:\n%s\nwant:\n%s", got, wantBPF)
	}
}

func TestByteOrder(t *testing.T) {
	l, _ := lab.New(lab.Config{ID: "x", NoStateDirs: true})
	ip := l.Hosts[0].PodGateway()
	// the program compares daddr & pod_mask with pod_net, all as read from
	// the packet: the key's bytes must be the address's bytes
	if got, want := be32(ip)&mask(16), be32(l.Cfg.PodNet.Addr()); got != want {
		t.Errorf("%s masked %#x, want pod_net %#x", ip, got, want)
	}
	other := be32(l.Hosts[0].IP)
	if other&mask(16) == be32(l.Cfg.PodNet.Addr()) {
		t.Errorf("underlay %s matched the pod network", l.Hosts[0].IP)
	}
}

func TestEndToEnd(t *testing.T) {
	labtest.Run(t, "ebpf", labtest.Options{})
}

// TestDatapath checks that pod traffic really takes the BPF path (the
// programs' counters move) and that teardown unloads every program.
func TestDatapath(t *testing.T) {
	labtest.NeedRoot(t)
	if err := netmode.Check(Mode{}); err != nil {
		t.Skip(err)
	}
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	l, err := lab.New(lab.Config{ID: "t" + lab.NewID()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Teardown() })
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	m := New()
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	c1, err := m.AddPod(ctx, l, l.Hosts[0], "c1")
	if err != nil {
		t.Fatal(err)
	}
	s1, err := m.AddPod(ctx, l, l.Hosts[0], "s1")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := m.AddPod(ctx, l, l.Hosts[1], "s2")
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []*lab.Pod{s1, s2} {
		if err := exchange(c1, to, 3); err != nil {
			t.Fatalf("%s -> %s: %v", c1.Name, to.Name, err)
		}
	}
	local1, remote1, _, err := m.Stats(l, l.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	local2, remote2, _, err := m.Stats(l, l.Hosts[1])
	if err != nil {
		t.Fatal(err)
	}
	// h1: c1<->s1 both ways locally, c1->s2 out, s2->c1 in from the NIC
	if local1 < 9 || remote1 < 3 || local2 < 3 || remote2 < 3 {
		t.Errorf("BPF counters h1 local %d remote %d, h2 local %d remote %d; want >= 9, 3, 3, 3", local1, remote1, local2, remote2)
	}
	var ids []cebpf.ProgramID
	for _, h := range l.Hosts {
		for _, lk := range m.dp.(*kernelDP).host(l, h).links {
			info, err := lk.Info()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, info.Program)
		}
	}
	if len(ids) != 5 {
		t.Errorf("%d programs attached, want 5 (2 NICs, 3 pods)", len(ids))
	}
	if err := l.Teardown(); err != nil {
		t.Fatal(err)
	}
	labtest.AssertClean(t, l.ID)
	for _, id := range ids {
		if p, err := cebpf.NewProgramFromID(id); err == nil {
			p.Close()
			t.Errorf("program %d still loaded after teardown", id)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("program %d: %v", id, err)
		}
	}
	if m.dp.(*kernelDP).host(l, l.Hosts[0]) != nil {
		t.Error("datapath state kept after teardown")
	}
	// nothing pinned: the host's bpffs holds nothing of ours
	ents, _ := os.ReadDir("/sys/fs/bpf")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "cnperf") || strings.Contains(e.Name(), l.ID) {
			t.Errorf("/sys/fs/bpf/%s left behind", e.Name())
		}
	}
}

// exchange opens a TCP connection from pod from to pod to (sockets made
// inside their namespaces) and bounces n messages.
func exchange(from, to *lab.Pod, n int) error {
	var ln net.Listener
	if err := inNS(to.NetNS, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(to.IP.String(), "7000"))
		return err
	}); err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	var c net.Conn
	if err := inNS(from.NetNS, func() (err error) {
		c, err = net.DialTimeout("tcp", net.JoinHostPort(to.IP.String(), "7000"), 2*time.Second)
		return err
	}); err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 5)
	for i := 0; i < n; i++ {
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
	}
	return nil
}
