package ebpfsock

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/svc"

	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestSpreadRoot(t *testing.T) { svctest.Spread(t, (&LB{}).Name()) }

// TestUDPRoot: unconnected UDP is balanced per datagram by sendmsg4 and the
// reply is shown as coming from the service by recvmsg4; connected UDP by
// connect4.
func TestUDPRoot(t *testing.T) {
	lb := svctest.NewLB(t, (&LB{}).Name())
	e := svctest.NewEnv(t)
	b := e.Backends[0]
	var pc net.PacketConn
	if err := lab.InNetNS(b.NetNS, func() error {
		var err error
		pc, err = net.ListenPacket("udp4", ":5353")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	vip, _ := svc.VIP(0)
	s := svc.Service{Name: "dns", VIP: vip, Port: 53, Proto: "udp", Endpoints: []svc.Endpoint{{Pod: b.Name, IP: b.IP, Port: 5353}}}
	ctx := context.Background()
	t.Cleanup(func() { _ = lb.Teardown(ctx) })
	if err := lb.Sync(ctx, e.Cluster, []svc.Service{s}); err != nil {
		t.Fatal(err)
	}
	var uc net.PacketConn
	var cc net.Conn
	if err := lab.InNetNS(e.Client.NetNS, func() error {
		var err error
		if uc, err = net.ListenPacket("udp4", ":0"); err != nil {
			return err
		}
		cc, err = net.Dial("udp4", s.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	defer cc.Close()
	if _, err := uc.WriteTo([]byte("ping"), net.UDPAddrFromAddrPort(s.Addr())); err != nil {
		t.Fatal(err)
	}
	_ = uc.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, from, err := uc.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("unconnected UDP through the service: %q, %v", buf[:n], err)
	}
	if from.String() != s.Addr().String() {
		t.Errorf("reply came from %s, want the service %s (recvmsg4)", from, s.Addr())
	}
	if _, err := cc.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	_ = cc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := cc.Read(buf); err != nil || string(buf[:n]) != "pong" {
		t.Fatalf("connected UDP through the service: %q, %v", buf[:n], err)
	}
	svctest.CheckTeardown(t, e, lb)
}

// TestCleanCgroupRoot: what a killed run left (an empty cgroup directory)
// is removed by `cnperf clean`'s hook.
func TestCleanCgroupRoot(t *testing.T) {
	svctest.NeedRoot(t)
	mount, err := lab.EnsureCgroup2()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lab.ReleaseCgroup2() })
	id := lab.NewID()
	dir := filepath.Join(mount, CgroupName(id))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	if err := CleanCgroup(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s still there", dir)
	}
	if err := CleanCgroup(id); err != nil {
		t.Errorf("second clean: %v", err)
	}
}
