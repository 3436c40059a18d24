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

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
)

// recordDP stands in for the kernel: it records what would be loaded, as
// comment lines among the lab's commands.
type recordDP struct{ rec *lab.Recorder }

func (r *recordDP) note(format string, a ...any) {
	_, _ = r.rec.Run(context.Background(), []string{"# bpf " + fmt.Sprintf(format, a...)})
}

func (r *recordDP) setupHost(_ context.Context, l *lab.Lab, h *lab.Host) error {
	r.note("%s: load datapath, attach from_netdev tcx ingress %s, config pod_net %s", h.NetNS, h.Dev, l.Cfg.PodNet)
	return nil
}

func (r *recordDP) addEndpoint(_ context.Context, _ *lab.Lab, h *lab.Host, ep Endpoint) error {
	r.note("%s: endpoint %s -> %s mac %s host_mac %s, attach from_container tcx ingress %s", h.NetNS, ep.IP, ep.HostVeth, ep.MAC, ep.HostMAC, ep.HostVeth)
	return nil
}

func TestCommands(t *testing.T) {
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "x", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	m, ctx := Mode{dp: &recordDP{rec}}, context.Background()
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddPod(ctx, l, l.Hosts[1], "s2"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "commands", rec.Text())
}

// TestGolden records a whole ebpf lab, the BPF steps as comments. It
// changes with the datapath (what is loaded and attached where).
func TestGolden(t *testing.T) {
	rec := &lab.Recorder{}
	labtest.GoldenMode(t, Mode{dp: &recordDP{rec}}, nil, rec, "ebpf")
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
