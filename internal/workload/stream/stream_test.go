package stream

import (
	"net/netip"
	"testing"

	"github.com/cnperf/cnperf/internal/workload/sock"
)

// TestStreamSocketsUseNagle: both ends of a tcp_stream connection leave
// Nagle on, as netperf's TCP_STREAM, iperf and nuttcp do, while the
// round-trip sockets sock.Dial and Accept make keep TCP_NODELAY.
func TestStreamSocketsUseNagle(t *testing.T) {
	ln, err := sock.Listen("tcp", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port, err := ln.Port()
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	for _, c := range []struct {
		name   string
		dial   func(netip.AddrPort) (*sock.FD, error)
		accept func(*sock.FD) (*sock.FD, error)
		want   bool
	}{
		{"round trip", func(a netip.AddrPort) (*sock.FD, error) { return sock.Dial("tcp", a) }, (*sock.FD).Accept, true},
		{"stream", dialStream, acceptStream, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := c.dial(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			sv, err := c.accept(ln)
			if err != nil {
				t.Fatal(err)
			}
			defer sv.Close()
			for side, fd := range map[string]*sock.FD{"client": cl, "server": sv} {
				on, err := fd.NoDelay()
				if err != nil {
					t.Fatal(err)
				}
				if on != c.want {
					t.Errorf("%s: TCP_NODELAY %v, want %v", side, on, c.want)
				}
			}
		})
	}
}
