package stream

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
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

// TestTCPStreamBothWays runs tcp_stream on loopback up and down: the
// receiver counts every byte the sender wrote (the raw loops lose nothing
// to their socket timeouts), and cancelling a run stops both halves within
// a few socket timeouts even when the duration is far off.
func TestTCPStreamBothWays(t *testing.T) {
	cases := []struct {
		dir    string
		d      time.Duration
		cancel time.Duration // 0: run to the end
	}{
		{"up", 300 * time.Millisecond, 0},
		{"down", 300 * time.Millisecond, 0},
		{"up", time.Hour, 200 * time.Millisecond},
		{"down", time.Hour, 200 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/cancel=%v", c.dir, c.cancel), func(t *testing.T) {
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			p := workload.Params{Port: port, MessageSize: 65536, Duration: c.d, Direction: c.dir}
			sctx, stopServer := context.WithCancel(context.Background())
			defer stopServer()
			ready := make(chan struct{})
			type rep struct {
				r   workload.Report
				err error
			}
			srv := make(chan rep, 1)
			go func() {
				r, err := TCP{}.Serve(sctx, p, func() { close(ready) })
				srv <- rep{r, err}
			}()
			<-ready
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			start := time.Now()
			cr, cerr := TCP{}.Run(ctx, p, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
			took := time.Since(start)
			stopServer()
			s := <-srv
			if c.cancel > 0 {
				if took > c.cancel+time.Second {
					t.Fatalf("cancelled after %v, returned after %v", c.cancel, took)
				}
				return
			}
			if cerr != nil || s.err != nil {
				t.Fatalf("client %v, server %v", cerr, s.err)
			}
			tx, rx := cr, s.r
			if c.dir == "down" {
				tx, rx = s.r, cr
			}
			if tx.Bytes == 0 || rx.Bytes != tx.Bytes {
				t.Fatalf("sent %d bytes, received %d", tx.Bytes, rx.Bytes)
			}
			if rx.Seconds <= 0 {
				t.Fatalf("receiver's window %v s", rx.Seconds)
			}
		})
	}
}
