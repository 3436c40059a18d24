package agent_test

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestControlChannels drives a server and a client agent over both control
// transports: Unix sockets (the lab) and TCP (Kubernetes pods).
func TestControlChannels(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, srv, cli string }{
		{"unix", "unix:" + filepath.Join(dir, "s.sock"), "unix:" + filepath.Join(dir, "c.sock")},
		{"tcp", "tcp:127.0.0.1:" + itoa(freePort(t)), "tcp:127.0.0.1:" + itoa(freePort(t))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, a := range []string{tc.srv, tc.cli} {
				go func() { _ = agent.Serve(ctx, a, 0) }()
			}
			sc, _ := agent.NewClient(tc.srv)
			cc, _ := agent.NewClient(tc.cli)
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			defer wcancel()
			for _, c := range []*agent.Client{sc, cc} {
				if _, err := c.Wait(wctx); err != nil {
					t.Fatal(err)
				}
			}
			port := freePort(t)
			p := workload.Params{Duration: 200 * time.Millisecond, MessageSize: 16, Port: port}
			srv, err := sc.Serve(ctx, "tcp_rr", p)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := cc.Run(ctx, "tcp_rr", p, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			if rep.Transactions == 0 || rep.Histogram == "" || rep.CPUSeconds <= 0 {
				t.Fatalf("report %+v: want transactions, a histogram and CPU time", rep)
			}
		})
	}
}

func TestErrorsCrossTheChannel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := "unix:" + filepath.Join(t.TempDir(), "a.sock")
	go func() { _ = agent.Serve(ctx, addr, 0) }()
	c, _ := agent.NewClient(addr)
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := c.Serve(ctx, "no_such_workload", workload.Params{})
	if err == nil || !strings.Contains(err.Error(), "unknown workload") {
		t.Fatalf("err %v, want unknown workload", err)
	}
	// nothing listens on port 1: the client half must fail, not hang
	p := workload.Params{Duration: 100 * time.Millisecond, MessageSize: 16}
	_, err = c.Run(ctx, "tcp_rr", p, netip.MustParseAddrPort("127.0.0.1:1"))
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err %v, want connection refused", err)
	}
}

func TestParseAddr(t *testing.T) {
	for _, bad := range []string{"", "unix:", "udp:1.2.3.4:5", "/tmp/x.sock"} {
		if _, _, err := agent.ParseAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestStats(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := "unix:" + filepath.Join(t.TempDir(), "a.sock")
	go func() { _ = agent.Serve(ctx, addr, 0) }()
	c, _ := agent.NewClient(addr)
	if _, err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// this test process is the agent: a few MB, a listener and the test's
	// files open, the serving goroutines
	if st.RSSBytes < 1<<20 || st.FDs < 3 || st.Goroutines < 2 {
		t.Errorf("stats %+v: want some memory, descriptors and goroutines", st)
	}
	// ten more descriptors are seen; a request's own connection may come
	// and go beside them, so the count is bounded, not exact
	for range 10 {
		f, err := os.Open("/dev/null")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	st2, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st2.FDs < st.FDs+10 || st2.FDs > st.FDs+13 {
		t.Errorf("descriptors %d after opening ten more, want %d to %d", st2.FDs, st.FDs+10, st.FDs+13)
	}
}
