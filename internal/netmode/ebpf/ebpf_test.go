package ebpf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	cebpf "github.com/cilium/ebpf"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/netmode"
)

// recordDP stands in for the kernel: it records what would be loaded, as
// comment lines among the lab's commands.
type recordDP struct{ rec *lab.Recorder }

func (r *recordDP) note(format string, a ...any) {
	_, _ = r.rec.Run(context.Background(), []string{"# bpf " + fmt.Sprintf(format, a...)})
}

func (r *recordDP) setupHost(_ context.Context, l *lab.Lab, h *lab.Host) error {
	flags, err := configFlags(&l.Cfg)
	if err != nil {
		return err
	}
	r.note("%s: load datapath, attach from_netdev tcx ingress %s, config pod_net %s flags %d (local=%s)", h.NetNS, h.Dev, l.Cfg.PodNet, flags, l.Cfg.ModeOpt("local", LocalPeer))
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

// TestGoldenLocalVeth: with local=veth only the datapath's flags differ.
func TestGoldenLocalVeth(t *testing.T) {
	rec := &lab.Recorder{}
	labtest.GoldenMode(t, Mode{dp: &recordDP{rec}}, map[string]string{"local": LocalVeth}, rec, "ebpf-local-veth")
}

func TestLocalOption(t *testing.T) {
	for _, tc := range []struct {
		v       string
		flags   uint32
		wantErr bool
	}{{"", 0, false}, {LocalPeer, 0, false}, {LocalVeth, flagLocalBacklog, false}, {"bridge", 0, true}} {
		c := lab.Config{ModeOptions: map[string]string{}}
		if tc.v != "" {
			c.ModeOptions["local"] = tc.v
		}
		f, err := configFlags(&c)
		if (err != nil) != tc.wantErr || f != tc.flags {
			t.Errorf("local=%q: flags %d, err %v; want %d, error %v", tc.v, f, err, tc.flags, tc.wantErr)
		}
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
	labrun.Run(t, "ebpf", labrun.Options{})
}

// TestDatapath checks that pod traffic really takes the BPF path (the
// programs' counters move), that same-host delivery goes the way option
// local says (through the destination's host veth, or past it with
// redirect_peer) and that teardown unloads every program.
func TestDatapath(t *testing.T) {
	labtest.NeedRoot(t)
	if err := netmode.Check(Mode{}); err != nil {
		t.Skip(err)
	}
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	for _, local := range []string{LocalPeer, LocalVeth} {
		t.Run(local, func(t *testing.T) { testDatapath(t, local) })
	}
}

func testDatapath(t *testing.T, local string) {
	l, err := lab.New(lab.Config{ID: "t" + lab.NewID(), ModeOptions: map[string]string{"local": local}})
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
	txBefore := txPackets(t, l.Hosts[0].NetNS, HostVeth("s1"))
	for _, to := range []*lab.Pod{s1, s2} {
		if err := exchange(c1, to, 20); err != nil {
			t.Fatalf("%s -> %s: %v", c1.Name, to.Name, err)
		}
	}
	// c1 -> s1 sends at least 20 messages; through the veth they are
	// transmitted by lxcs1, with redirect_peer lxcs1 never sees them (a few
	// of the kernel's own IPv6 packets may leave it meanwhile)
	tx := txPackets(t, l.Hosts[0].NetNS, HostVeth("s1")) - txBefore
	if local == LocalVeth && tx < 20 {
		t.Errorf("local=veth: %s transmitted %d packets, want >= 20", HostVeth("s1"), tx)
	}
	if local == LocalPeer && tx > 5 {
		t.Errorf("local=peer: %s transmitted %d packets, want none of the connection's", HostVeth("s1"), tx)
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

// txPackets is the transmit packet counter of dev in namespace ns.
func txPackets(t *testing.T, ns, dev string) uint64 {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev).Output()
	if err != nil {
		t.Fatalf("ip -n %s -s link show %s: %v", ns, dev, err)
	}
	var links []struct {
		Stats struct {
			TX struct {
				Packets uint64 `json:"packets"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -s link show %s: %v in %s", dev, err, out)
	}
	return links[0].Stats.TX.Packets
}

// exchange opens a TCP connection from pod from to pod to (sockets made
// inside their namespaces) and bounces n messages.
func exchange(from, to *lab.Pod, n int) error {
	var ln net.Listener
	if err := lab.InNetNS(to.NetNS, func() (err error) {
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
	if err := lab.InNetNS(from.NetNS, func() (err error) {
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
