package tund

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/ctrlplane/etcd"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		bad  string
		chk  func(Config) bool
	}{
		{"l3 static", []string{"--dev", "flannel0", "--listen", "10.100.0.1:8285", "--route", "10.244.2.0/24=10.100.0.2:8285", "--state", "/run/cnperf/x"}, "",
			func(c Config) bool {
				return !c.L2 && c.Routes[netip.MustParsePrefix("10.244.2.0/24")] == netip.MustParseAddrPort("10.100.0.2:8285")
			}},
		{"l2 peers", []string{"--l2", "--dev", "weavetap", "--listen", "10.100.0.1:6784", "--peer", "10.100.0.2:6784", "--sockbuf", "4194304"}, "",
			func(c Config) bool { return c.L2 && len(c.Peers) == 1 && c.SockBuf == 4194304 }},
		{"etcd", []string{"--dev", "f", "--listen", "1.2.3.4:1", "--etcd", "http://x:2379", "--prefix", "/p/", "--peer-port", "8285"}, "",
			func(c Config) bool { return c.Etcd == "http://x:2379" && c.PeerPort == 8285 }},
		{"etcd without prefix", []string{"--dev", "f", "--listen", "1.2.3.4:1", "--etcd", "http://x:2379"}, "needs --prefix", nil},
		{"no dev", []string{"--listen", "1.2.3.4:1"}, "needs --dev", nil},
		{"bad route", []string{"--dev", "f", "--listen", "1.2.3.4:1", "--route", "10.0.0.0/24"}, "SUBNET=IP:PORT", nil},
		{"unknown", []string{"--dev", "f", "--frob", "1"}, "unknown flag", nil},
		{"missing value", []string{"--dev"}, "needs a value", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseArgs(c.args)
			if c.bad != "" {
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.bad)) {
					t.Fatalf("err = %v, want %q", err, c.bad)
				}
				return
			}
			if err != nil || !c.chk(cfg) {
				t.Fatalf("cfg %+v err %v", cfg, err)
			}
		})
	}
}

func TestLeases(t *testing.T) {
	d, err := newDaemon(Config{Listen: netip.MustParseAddrPort("10.100.0.1:8285"), PeerPort: 8285})
	if err != nil {
		t.Fatal(err)
	}
	d.setLeases([]etcd.KV{
		{Key: "/coreos.com/network/subnets/10.244.1.0-24", Value: `{"PublicIP":"10.100.0.1"}`}, // our own
		{Key: "/coreos.com/network/subnets/10.244.2.0-24", Value: `{"PublicIP":"10.100.0.2"}`},
		{Key: "/coreos.com/network/subnets/10.244.3.0-24", Value: `not json`},
		{Key: "/coreos.com/network/subnets/garbage", Value: `{"PublicIP":"10.100.0.9"}`},
	})
	cases := map[string]string{"10.244.2.7": "10.100.0.2:8285", "10.244.1.7": "", "10.244.3.7": "", "10.9.9.9": ""}
	for dst, want := range cases {
		got, ok := d.lookup(netip.MustParseAddr(dst))
		if (want == "") == ok || (ok && got.String() != want) {
			t.Errorf("lookup %s = %v %v, want %q", dst, got, ok, want)
		}
	}
}

// pair is a daemon serving over one end of a datagram socket pair standing
// in for its TUN/TAP device; the test plays the kernel on the other end.
type pair struct {
	d      *Daemon
	kernel int
	done   chan error
}

func startPair(t *testing.T, ctx context.Context, cfg Config) *pair {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	cfg.Log = &readyLog{ready: ready}
	d, err := newDaemon(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{d: d, kernel: fds[1], done: make(chan error, 1)}
	go func() { p.done <- d.serve(ctx, fds[0]) }()
	select {
	case <-ready:
	case err := <-p.done:
		t.Fatalf("daemon ended: %v", err)
	}
	t.Cleanup(func() {
		_ = unix.Shutdown(fds[0], unix.SHUT_RDWR)
		<-p.done
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return p
}

// readyLog closes ready at the daemon's first log line ("ready ...").
type readyLog struct {
	ready chan struct{}
	once  bool
}

func (r *readyLog) Write(b []byte) (int, error) {
	if !r.once {
		r.once = true
		close(r.ready)
	}
	return len(b), nil
}

func (p *pair) recv(t *testing.T) []byte {
	t.Helper()
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(p.kernel, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf := make([]byte, 70000)
	n, err := unix.Read(p.kernel, buf)
	if err != nil {
		t.Fatalf("nothing delivered: %v", err)
	}
	return buf[:n]
}

func freePorts(t *testing.T, n int) []netip.AddrPort {
	var out []netip.AddrPort
	for i := 0; i < n; i++ {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.LocalAddr().(*net.UDPAddr).AddrPort())
		c.Close()
	}
	return out
}

func ipPacket(src, dst string, payload string) []byte {
	p := make([]byte, 20+len(payload))
	p[0] = 0x45
	copy(p[12:16], netip.MustParseAddr(src).AsSlice())
	copy(p[16:20], netip.MustParseAddr(dst).AsSlice())
	copy(p[20:], payload)
	return p
}

// TestL3 routes a packet from host 1's "kernel" through both daemons to
// host 2's, in the clear and sealed.
func TestL3(t *testing.T) {
	for _, pw := range []string{"", "secret"} {
		t.Run("password="+pw, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ports := freePorts(t, 2)
			a := startPair(t, ctx, Config{Listen: ports[0], Password: pw, Routes: map[netip.Prefix]netip.AddrPort{netip.MustParsePrefix("10.244.2.0/24"): ports[1]}})
			b := startPair(t, ctx, Config{Listen: ports[1], Password: pw, Routes: map[netip.Prefix]netip.AddrPort{netip.MustParsePrefix("10.244.1.0/24"): ports[0]}})
			pkt := ipPacket("10.244.1.2", "10.244.2.2", "hello over udp")
			if _, err := unix.Write(a.kernel, pkt); err != nil {
				t.Fatal(err)
			}
			if got := b.recv(t); !bytes.Equal(got, pkt) {
				t.Fatalf("delivered % x, want % x", got, pkt)
			}
			// no route: dropped, counted
			_, _ = unix.Write(a.kernel, ipPacket("10.244.1.2", "10.9.9.9", "x"))
			deadline := time.Now().Add(2 * time.Second)
			for a.d.Drops.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if a.d.Drops.Load() != 1 {
				t.Fatalf("drops = %d, want 1", a.d.Drops.Load())
			}
		})
	}
}

// TestL2 floods an unknown frame, learns the sender, then unicasts; and a
// daemon under another password drops what it cannot open.
func TestL2(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ports := freePorts(t, 3)
	a := startPair(t, ctx, Config{L2: true, Listen: ports[0], Password: "k", Peers: []netip.AddrPort{ports[1], ports[2]}})
	b := startPair(t, ctx, Config{L2: true, Listen: ports[1], Password: "k", Peers: []netip.AddrPort{ports[0], ports[2]}})
	c := startPair(t, ctx, Config{L2: true, Listen: ports[2], Password: "other", Peers: []netip.AddrPort{ports[0], ports[1]}})
	macA := []byte{2, 0, 0, 0, 0, 0xa}
	macB := []byte{2, 0, 0, 0, 0, 0xb}
	frame := func(dst, src []byte, body string) []byte {
		return append(append(append([]byte{}, dst...), src...), append([]byte{0x08, 0x00}, body...)...)
	}
	bcast := frame([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, macA, "who has")
	_, _ = unix.Write(a.kernel, bcast)
	if got := b.recv(t); !bytes.Equal(got, bcast) {
		t.Fatalf("b got % x", got)
	}
	deadline := time.Now().Add(2 * time.Second)
	for c.d.Drops.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c.d.Drops.Load() == 0 || c.d.TunOut.Load() != 0 {
		t.Fatalf("c (wrong password) drops=%d delivered=%d, want the frame dropped", c.d.Drops.Load(), c.d.TunOut.Load())
	}
	// b answers a: b has learnt macA is behind a, so it unicasts
	reply := frame(macA, macB, "is at")
	before := b.d.UDPOut.Load()
	_, _ = unix.Write(b.kernel, reply)
	if got := a.recv(t); !bytes.Equal(got, reply) {
		t.Fatalf("a got % x", got)
	}
	// b counts a datagram after its send returns, which may be after a has
	// it: wait for the count, then give a flood the time to show
	deadline = time.Now().Add(2 * time.Second)
	for b.d.UDPOut.Load() == before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if sent := b.d.UDPOut.Load() - before; sent != 1 {
		t.Fatalf("b sent %d datagrams for a known MAC, want 1 (no flooding)", sent)
	}
}

// BenchmarkSeal is the per-packet cost of Weave-style encryption.
func BenchmarkSeal(b *testing.B) {
	d, _ := newDaemon(Config{Password: "k"})
	buf := make([]byte, NonceSize+1500+TagSize)
	nonce := buf[:NonceSize]
	b.SetBytes(1400)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.aead.Seal(buf[NonceSize:NonceSize], nonce, buf[NonceSize:NonceSize+1400], nil)
	}
}
